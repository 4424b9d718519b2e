"""Train a PPO agent with RLlib on Ray: ``python -m umbrella_env.rllib_train`` (the ``ray`` extra).

    python -m umbrella_env.rllib_train --players 2 --timesteps 1e6 --out runs/rllib-2p
    python -m umbrella_env.rllib_train --players 2 --opponents greedy heuristic   # frozen opponents
    python -m umbrella_env.rllib_train --players 1 --iterations 50                # solo
    python -m umbrella_env.rllib_train --address HEAD:6379 --num-env-runners 16   # on a cluster

* **Algorithm**: PPO on RLlib's new API stack (RLModule, Learner, EnvRunner), the policy
  :class:`agents.rllib_module.MaskedPPOModule`, which masks illegal actions inside the
  module, before sampling and in the loss; the env adapters count the illegal actions they
  receive, and every progress line shows the count (it stays 0).
* **Environments** (:mod:`umbrella_env.rllib_env`): 2-4 players, a turn-based
  ``MultiAgentEnv`` whose every seat is played by **one shared policy** (self-play); with
  ``--opponents A B``, one learner against frozen agents of our pool (``random``,
  ``greedy``, ``heuristic``, a checkpoint), one drawn per game.  Losers are paid -1 in
  their last transition; ``--shaping`` adds the change of the score edge.  Solo: the
  Gymnasium solo env (return = final score).
* **Where it runs**: ``--num-env-runners N`` Ray actors play the games (0: this process
  does), the learner runs in this process.  Without ``--address`` a local Ray is started
  with this machine's CPUs and stopped at the end; ``--address HOST:PORT`` joins an
  existing cluster (docs/scaling.md).
* **Behaviour cloning** (``--pretrain heuristic``, as ``train.py``): the teacher plays
  ``--pretrain-games`` games (:func:`umbrella_env.training.imitation.collect`), the
  learner's RLModule is fitted to its decisions (policy) and returns (value), the weights
  go to every env runner, then PPO continues.
* **Evaluation**: every ``--eval-every`` env steps the checkpoint ``OUT/last`` is written
  and played, as the agent ``rllib:OUT/last`` (:mod:`agents.rllib_agent`), through the
  match runner (:func:`umbrella_env.match.play_game`) against each ``--eval-opponent``
  (default heuristic; solo: alone), ``--eval-games`` games each on the same seeded deals
  every time, the learner's seat rotating; the best is copied to ``OUT/best``.
* **Output** in ``--out``: ``last/`` and ``best/`` (RLlib checkpoints + ``umbrella.json``,
  playable by ``evaluate.py --agents rllib:OUT/best``), ``progress.jsonl`` (one line per
  iteration, with the update's losses, entropy and KL and each seat's mean return, and one
  per evaluation), ``summary.json``.  Nothing is left in ``~/ray_results``
  (:func:`~umbrella_env.ray_cluster.stop_algorithm`).  ``--checkpoint-every`` writes
  ``last/`` between the evaluations too.
* **Resume** (``--resume OUT/last``): RLlib restores the checkpoint into the algorithm
  built from the command line (with the checkpoint's ``--net`` and ``--features``); the
  run's ``progress.jsonl`` up to the checkpoint and its ``best/`` carry over, and
  ``--timesteps`` / ``--iterations`` are the run's totals (:func:`read_resume`).
* **Ctrl-C** in the training loop or an evaluation: a last evaluation (a second Ctrl-C
  skips it), then ``summary.json`` marked ``interrupted``, exit status 130.  Before the
  training loop (Ray starting, the build, the cloning): one line, exit status 130, nothing
  written.

Bad input exits with status 2 and a message, before Ray starts or anything is written.
"""

from __future__ import annotations

import argparse
import logging
import math
import shutil
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.checkpoint import base_metadata, check_configuration, nonfinite_weights
from agents.checks import invalid_outputs
from agents.rllib_agent import METADATA, QUIET_LOGGERS, RLlibAgent, read_metadata
from umbrella_env.cli_args import (
    MAX_TIMESTEPS,
    HelpFormatter,
    ShortUsageParser,
    command,
    command_name,
    first_problem,
    int_problem,
    path_option,
    real_problem,
    seed_option,
    set_torch,
    sigterm_as_interrupt,
)
from umbrella_env.core import engine as E
from umbrella_env.core.config import MAX_TURNS_LIMIT, GameConfig
from umbrella_env.core.jsonio import parse_json
from umbrella_env.core.observation import observe
from umbrella_env.match import AgentError, AgentSpecError, absolute_spec, build_agent, play_rotation
from umbrella_env.paths import (
    default_run_dir,
    json_text,
    output_dir_problem,
    remove_entry,
    sibling_tmp,
    write_atomically,
)
from umbrella_env.ray_cluster import (
    RayUnavailable,
    cluster_cpus,
    import_ray,
    ray_session,
    stop_algorithm,
    worker_error,
)
from umbrella_env.training.divergence import (
    CLONING,
    TrainingDiverged,
    check_losses,
    check_outputs,
    check_weights,
    diverged_message,
    weights_diverged,
)
from umbrella_env.training.options import (
    CLONING_OPTIONS,
    EVAL_SEED,
    GAMMA,
    MAX_LEARNING_RATE,
    MAX_SHAPING,
    TRAIN_MAX_TURNS,
    UNRECORDED,
    adopt_cloning,
    adopt_recorded,
    check_game,
    check_layers,
    check_recorded_opponents,
    cloning_record,
    given_among,
    given_options,
    resume_seed,
    selection_metric,
    shown_option,
    win_rate_text,
)

PROG = "python -m umbrella_env.rllib_train"
#: The RLModule id: the shared policy of every seat (2-4 players), RLlib's default (solo).
SHARED, SOLO_MODULE = "shared", "default_policy"
#: Options of 2-4 player runs only (refused in solo, which would ignore them).
MULTIPLAYER_ONLY = {"eval_opponent", "shaping"}
#: Options of the behaviour cloning only (refused without --pretrain, which would ignore them).
PRETRAIN_ONLY = {"pretrain_games", "pretrain_epochs", "pretrain_lr", "pretrain_batch", "workers"}


#: What a run writes in --out; a folder that holds any of them is refused.
RUN_FILES = ("progress.jsonl", "summary.json", "best", "last")
#: The largest --seed: RLlib seeds env runner ``w`` with ``seed + w``, and NumPy takes seeds below 2**32.
MAX_SEED = 2**31 - 1


def build_parser() -> argparse.ArgumentParser:
    p = ShortUsageParser(prog=PROG, description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("--players", type=int, default=2, help="1 (solo) to 4 (default 2)")
    p.add_argument("--level", type=int, default=1, help="plate level 1-4 (default 1)")
    p.add_argument("--timesteps", type=float, default=1_000_000, help="env steps to train for (default 1e6)")
    p.add_argument(
        "--iterations",
        type=int,
        default=None,
        help="stop after this many training iterations (default: only --timesteps)",
    )
    p.add_argument(
        "--num-env-runners",
        type=int,
        default=2,
        help="Ray actors playing the games, one CPU each (0: this process plays them; default 2)",
    )
    p.add_argument(
        "--envs-per-runner", type=int, default=8, help="games each env runner plays side by side (default 8)"
    )
    p.add_argument(
        "--address",
        default=None,
        help="HOST:PORT of an existing Ray cluster (default: a local Ray, started and stopped here)",
    )
    p.add_argument(
        "--seed",
        type=seed_option(MAX_SEED, "RLlib adds the env runner's index"),
        default=0,
        help="seed of RLlib, torch and the games (default 0)",
    )
    p.add_argument(
        "--out",
        type=path_option,
        default=None,
        help="output folder (default runs/rllib-<players>p-l<level>-<time>-<pid>)",
    )
    p.add_argument(
        "--opponents",
        nargs="+",
        default=None,
        metavar="AGENT",
        help="train one learner against these frozen agents (random, greedy, heuristic, a checkpoint); "
        "default: every seat is the shared policy (self-play), which 'self' names (a resume's default: the "
        "checkpoint's)",
    )
    p.add_argument("--eval-every", type=float, default=50_000, help="env steps between evaluations (default 50,000)")
    p.add_argument(
        "--checkpoint-every",
        type=float,
        default=None,
        help="env steps between checkpoints OUT/last written without an evaluation (default: at the "
        "evaluations only), so a run killed between two evaluations loses less",
    )
    p.add_argument(
        "--resume",
        type=path_option,
        default=None,
        metavar="CHECKPOINT",
        help="continue the run of this checkpoint (its last/ or best/ folder): its weights, optimizer state, "
        "step count and progress.jsonl up to it; --timesteps and --iterations are the run's totals",
    )
    p.add_argument("--eval-games", type=int, default=40, help="games per evaluation opponent (default 40)")
    p.add_argument(
        "--eval-opponent",
        nargs="+",
        default=["heuristic"],
        metavar="AGENT",
        help="opponents of the evaluation games (default heuristic; the first one chooses best/)",
    )
    p.add_argument("--shaping", type=float, default=0.1, help="weight of the score-edge shaping reward (default 0.1)")
    p.add_argument(
        "--max-turns",
        type=int,
        default=TRAIN_MAX_TURNS,
        help=f"turn limit of training games (default {TRAIN_MAX_TURNS})",
    )
    p.add_argument(
        "--train-batch",
        type=int,
        default=4000,
        help="env steps per training iteration (default 4000); whole games are collected, so an "
        "iteration is at least about --num-env-runners x --envs-per-runner games (~400 steps each at the "
        "training turn limit)",
    )
    p.add_argument("--batch-size", type=int, default=500, help="PPO minibatch size (default 500)")
    p.add_argument("--n-epochs", type=int, default=3, help="PPO epochs per iteration (default 3)")
    p.add_argument("--learning-rate", type=float, default=5e-4, help="Adam learning rate (default 5e-4)")
    p.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus (default 0.01)")
    p.add_argument(
        "--features",
        choices=FEATURES,
        default="figure",
        help="network input: 'figure' adds the figure-progress features of agents.features (default)",
    )
    p.add_argument(
        "--net",
        type=int,
        nargs="+",
        default=[256, 256],
        help="hidden layer sizes of the policy and value networks (default 256 256)",
    )
    p.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch threads of this process (the learner, the evaluation games; default 1: on a "
        "shared machine more threads made each decision ~10x slower, docs/scaling.md)",
    )
    p.add_argument(
        "--pretrain",
        default=None,
        metavar="AGENT",
        help="behaviour-clone this agent (e.g. heuristic) into the RLModule before PPO, as train.py --pretrain",
    )
    p.add_argument("--pretrain-games", type=int, default=1000, help="teacher games for --pretrain (default 1000)")
    p.add_argument("--pretrain-epochs", type=int, default=8, help="passes over the teacher's decisions (default 8)")
    p.add_argument("--pretrain-lr", type=float, default=1e-3, help="Adam learning rate of the cloning (default 1e-3)")
    p.add_argument("--pretrain-batch", type=int, default=256, help="minibatch of the cloning (default 256)")
    p.add_argument("--workers", type=int, default=2, help="processes playing the teacher games (default 2)")
    return p


# --------------------------------------------------------------------------- options
_POSITIVE = (
    ("--envs-per-runner", "envs_per_runner"), ("--eval-games", "eval_games"), ("--max-turns", "max_turns"),
    ("--train-batch", "train_batch"), ("--batch-size", "batch_size"), ("--n-epochs", "n_epochs"),
    ("--pretrain-games", "pretrain_games"), ("--pretrain-epochs", "pretrain_epochs"),
    ("--pretrain-batch", "pretrain_batch"), ("--workers", "workers"), ("--torch-threads", "torch_threads"),
)  # fmt: skip
#: Real options in [0, maximum], and those in (0, maximum] (None: no maximum).
_NON_NEGATIVE = (("--shaping", "shaping", MAX_SHAPING), ("--ent-coef", "ent_coef", None))
_POSITIVE_REAL = (
    ("--learning-rate", "learning_rate", MAX_LEARNING_RATE),
    ("--pretrain-lr", "pretrain_lr", MAX_LEARNING_RATE),
)
#: Options in steps that take a float (``1e6``), at least 1.
_STEPS = (("--timesteps", "timesteps"), ("--eval-every", "eval_every"))
#: ``umbrella.json``'s ``trainer`` of the checkpoints this command writes.
TRAINER = "rllib PPO (python -m umbrella_env.rllib_train)"
#: The network inputs of ``--features``.
FEATURES = ("figure", "none")
#: The options that shape the RLModule: a resume takes the checkpoint's (``umbrella.json``).
NETWORK_OPTIONS = (("--net", "net"), ("--features", "features"))
#: The training options a checkpoint records (``umbrella.json``) and a resume takes when the
#: command line leaves them out (a given one that differs is used, and a note says so);
#: ``--shaping`` at 2-4 players only.
TRAINING_OPTIONS = (
    ("--shaping", "shaping"),
    ("--learning-rate", "learning_rate"),
    ("--ent-coef", "ent_coef"),
    ("--train-batch", "train_batch"),
    ("--batch-size", "batch_size"),
    ("--n-epochs", "n_epochs"),
)
#: ``--opponents self``: every seat is the shared policy (the default of a new run)
SELF_PLAY = "self"


def check_options(args: argparse.Namespace, *, resumed: bool = False) -> GameConfig:
    """The game configuration, or ``ValueError`` for an option out of range (nothing built
    yet); ``resumed``: the options as typed, before a resume takes the checkpoint's
    (--batch-size against --train-batch waits for them)."""
    check_game(args.players, args.level, args.max_turns)
    if args.num_env_runners < 0:
        raise ValueError(
            f"--num-env-runners must be 0 (play the games in this process) or more, got {args.num_env_runners}"
        )
    problems = [int_problem(flag, getattr(args, attr)) for flag, attr in _POSITIVE]
    problems += [real_problem(flag, getattr(args, attr), minimum=1, maximum=MAX_TIMESTEPS) for flag, attr in _STEPS]
    problems += [real_problem(flag, getattr(args, attr), minimum=0, maximum=top) for flag, attr, top in _NON_NEGATIVE]
    problems += [
        real_problem(flag, getattr(args, attr), positive=True, maximum=top) for flag, attr, top in _POSITIVE_REAL
    ]
    problems.append(None if args.iterations is None else int_problem("--iterations", args.iterations))
    problems.append(
        None
        if args.checkpoint_every is None
        else real_problem("--checkpoint-every", args.checkpoint_every, minimum=1, maximum=MAX_TIMESTEPS)
    )
    problem = first_problem(problems)
    if problem:
        raise ValueError(problem)
    if not resumed and args.batch_size > args.train_batch:
        raise ValueError(f"--batch-size {args.batch_size} is larger than --train-batch {args.train_batch}")
    check_layers("--net", args.net)
    config = GameConfig(num_players=args.players, plate_level=args.level, max_turns=args.max_turns)
    if args.players == 1 and args.opponents:
        raise ValueError("--opponents is for 2-4 players: solo has no opponents")
    if args.opponents and SELF_PLAY in args.opponents:
        if args.opponents != [SELF_PLAY]:
            raise ValueError(
                f"--opponents {SELF_PLAY} (self-play) stands alone: give it once and nothing else, or frozen agents"
            )
        args.opponents = None
    teacher = [args.pretrain] if args.pretrain is not None else []
    for spec in [*(args.opponents or []), *(args.eval_opponent if args.players > 1 else []), *teacher]:
        try:
            build_agent(spec, config)  # an unknown agent or a checkpoint of another game is refused here
        except AgentSpecError as exc:
            raise ValueError(str(exc)) from None
    return config


# --------------------------------------------------------------------------- RLlib
def _mode(opponents: Sequence[str] | None) -> str:
    return f"vs frozen {', '.join(opponents)}" if opponents else "shared-policy self-play"


def _opponent_specs(args: argparse.Namespace) -> list[str]:
    """``--opponents`` as the env runners and a checkpoint take them: checkpoint paths absolute, so that a
    resume from another folder and an env runner on another node find them."""
    return [absolute_spec(s) for s in args.opponents or []]


def env_config(args: argparse.Namespace) -> dict[str, Any]:
    cfg: dict[str, Any] = {"num_players": args.players, "plate_level": args.level, "max_turns": args.max_turns}
    if args.players > 1:
        cfg.update(shaping=args.shaping, opponents=_opponent_specs(args))
    return cfg


def _to_shared(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    return SHARED


def run_seed(args: argparse.Namespace, resume: Resume | None) -> int:
    """The seed RLlib seeds a run's env runners and learner with: ``--seed``, or for a resume
    :func:`~umbrella_env.training.options.resume_seed` of it and the checkpoint's step count
    (with ``--seed`` alone a resumed session dealt the first session's games again)."""
    return args.seed if resume is None else resume_seed(args.seed, int(resume.meta["timesteps"]))


def build_config(args: argparse.Namespace, seed: int | None = None) -> Any:
    """The ``PPOConfig`` of a run (RLlib's new API stack), seeded with ``seed`` (default
    ``--seed``)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.rllib_module import MaskedPPOModule
    from umbrella_env.rllib_env import MaskedSoloEnv, TurnBasedEnv, UmbrellaCallbacks

    solo = args.players == 1
    module = RLModuleSpec(
        module_class=MaskedPPOModule, model_config={"hidden": list(args.net), "features": args.features}
    )
    config = (
        PPOConfig()
        # RLlib's env checker steps random actions, illegal ones included: our envs are tested instead.
        .environment(MaskedSoloEnv if solo else TurnBasedEnv, env_config=env_config(args), disable_env_checking=True)
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.envs_per_runner,
            # Whole games only: a turn-based episode cut while a seat waits for its next
            # observation would lose that seat's last action (ray PR #44677).
            batch_mode="complete_episodes",
            rollout_fragment_length="auto",
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=args.train_batch,
            minibatch_size=args.batch_size,
            num_epochs=args.n_epochs,
            lr=args.learning_rate,
            entropy_coeff=args.ent_coef,
            gamma=GAMMA,
            lambda_=0.95,
        )
        .callbacks(UmbrellaCallbacks)
        # An env runner that fails (an opponent agent raising, an env bug) stops the run with its
        # error: RLlib's default restarts it silently and the run goes on sampling nothing.
        .fault_tolerance(restart_failed_env_runners=False, ignore_env_runner_failures=False)
        .debugging(seed=args.seed if seed is None else seed)
    )
    if solo:
        return config.rl_module(rl_module_spec=module)
    return config.multi_agent(policies={SHARED}, policy_mapping_fn=_to_shared).rl_module(
        rl_module_spec=MultiRLModuleSpec(rl_module_specs={SHARED: module})
    )


def metadata(config: GameConfig, module_id: str, **extra: Any) -> dict[str, Any]:
    """``umbrella.json``: :data:`agents.checkpoint.REQUIRED_KEYS` and the RLModule to play."""
    return base_metadata(
        config.num_players,
        config.plate_level,
        max_turns=config.max_turns,
        module_id=module_id,
        trainer=TRAINER,
        **extra,
    )


def save_checkpoint(algo: Any, path: Path, meta: dict[str, Any]) -> None:
    """RLlib's checkpoint of ``algo`` and ``umbrella.json`` in ``path``, replaced whole."""

    tmp = sibling_tmp(path)  # of this save alone (paths.sibling_tmp)
    try:
        algo.save_to_path(str(tmp.resolve()))
        (tmp / METADATA).write_text(json_text(meta, indent=2) + "\n", encoding="utf-8")
        remove_entry(path)
        tmp.rename(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # a save that failed half-way leaves nothing


# --------------------------------------------------------------------------- behaviour cloning
def fit_module(
    module: Any, demos: Any, epochs: int, batch_size: int, learning_rate: float, seed: int
) -> list[dict[str, Any]]:
    """Fit the RLModule's policy to the teacher's actions (masked cross-entropy) and its
    value network to the learner's returns, as ``train.py --pretrain`` does for MaskablePPO."""
    import torch
    from ray.rllib.core.columns import Columns

    from agents.rllib_module import MASK_KEY, OBS_KEY

    set_torch(seed=seed)
    rng = np.random.default_rng(seed)
    n = len(demos)
    order = rng.permutation(n)
    held, train = order[: max(1, n // 20)], order[max(1, n // 20) :]
    obs = torch.as_tensor(demos.obs)
    masks = torch.as_tensor(demos.masks, dtype=torch.float32)
    actions = torch.as_tensor(demos.actions)
    returns = torch.as_tensor(demos.returns, dtype=torch.float32)

    def batch(idx: Any) -> dict[str, Any]:
        return {Columns.OBS: {OBS_KEY: obs[idx], MASK_KEY: masks[idx]}}

    def accuracy(rows: np.ndarray) -> float:
        with torch.no_grad():
            idx = torch.as_tensor(rows)
            logits = module.forward_train(batch(idx))[Columns.ACTION_DIST_INPUTS]
            return float((logits.argmax(dim=1) == actions[idx]).float().mean())

    opt = torch.optim.Adam(module.parameters(), lr=learning_rate)
    history = []
    for epoch in range(epochs):
        rng.shuffle(train)
        total = 0.0
        for i in range(0, train.size, batch_size):
            idx = torch.as_tensor(train[i : i + batch_size])
            out = module.forward_train(batch(idx))
            values = module.compute_values(batch(idx), embeddings=out.get(Columns.EMBEDDINGS))
            loss = torch.nn.functional.cross_entropy(out[Columns.ACTION_DIST_INPUTS], actions[idx])
            loss = loss + 0.5 * torch.nn.functional.mse_loss(values, returns[idx])
            check_losses(CLONING, loss=float(loss.detach()))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(module.parameters(), 0.5)
            opt.step()
            total += float(loss.detach()) * idx.numel()
        check_weights(CLONING, module.state_dict())
        with torch.no_grad():  # the last minibatch again, through the updated module
            check_outputs(CLONING, module.forward_train(batch(idx))[Columns.ACTION_DIST_INPUTS])
        row = {"epoch": epoch + 1, "loss": total / train.size, "held_out_accuracy": accuracy(held)}
        history.append(row)
        print(f"[pretrain epoch {epoch + 1}/{epochs}] loss {row['loss']:.3f}, "
              f"held-out accuracy {row['held_out_accuracy']:.3f}", flush=True)  # fmt: skip
    return history


def clone_teacher(algo: Any, args: argparse.Namespace, config: GameConfig, module_id: str) -> list[dict[str, Any]]:
    """``--pretrain``: the teacher's games (:func:`umbrella_env.training.imitation.collect`, the
    teacher in the learner's seat, ``self`` at the others in self-play), cloning into the
    learner's RLModule, then the weights to every env runner."""
    from umbrella_env.training.imitation import collect

    opponents = [SELF_PLAY] if config.solo else list(args.opponents or [SELF_PLAY])
    demos = collect(config, args.pretrain, opponents, args.pretrain_games, args.seed, args.shaping, GAMMA,
                    workers=args.workers, progress=False)  # fmt: skip
    results = algo.learner_group.foreach_learner(
        lambda learner: fit_module(
            learner.module[module_id], demos, args.pretrain_epochs, args.pretrain_batch, args.pretrain_lr, args.seed
        )  # fmt: skip
    )
    history = next(iter(results)).get()
    algo.env_runner_group.sync_weights(
        from_worker_or_learner_group=algo.learner_group, inference_only=True, timeout_seconds=None
    )
    return history


# --------------------------------------------------------------------------- evaluation
@dataclass
class EvalResult:
    opponent: str
    games: int
    win_rate: float  # 2-4 players; solo 0
    mean_score: float

    def describe(self) -> str:
        if self.opponent == "":
            return f"mean score {self.mean_score:.2f}"
        rate = win_rate_text(self.win_rate, self.games)
        return f"vs {self.opponent}: win rate {rate}, mean score {self.mean_score:.2f}"


def evaluate(agent: Any, config: GameConfig, opponent: str | None, games: int, seed: int = EVAL_SEED) -> EvalResult:
    """``games`` games of ``agent`` against ``opponent`` at every other seat (solo: alone),
    the agent's seat rotating, through the match runner; standard turn limit."""
    config = GameConfig(num_players=config.num_players, plate_level=config.plate_level)
    opp = build_agent(opponent, config, seed) if opponent is not None and config.num_players > 1 else None
    return EvalResult(opponent or "", games, *play_rotation(agent, opp, config, games, seed))


# --------------------------------------------------------------------------- the run
def probe_positions(config: GameConfig, n: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Observations and legal masks of the first decisions of ``n`` seeded deals: the
    positions through which :func:`check_update` runs the updated policy."""
    state = E.allocate(config, n)
    E.reset(state, np.arange(n), np.random.default_rng(0))
    return observe(state), E.legal_action_mask(state)


def _outputs_finite(module: Any, probe: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether ``module``'s masked logits of the ``probe`` positions are all finite (masked
    entries are the float minimum, finite)."""
    import torch
    from ray.rllib.core.columns import Columns

    from agents.rllib_module import MASK_KEY, OBS_KEY

    obs, mask = probe
    batch = {Columns.OBS: {OBS_KEY: torch.as_tensor(obs), MASK_KEY: torch.as_tensor(mask, dtype=torch.float32)}}
    with torch.no_grad():
        return bool(torch.isfinite(module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]).all())


def check_update(
    algo: Any, result: dict[str, Any], module_id: str, stage: str, probe: tuple[np.ndarray, np.ndarray]
) -> None:
    """:class:`TrainingDiverged` when the update of an iteration (``algo.train()``'s
    ``result``) reported losses, or left the learners' weights or the policy's outputs on the
    ``probe`` positions (:func:`probe_positions`), that are not finite: weights finite but
    huge would otherwise be evaluated and saved, and fail only in the next iteration's env
    runners."""
    stats = result.get("learners", {}).get(module_id, {})
    check_losses(stage, **{k: float(stats[k]) for k in ("policy_loss", "vf_loss") if k in stats})
    found = algo.learner_group.foreach_learner(
        lambda learner: (
            nonfinite_weights(learner.module[module_id].state_dict()),
            _outputs_finite(learner.module[module_id], probe),
        )
    )
    for answer in found:
        broken, finite = answer.get()
        weights_diverged(stage, broken)
        if not finite:
            raise TrainingDiverged(stage, "the policy's outputs are not finite (NaN or inf)")


@dataclass
class Resume:
    """What ``--resume`` continues, read and checked before Ray starts."""

    path: Path
    meta: dict[str, Any]
    #: the lines of the run's progress.jsonl up to the checkpoint's iteration
    rows: list[dict[str, Any]]
    #: the note lines of the training options given that differ from the checkpoint's
    notes: list[str] = field(default_factory=list)

    def continues_in(self, out: Path) -> bool:
        """Whether ``out`` is the checkpoint's own run folder: the run goes on there."""
        return self.path.resolve().parent == Path(out).resolve()


def read_resume(args: argparse.Namespace, given: set[str], out: Path, config: GameConfig) -> Resume:
    """The checkpoint ``--resume`` names, checked against the run (``ValueError`` naming
    what differs); ``args`` take its network options (:data:`NETWORK_OPTIONS`) and, at 2-4
    players, its ``--opponents`` when the command line leaves them out."""
    path = Path(args.resume)
    try:
        meta = read_metadata(path)
    except ValueError as exc:
        raise ValueError(f"--resume: {exc}") from None
    if meta.get("trainer") != TRAINER:
        raise ValueError(
            f"--resume {str(path)!r} was not written by {PROG} (its {METADATA} names the trainer "
            f"{meta.get('trainer')!r}): a run of this command continues only from its own last/ or best/"
        )
    if Path(out).resolve().is_relative_to(path.resolve()):
        raise ValueError(
            f"--out {str(out)!r} is inside the checkpoint --resume reads: give the run's folder or another"
        )
    check_configuration(
        meta, path, num_players=args.players, plate_level=args.level, named="--resume", target="this run"
    )
    damaged = f"--resume: {str(path / METADATA)!r} is damaged"
    problem = int_problem("its timesteps", meta.get("timesteps"), minimum=0) or int_problem(
        "its iteration", meta.get("iteration"), minimum=0
    )
    net, features = meta.get("net"), meta.get("features")
    turns = meta.get("max_turns")
    if not problem and turns is not None:
        problem = int_problem("its max_turns", turns, minimum=1, maximum=MAX_TURNS_LIMIT)
    if not problem and net is not None:
        if not (isinstance(net, list) and net and all(type(n) is int for n in net)):
            problem = f"its net must be a list of layer sizes, got {net!r}"
        else:
            try:
                check_layers("its net", net)
            except ValueError as exc:
                problem = str(exc)
    if not problem and features is not None and features not in FEATURES:
        problem = f"its features must be one of {', '.join(FEATURES)}, got {features!r}"
    opponents = meta.get("opponents")
    if (
        not problem
        and opponents is not None
        and not (isinstance(opponents, list) and all(isinstance(o, str) and o for o in opponents))
    ):
        problem = f"its opponents must be a list of agent specs, got {opponents!r}"
    if problem:
        raise ValueError(f"{damaged}: {problem}")
    try:
        cloned = adopt_cloning(args, given, meta, CLONING_OPTIONS, PRETRAIN_ONLY)
    except ValueError as exc:
        raise ValueError(f"--resume: {exc}") from None
    for flag, dest in NETWORK_OPTIONS:
        saved = meta.get(dest)
        if saved is None:  # a checkpoint of before these were recorded: the restore checks them
            continue
        if dest not in given:
            setattr(args, dest, saved)
        elif getattr(args, dest) != saved:
            raise ValueError(
                f"{flag} {shown_option(getattr(args, dest))} differs from the checkpoint's ({shown_option(saved)}): "
                f"leave {flag} out (a resume takes the checkpoint's)"
            )
    if turns is not None and "max_turns" not in given:
        args.max_turns = int(turns)  # the game it trained on (it was --max-turns' default, unsaid)
    training = [(flag, dest) for flag, dest in TRAINING_OPTIONS if not (config.solo and dest in MULTIPLAYER_ONLY)]
    try:
        notes = cloned + adopt_recorded(args, given, meta, training)  # the ranges: check_options, run after this
    except ValueError as exc:
        raise ValueError(f"{damaged}: {exc}") from None
    if not config.solo and opponents is not None and "opponents" not in given:
        args.opponents = list(opponents) or None  # the run goes on against whom it trained with
        check_recorded_opponents(opponents, config)
    done, at = int(meta["timesteps"]), int(meta["iteration"])
    if done >= args.timesteps or (args.iterations is not None and at >= args.iterations):
        totals = f"--timesteps ({int(args.timesteps):,})" + (
            f" and --iterations ({args.iterations})" if args.iterations is not None else ""
        )
        raise ValueError(
            f"--resume: the checkpoint has trained {done:,} env steps in {at} iterations; {totals} "
            f"{'are' if args.iterations is not None else 'is'} the run's total: give more"
        )
    return Resume(path, meta, _progress_rows(path.parent / "progress.jsonl", at), notes)


def _progress_rows(progress: Path, through: int) -> list[dict[str, Any]]:
    """The lines of a run's ``progress.jsonl`` up to iteration ``through`` (none without the
    file); a last line cut short (a run killed as it wrote it) is left out, any other line
    that is not this command's is refused naming it."""
    if not progress.is_file():
        return []
    try:
        lines = progress.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--resume: the run's progress {str(progress)!r} is unreadable ({exc!r})") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = parse_json(line)
        except ValueError:
            if number == len(lines):  # cut short by a kill: the line of an iteration after the checkpoint
                break
            row = None
        if not (isinstance(row, dict) and not int_problem("", row.get("iteration"), minimum=0)):
            raise ValueError(
                f"--resume: line {number} of the run's progress {str(progress)!r} is not one this command wrote "
                "(expected a JSON object with its 'iteration' count)"
            )
        if row["iteration"] <= through:
            rows.append(row)
    return rows


def carried_best(rows: list[dict[str, Any]], args: argparse.Namespace, solo: bool) -> dict[str, Any] | None:
    """The best evaluation among the carried ``rows`` measured as this run measures (against
    the same first ``--eval-opponent``, on as many ``--eval-games``; a finite metric), or None."""
    first = "" if solo else args.eval_opponent[0]
    same = [
        r
        for r in rows
        if r.get("eval")
        and type(r.get("metric")) in (int, float)
        and math.isfinite(r["metric"])
        and isinstance(r.get("results"), list)
        and r["results"]
        and isinstance(r["results"][0], dict)
        and (r["results"][0].get("opponent"), r["results"][0].get("games")) == (first, args.eval_games)
    ]
    return max(same, key=lambda r: r["metric"], default=None)


class TrainingFailed(RuntimeError):
    """The run cannot go on (an env runner failed): reported in one message, exit status 1."""


def _fail(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


@command
def main(argv: Sequence[str] | None = None) -> int:
    """The command; returns the exit status (2 for bad input, with a message on stderr)."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)  # a usage error: exit status 2 (command)
    args.cloning = cloning_record(args) if args.resume is None else None  # a resume's: read_resume
    try:
        import_ray(PROG)
        typed = given_options(build_parser, argv)
        # --batch-size against --train-batch waits for the checkpoint's when one of them is left out
        config = check_options(args, resumed=args.resume is not None and not {"batch_size", "train_batch"} <= typed)
        if config.solo:
            ignored = given_among(build_parser, argv, MULTIPLAYER_ONLY)
            if ignored:
                raise ValueError(f"{', '.join(ignored)}: for 2-4 players; a solo run has no opponent and no score edge")
        if args.pretrain is None and args.resume is None:  # a resume's are its cloning's (read_resume)
            ignored = given_among(build_parser, argv, PRETRAIN_ONLY)
            if ignored:
                raise ValueError(
                    f"{', '.join(ignored)}: for the behaviour cloning, which needs --pretrain AGENT (the teacher); "
                    "leave them out or add --pretrain"
                )
    except (ValueError, RayUnavailable) as exc:
        return _fail(str(exc))
    out = args.out or default_run_dir(f"rllib-{args.players}p-l{args.level}")
    try:
        resume = None if args.resume is None else read_resume(args, typed, out, config)
    except ValueError as exc:
        return _fail(str(exc))
    if resume is not None:
        try:  # the settings the checkpoint records (--max-turns, the training options) when not given
            config = check_options(args)
        except ValueError as exc:
            return _fail(f"--resume: with the settings the checkpoint records: {exc}")
    problem = output_dir_problem(out)
    if problem is not None:
        return _fail(f"--out {str(out)!r} cannot hold the run: {problem}")
    previous = [n for n in RUN_FILES if (out / n).exists() and not (n == "progress.jsonl" and _empty(out / n))]
    if previous and not (resume is not None and resume.continues_in(out)):
        return _fail(
            f"--out {str(out)!r} holds a previous run ({', '.join(previous)}): give another folder, or "
            "--resume with its last/ to continue it there"
        )
    created = not out.exists()
    try:
        with ray_session(args.address, what=PROG) as ray:
            cpus = cluster_cpus(ray)
            if args.num_env_runners > cpus:
                return _fail(
                    f"--num-env-runners {args.num_env_runners} needs {args.num_env_runners} CPUs (one per env runner), "
                    f"the Ray cluster has {cpus}"
                )
            out.mkdir(parents=True, exist_ok=True)
            with sigterm_as_interrupt():  # after Ray's own handler: kill / timeout end the run as Ctrl-C does
                return _train(args, config, out, cpus, ray, resume)
    except RayUnavailable as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:  # starting Ray, building the algorithm, cloning the teacher: nothing trained yet
        kept = [n for n in RUN_FILES if (out / n).exists() and not _empty(out / n)]
        print(f"\n{PROG}: interrupted: " + (f"{out} holds {', '.join(kept)}" if kept else "nothing was written"),
              file=sys.stderr)  # fmt: skip
        return 130
    except TrainingDiverged as exc:  # the checkpoints written before it are finite: say which
        kept = [n for n in ("best", "last") if (out / n).exists()]
        what = f"{out} holds {' and '.join(kept)} (the last evaluation's)" if kept else "no checkpoint was written"
        option = (
            f"--pretrain-lr (now {args.pretrain_lr:g})"
            if exc.stage == CLONING
            else f"--learning-rate (now {args.learning_rate:g})"
        )
        print(f"{PROG}: error: {diverged_message(exc, what, option)}", file=sys.stderr)
        return 1
    except TrainingFailed as exc:
        if exc.__cause__ is not None:  # not an env runner's error: where it came from matters
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        print(f"{PROG}: training failed: {exc}", file=sys.stderr)
        return 1
    finally:  # a run that failed before writing anything leaves no empty log, nor a folder it made
        if _empty(out / "progress.jsonl"):
            (out / "progress.jsonl").unlink()
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()


def quiet_ray() -> None:
    """Ray's and RLlib's notices (the new API stack's, deprecations) off in this process:
    the commands' own lines say what matters."""
    for name in ("ray", *QUIET_LOGGERS):
        logging.getLogger(name).setLevel(logging.ERROR)


def _train(args: argparse.Namespace, config: GameConfig, out: Path, cpus: int, ray: Any, resume: Resume | None) -> int:
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN, NUM_ENV_STEPS_SAMPLED_LIFETIME

    set_torch(threads=args.torch_threads)
    quiet_ray()
    module_id = SOLO_MODULE if config.solo else SHARED
    probe = probe_positions(config)
    opponents = [None] if config.solo else list(args.eval_opponent)
    mode = "solo" if config.solo else _mode(args.opponents)
    budget = f"{int(args.timesteps):,} env steps" + (f" or {args.iterations} iterations" if args.iterations else "")
    print(
        f"RLlib PPO, {config.num_players}-player level {config.plate_level} ({mode}), "
        f"{budget}, {args.num_env_runners} env runner(s) x {args.envs_per_runner} games "
        f"on a Ray cluster of {cpus} CPUs -> {out}",
        flush=True,
    )
    t_build = time.perf_counter()
    algo = build_config(args, run_seed(args, resume)).build_algo()
    steps = iteration = 0
    if resume is not None:
        try:
            algo.restore_from_path(str(resume.path.resolve()))
        except Exception as exc:  # a checkpoint of another network, or damaged
            stop_algorithm(algo)
            hint = (
                "; a checkpoint of before 0.2 records no --net and --features: give those it was trained with"
                if resume.meta.get("net") is None
                else " (a damaged checkpoint?)"
            )
            raise TrainingFailed(
                f"--resume {str(resume.path)!r}: RLlib cannot restore it into this run's algorithm "
                f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}){hint}"
            ) from None
        steps, iteration = int(resume.meta["timesteps"]), int(resume.meta["iteration"])
        print(f"resumed {resume.path} at iteration {iteration}, {steps:,} env steps", flush=True)
        for note in resume.notes:
            print(note, flush=True)
        trained = resume.meta.get("opponents")
        if not config.solo and trained is not None and [absolute_spec(t) for t in trained] != _opponent_specs(args):
            print(f"note: the checkpoint's run trained {_mode(trained)}; this run trains {_mode(args.opponents)}",
                  flush=True)  # fmt: skip
    print(f"built in {time.perf_counter() - t_build:.1f} s", flush=True)

    def checkpoint_meta() -> dict[str, Any]:
        return metadata(config, module_id, timesteps=steps, iteration=iteration, seed=args.seed,
                        opponents=_opponent_specs(args), net=list(args.net), features=args.features,
                        **{dest: getattr(args, dest) for _, dest in TRAINING_OPTIONS
                           if not (config.solo and dest in MULTIPLAYER_ONLY)},
                        **({} if args.cloning is UNRECORDED else {"pretraining": args.cloning}),
                        resumed_from=None if resume is None else str(resume.path.resolve()))  # fmt: skip

    log = (out / "progress.jsonl").open("w", encoding="utf-8")
    carried = [] if resume is None else resume.rows
    for row in carried:  # the resumed run's lines up to its checkpoint; those after it are another lineage
        log.write(json_text(row) + "\n")
    log.flush()
    history: list[dict[str, Any]] = [r for r in carried if not r.get("eval")]
    best_row = carried_best(carried, args, config.solo)
    best = -np.inf if best_row is None else best_row["metric"]
    if any(r.get("eval") for r in carried) and best_row is None:
        print("note: the resumed run's evaluations were measured another way (another first --eval-opponent or "
              "--eval-games): this run's first evaluation makes a new best/", flush=True)  # fmt: skip
    # the checkpoint's own evaluation, if its run made one: an interrupted resume need not repeat it
    last_eval = carried_best([r for r in carried if r.get("env_steps") == steps], args, config.solo)
    if resume is not None and not resume.continues_in(out):
        _copy_best(resume.path.parent / "best", out / "best", iteration)
    elif resume is not None and resume.path.resolve() != (out / "last").resolve():
        # resumed from an older checkpoint of this folder (best/): last/ is the abandoned run's
        save_checkpoint(algo, out / "last", checkpoint_meta())
    start_steps = steps
    #: the seconds of the run before this session (a resume's rows go on counting from them)
    since = max((float(r["seconds"]) for r in carried if type(r.get("seconds")) in (int, float)), default=0.0)
    next_eval = (steps // args.eval_every + 1) * args.eval_every
    every = args.checkpoint_every
    next_checkpoint = None if every is None else (steps // every + 1) * every
    t0 = time.perf_counter()

    def run_eval() -> dict[str, Any]:
        nonlocal best, best_row, last_eval
        save_checkpoint(algo, out / "last", checkpoint_meta())
        agent = RLlibAgent(out / "last", num_players=config.num_players, plate_level=config.plate_level)
        try:
            results = [evaluate(agent, config, opp, args.eval_games) for opp in opponents]
        except AgentError as exc:  # an evaluation opponent that raises, as an env runner's opponent does
            raise TrainingFailed(f"the evaluation at {steps:,} env steps failed: {exc}") from None
        first = results[0]
        metric = selection_metric(first.win_rate, first.mean_score, args.eval_games, config.solo)
        improved = metric > best
        if improved:
            best = metric
            remove_entry(out / "best")
            shutil.copytree(out / "last", out / "best")
        seconds = round(since + time.perf_counter() - t0, 1)
        row = {"eval": True, "env_steps": steps, "iteration": iteration, "seconds": seconds,
               "results": [r.__dict__ for r in results], "metric": metric, "best": improved}  # fmt: skip
        if improved:
            best_row = row
        print(f"[eval @ {steps:,} steps, {args.eval_games} games] " + "; ".join(r.describe() for r in results)
              + ("  (new best)" if improved else ""), flush=True)  # fmt: skip
        last_eval = row
        return row

    pretrain_history = None
    interrupted = False
    logging_disabled = logging.root.manager.disable  # a failing run silences logging while it stops
    try:
        if args.pretrain is not None:  # the clock (t0) includes the teacher games and the cloning
            pretrain_history = clone_teacher(algo, args, config, module_id)
            print(f"cloned {args.pretrain} in {time.perf_counter() - t0:.0f} s", flush=True)
            log.write(json_text(run_eval()) + "\n")
        while steps < args.timesteps and (args.iterations is None or iteration < args.iterations):
            t_iter = time.perf_counter()
            try:
                result = algo.train()
            except KeyboardInterrupt:
                interrupted = True
                break
            except Exception as exc:
                # A remote env runner that raised is ended by RLlib (sys.exit): Ray reports the
                # actor's death and the runner's own log holds the cause. A local one raises here.
                ray_error = isinstance(exc, ray.exceptions.RayError)
                cause = worker_error(ray, exc) if ray_error else _agent_error(exc)
                logging.disable(logging.CRITICAL)  # stopping the dead runners would log their tracebacks
                if iteration and invalid_outputs(cause or _described(exc)):  # the last update's weights exploded
                    raise TrainingDiverged(
                        f"the PPO update of iteration {iteration}",
                        f"the policy's outputs are not finite (NaN or inf): iteration {iteration + 1} could not "
                        "sample actions from them",
                    ) from None
                raise TrainingFailed(
                    f"iteration {iteration + 1} failed: "
                    + (f"the env runner's error: {cause}" if cause else _described(exc))
                ) from (None if ray_error or cause else exc)  # a failing agent needs no traceback
            iteration += 1
            check_update(algo, result, module_id, f"the PPO update of iteration {iteration}", probe)
            runners = result.get(ENV_RUNNER_RESULTS, {})
            before, steps = steps, int(runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME, steps))
            if steps == before:  # an env runner failed (fault tolerance is off) or played nothing
                logging.disable(logging.CRITICAL)
                raise TrainingFailed(
                    f"iteration {iteration} sampled no env steps: the env runners played no game "
                    "(their errors are in the Ray logs of their nodes)"
                )
            elapsed = time.perf_counter() - t_iter
            row = {
                "iteration": iteration,
                "env_steps": steps,
                "seconds": round(since + time.perf_counter() - t0, 1),
                "env_steps_per_s": round((steps - before) / elapsed, 1),
                "episode_return_mean": _num(runners.get(EPISODE_RETURN_MEAN)),
                "game_turns": _num(runners.get("game_turns")),
                "game_score": _num(runners.get("game_score")),
                "illegal_actions": _num(runners.get("illegal_actions")),
                # the update's figures (RLlib's learner results of the trained module)
                **learner_figures(result, module_id),
                # each seat's mean return: in self-play episode_return_mean sums both seats, ~0
                "seat_returns": {str(k): _num(v) for k, v in (runners.get("agent_episode_returns_mean") or {}).items()},
            }
            history.append(row)
            log.write(json_text(row) + "\n")
            log.flush()
            print(f"iter {iteration:4d}  {steps:>10,} steps  {row['env_steps_per_s']:7,.0f} env steps/s  "
                  + _fields(row) + f"  [{row['seconds']:.0f} s]", flush=True)  # fmt: skip
            if next_checkpoint is not None and steps >= next_checkpoint:
                while next_checkpoint <= steps:
                    next_checkpoint += every
                last = steps >= args.timesteps or (args.iterations is not None and iteration >= args.iterations)
                if steps < next_eval and not last:  # an evaluation now (or the final one) writes last/ itself
                    try:
                        save_checkpoint(algo, out / "last", checkpoint_meta())
                    except KeyboardInterrupt:  # as in an evaluation: the final one and the summary follow
                        interrupted = True
                        break
                    print(f"[checkpoint @ {steps:,} steps] {out / 'last'}", flush=True)
            if steps >= next_eval:
                while next_eval <= steps:
                    next_eval += args.eval_every
                try:
                    ev = run_eval()
                except KeyboardInterrupt:
                    interrupted = True
                    break
                log.write(json_text(ev) + "\n")
                log.flush()
        if interrupted:
            print(f"interrupted at {steps:,} env steps: a last evaluation and the summary follow "
                  "(interrupt again to skip the evaluation)", flush=True)  # fmt: skip
        elapsed = time.perf_counter() - t0
        final: dict[str, Any] | None = None
        if last_eval is not None and last_eval["env_steps"] == steps:
            final = last_eval  # the last periodic evaluation was of this very policy
        else:
            try:
                final = run_eval()
                log.write(json_text(final) + "\n")
            except KeyboardInterrupt:  # the first Ctrl-C of the run, or a second one: keep what was trained
                interrupted = True
                print("interrupted in the final evaluation: the summary follows, without it", flush=True)
    finally:
        log.close()
        try:
            stop_algorithm(algo)
        finally:
            logging.disable(logging_disabled)
    illegal = history[-1]["illegal_actions"] if history else None
    session = steps - start_steps  # a resumed run's own steps
    summary = {
        "players": config.num_players,
        "level": config.plate_level,
        "mode": mode,
        "env_steps": steps,
        "iterations": iteration,
        "resumed_from": None if resume is None else str(resume.path),
        "session_env_steps": session,
        "interrupted": interrupted,
        "seconds": round(elapsed, 1),
        "env_steps_per_second": round(session / elapsed, 1),
        "num_env_runners": args.num_env_runners,
        "envs_per_runner": args.envs_per_runner,
        "cluster_cpus": cpus,
        "illegal_actions": illegal,
        "pretrain": pretrain_history,
        "final_eval": final,
        "best_eval": best_row,
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
    }
    text = json_text(summary, indent=2) + "\n"  # whole or not at all (a kill mid-write), as the trainers'
    write_atomically(out / "summary.json", lambda tmp: tmp.write_text(text, encoding="utf-8"))
    illegal_text = "no finished game reported illegal actions" if illegal is None else f"{illegal:.0f} illegal actions"
    play = out / "best" if (out / "best").exists() else out / "last"  # no best/ when no evaluation finished
    print(
        f"{'stopped' if interrupted else 'done'}: {session:,} env steps in {elapsed:.0f} s "
        f"({session / elapsed:,.0f} env steps/s)"
        + (f", {steps:,} in all" if resume is not None else "")
        + f", {illegal_text}; {play.name}: {play} "
        f"({command_name('evaluate.py', 'umbrella-evaluate')} --agents rllib:{play} ...)",
        flush=True,
    )
    return 130 if interrupted else 0


def _copy_best(source: Path, target: Path, iteration: int) -> None:
    """The resumed run's ``best/`` into the new ``--out`` when it comes from the checkpoint's
    lineage (its iteration at most the checkpoint's): the new run replaces it only with a
    better evaluation."""
    try:
        meta = read_metadata(source)
    except ValueError:
        return
    if isinstance(meta.get("iteration"), int) and meta["iteration"] <= iteration:
        shutil.copytree(source, target)


def _empty(path: Path) -> bool:
    return path.is_file() and not path.stat().st_size


def _agent_error(exc: BaseException) -> str | None:
    """``AgentError: message`` when an agent's failure is in ``exc``'s chain (a frozen
    opponent that raised in a local env runner; the message says where and in which game)."""
    for link in _chain(exc):
        if isinstance(link, AgentError):
            return f"{type(link).__name__}: {link}"
    return None


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes (``__cause__``, else ``__context__``), each once: a chain can loop."""
    out: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and all(seen is not e for e in out):
        out.append(seen)
        seen = seen.__cause__ or seen.__context__
    return out


def _described(exc: BaseException) -> str:
    """``Type: message`` of the outermost exception of ``exc``'s chain that has a message
    (RLlib re-raises an env's error as a bare ``RuntimeError``)."""
    for link in _chain(exc):
        if str(link):
            return f"{type(link).__name__}: {link}"
    return type(exc).__name__


#: RLlib's PPO learner results kept in each iteration's line of progress.jsonl.
LEARNER_FIGURES = ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "vf_explained_var", "total_loss")


def learner_figures(result: dict[str, Any], module_id: str) -> dict[str, float | None]:
    """The update's :data:`LEARNER_FIGURES` of the module ``module_id`` in ``algo.train()``'s
    ``result`` (None for one RLlib did not report)."""
    stats = result.get("learners", {}).get(module_id, {})
    return {key: _num(stats.get(key)) for key in LEARNER_FIGURES}


def _fields(row: dict[str, Any]) -> str:
    """The training metrics of a progress line (those RLlib reported this iteration)."""
    out = []
    for key, label, digits in (
        ("game_score", "score", 2),
        ("game_turns", "turns", 0),
        ("episode_return_mean", "return", 3),
        ("illegal_actions", "illegal actions", 0),
        ("policy_loss", "policy loss", 3),
        ("vf_loss", "value loss", 3),
    ):
        if row.get(key) is not None:
            out.append(f"{label} {row[key]:.{digits}f}")
    return "  ".join(out)


def _num(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


if __name__ == "__main__":
    sys.exit(main())
