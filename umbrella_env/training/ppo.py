"""Train a MaskablePPO agent (sb3-contrib) on the batched core.

    python train.py --quick                      # 2-3 minutes, 2 players
    python train.py --players 1 --timesteps 2e6  # solo on the native vector env
    python train.py --players 2 --opponents greedy self --pretrain heuristic \\
        --pretrain-games 8000 --pretrain-epochs 10 --learning-rate 2e-4 --ent-coef 0.001 --timesteps 6e5

* Solo trains on :class:`~umbrella_env.envs.sb3.UmbrellaSB3VecEnv` (dense reward: the
  score). 2-4 players train on :class:`LearnerVecEnv`: every game seats the learner at a
  random seat and fills the other seats from the opponent pool (``random``, any agent
  name such as ``greedy`` or ``heuristic``, and ``self``: frozen snapshots of the
  learner, refreshed every ``--snapshot-every`` steps). Opponents move inside the env
  step; the learner is rewarded at the end of every game, **losses included** (+1 sole
  win, +0.5 shared win, -1 loss), plus a shaping term ``--shaping`` x (its score change -
  the mean opponent score change), which pays the final margin too (docs/training.md).
* The policy sees the observation plus figure-progress features computed inside the
  network (``--features figure``, :mod:`agents.features`): how complete each
  visible figure would be after each of the 64 slides.
* ``--pretrain AGENT`` first behaviour-clones a teacher agent from ``--pretrain-games``
  of its games (:mod:`umbrella_env.training.imitation`; ``--pretrain-cache FILE.npz`` keeps the
  games for the next run), then PPO continues from the cloned policy.
* Every ``--eval-every`` steps the policy plays ``--eval-games`` games against
  ``--eval-opponent`` (default heuristic) through the match runner
  (:func:`umbrella_env.match.play_game`); the best model is kept as ``best.zip`` (the cloned
  policy, evaluated the same way, is the first best). ``last.zip`` is written at
  the end; each ``.zip`` has a ``.json`` sidecar with the configuration, so a model
  trained for one configuration is refused for another.
* ``--resume PATH`` continues from a checkpoint; ``--timesteps`` is then the run's total
  (the checkpoint's steps included, as the other trainers count), so the interrupted
  command with ``--resume`` added finishes the run it started (its cloning options, equal to
  the ones the checkpoint records, are accepted and not done again). Every scalar SB3 logs (losses, KL,
  entropy, fps) goes to ``OUT/progress.csv``, a row per rollout, with a row per evaluation
  (``eval/metric``) at its own step (:mod:`umbrella_env.training.metrics`), and to
  TensorBoard's ``OUT/tb`` when tensorboard is installed. A progress bar shows the timesteps
  (a line every 30 s in a log).
* ``--quick``: clone the heuristic from 1,000 of its games, then 100k PPO steps against
  random, greedy and self-play (2 to 3 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import sys
import time
import zipfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from umbrella_env.cli_args import command, missing_extra, say, set_torch
from umbrella_env.core import actions as A
from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.jsonio import parse_json
from umbrella_env.core.observation import OBS_SIZE, observation_bounds, observe

try:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList
    from stable_baselines3.common.logger import KVWriter, Logger, TensorBoardOutputFormat, filter_excluded_keys
    from stable_baselines3.common.utils import get_latest_run_id
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
except ImportError as exc:  # pragma: no cover - exercised only without the train extra
    missing_extra(__name__, exc, "the MaskablePPO trainer")

import torch
from gymnasium import spaces

from agents.checkpoint import check_configuration, copy_checkpoint, sidecar_path
from agents.checks import invalid_outputs
from agents.features import FigureFeatures
from agents.policy import PolicyAgent, load_model, moved_modules, read_metadata, save_model
from umbrella_env.cli_args import (
    MAX_TIMESTEPS,
    HelpFormatter,
    ShortUsageParser,
    first_problem,
    int_problem,
    path_option,
    program_name,
    real_problem,
)
from umbrella_env.core.single import SingleGame
from umbrella_env.envs.common import end_rewards, score_edge
from umbrella_env.envs.sb3 import BatchStep, BatchVecEnv, UmbrellaSB3VecEnv
from umbrella_env.match import absolute_spec, agent_action, build_agent, play_rotation
from umbrella_env.parallel import Progress, WorkerDied, above_progress, local_cpus, memory_bytes, oversubscribed
from umbrella_env.paths import (
    default_run_dir,
    json_text,
    output_dir_problem,
    output_file_problem,
    output_folder,
    remove_run,
    write_atomically,
)
from umbrella_env.training.divergence import (
    TrainingDiverged,
    check_weights,
    diverged_message,
    refused_outputs,
)
from umbrella_env.training.imitation import Demonstrations, collect, pretrain, source
from umbrella_env.training.metrics import METRICS_FILE, MetricsFile, read_rows
from umbrella_env.training.options import (
    CLONING_OPTIONS,
    EVAL_SEED,
    GAMMA,
    MAX_LEARNING_RATE,
    MAX_SHAPING,
    RUN_FILES,
    TRAIN_COMMAND,
    TRAIN_MAX_TURNS,
    TRAINER_SEED_HELP,
    UNRECORDED,
    adopt_cloning,
    adopt_recorded,
    apply_preset,
    check_game,
    check_layers,
    check_recorded_opponents,
    given_options,
    overwrite_problem,
    resume_seed,
    selection_metric,
    shown_option,
    trainer_seed,
    win_rate_text,
)
from umbrella_env.training.options import cloning_record as shared_cloning_record


# --------------------------------------------------------------------------- opponents
class OpponentPool:
    """Opponents for the non-learner seats: per game, one pool entry for all its opponents."""

    def __init__(self, specs: list[str], config: GameConfig, seed: int) -> None:
        if not specs:
            raise ValueError("the opponent pool is empty; give e.g. --opponents random self")
        self.specs = list(specs)
        self.config = config
        self.rng = np.random.default_rng(seed)
        self.snapshot: Any = None  # a PolicyAgent-like object with act_batch, for "self"
        self.agents: dict[str, Any] = {}
        for spec in self.specs:
            if spec not in ("random", "self"):
                self.agents[spec] = build_agent(spec, config, seed=int(self.rng.integers(2**31)))

    def draw(self, n: int) -> np.ndarray:
        """Pool indices for ``n`` new games ("self" falls back to random until a snapshot exists)."""
        return self.rng.integers(0, len(self.specs), n)

    def actions(self, state: E.BatchState, games: np.ndarray, kinds: np.ndarray) -> np.ndarray:
        """Actions of the opponents deciding in ``games`` (all not at the learner's decision)."""
        out = np.full(games.size, -1, dtype=np.int64)
        for k, spec in enumerate(self.specs):
            rows = np.flatnonzero(kinds == k)
            if not rows.size:
                continue
            g = games[rows]
            if spec == "random" or (spec == "self" and self.snapshot is None):
                out[rows] = E.random_legal_actions(E.take(state, g), self.rng)
            elif spec == "self":
                sub = E.take(state, g)
                out[rows] = self.snapshot.act_batch(observe(sub), E.legal_action_mask(sub))
            else:
                agent = self.agents[spec]
                for r, b in zip(rows, g):
                    out[r] = agent_action(agent, SingleGame.from_batch(state, int(b)))
        return out


class LearnerVecEnv(BatchVecEnv):
    """``num_envs`` multiplayer games in one batch of the core, seen from the learner.

    The learner sits at a random seat of each game; opponents from ``pool`` play the
    other seats inside the step, so every observation is a learner decision.  The SB3
    plumbing (action checks, episode bookkeeping, accessors) is
    :class:`~umbrella_env.envs.sb3.BatchVecEnv`'s; the learner's actions go through the
    core's checked step, so an illegal one is refused before any game changes.  Deals and
    seats come from the generator seeded by ``seed`` at construction.
    """

    def __init__(self, num_envs: int, config: GameConfig, pool: OpponentPool, shaping: float, seed: int) -> None:
        self.config = config
        self.pool = pool
        self.shaping = float(shaping)
        self.state = E.allocate(config, num_envs)
        self.rng = np.random.default_rng(seed)
        self.seat = np.zeros(num_envs, dtype=np.int64)
        self.kind = np.zeros(num_envs, dtype=np.int64)
        self.render_mode = None
        obs_space = spaces.Box(*observation_bounds(), dtype=np.float32)
        super().__init__(num_envs, obs_space, spaces.Discrete(A.NUM_ACTIONS))
        self._edge = np.zeros(num_envs)  # score edge at the learner's pending decision (shaping)
        self.results: list[float] = []  # learner's end-of-game reward of every finished game

    def _reset_batch(self, seeds: list[int | None] | None) -> np.ndarray:
        self._new_games(np.arange(self.num_envs))
        return observe(self.state, seats=self.seat)

    def _step_batch(self, actions: np.ndarray) -> BatchStep:
        state = self.state
        E.step(state, np.where(state.done, -1, actions))  # checked: raises before any game changes
        self._play_opponents()
        after = self._edge_now()
        rewards = self.shaping * (after - self._edge)
        self._edge = after
        done = state.done.copy()
        idx = np.flatnonzero(done)
        final_obs = None
        if idx.size:
            final = self._end_reward(idx)
            rewards[idx] += final
            self.results += [float(x) for x in final]
            final_obs = np.zeros((self.num_envs, OBS_SIZE), dtype=np.float32)
            final_obs[idx] = observe(E.take(state, idx), seats=self.seat[idx])
            truncated = state.truncated.copy()
            self._new_games(idx)
        else:
            truncated = np.zeros(self.num_envs, dtype=bool)
        return BatchStep(observe(state, seats=self.seat), rewards, done & ~truncated, truncated, final_obs)

    def action_masks(self) -> np.ndarray:
        return E.legal_action_mask(self.state)

    # internals -----------------------------------------------------------------------
    def _new_games(self, idx: np.ndarray) -> None:
        E.reset(self.state, idx, self.rng)
        self.seat[idx] = self.rng.integers(0, self.config.num_players, idx.size)
        self.kind[idx] = self.pool.draw(idx.size)
        self._play_opponents()
        self._edge[idx] = self._edge_now()[idx]  # the shaping reward counts from the learner's first decision

    def _play_opponents(self) -> None:
        """Let the opponents move until every live game waits for the learner."""
        state = self.state
        for _ in range(100_000):
            waiting = np.flatnonzero(~state.done & (E.actor(state) != self.seat))
            if not waiting.size:
                return
            acts = np.full(self.num_envs, -1, dtype=np.int64)
            acts[waiting] = self.pool.actions(state, waiting, self.kind[waiting])
            E.step_unchecked(state, acts)
        raise RuntimeError("opponents did not hand the move back to the learner")

    def _edge_now(self) -> np.ndarray:
        return score_edge(E.scores(self.state), self.seat)

    def _end_reward(self, idx: np.ndarray) -> np.ndarray:
        sub = E.take(self.state, idx)
        return end_rewards(E.scores(sub), E.ranks(sub), sub.terminated, "win")[np.arange(idx.size), self.seat[idx]]


# --------------------------------------------------------------------------- evaluation
@dataclass
class EvalResult:
    games: int
    win_rate: float  # multiplayer: share of wins (shared wins count 1/k); solo: 0
    mean_score: float

    def metric(self, solo: bool) -> float:
        """Solo: mean score.  2-4 players: win rate, ties broken by the mean score
        (:func:`~umbrella_env.training.options.selection_metric`)."""
        return selection_metric(self.win_rate, self.mean_score, self.games, solo)

    def describe(self, solo: bool, opponent: str) -> str:
        if solo:
            return f"mean score {self.mean_score:.2f}"
        return f"win rate vs {opponent} {win_rate_text(self.win_rate, self.games)}, mean score {self.mean_score:.2f}"


def evaluate_model(model: Any, config: GameConfig, opponent: str, games: int, seed: int) -> EvalResult:
    """Play ``games`` games of the model (deterministic) against ``opponent``, the learner's
    seat rotating, through the match runner; wins are :func:`umbrella_env.match.win_credits`.

    Evaluation games use the standard turn limit whatever limit the training games use.
    """
    config = GameConfig(num_players=config.num_players, plate_level=config.plate_level, components=config.components)
    learner = PolicyAgent.from_model(model, name="learner")
    opp = build_agent(opponent, config, seed=seed) if config.num_players > 1 else None  # as main() checked it
    return EvalResult(games, *play_rotation(learner, opp, config, games, seed))


#: The run's settings a 2-4 player checkpoint records beyond the model, for a ``--resume``
#: to go on with them unless the command line gives others (:func:`adopt_settings`).
_RUN_SETTINGS = (("--shaping", "shaping"), ("--opponents", "opponents"))


def recorded_settings(args: argparse.Namespace, config: GameConfig) -> dict[str, Any]:
    """:data:`_RUN_SETTINGS` as a checkpoint's sidecar records them (checkpoint paths
    absolute, so that a resume from another folder finds them; none in solo), and the run's
    cloning (``pretraining``, :func:`cloning_record`; None for a run without one)."""
    cloning = {} if args.cloning is UNRECORDED else {"pretraining": args.cloning}
    if config.solo:
        return cloning
    return {"shaping": float(args.shaping), "opponents": [absolute_spec(s) for s in args.opponents], **cloning}


#: The options of the teacher's cloning that a checkpoint records (``pretraining``): a
#: resume may repeat them, equal, as in the interrupted command (:func:`~umbrella_env.training.options.adopt_cloning`).
_CLONING = (*CLONING_OPTIONS, ("--pretrain-opponents", "pretrain_opponents"))


def cloning_record(args: argparse.Namespace) -> dict[str, Any] | None:
    """The run's cloning as its checkpoints record it: :func:`options.cloning_record
    <umbrella_env.training.options.cloning_record>` and ``pretrain_opponents``, the ones the
    teacher's games were played against (absolute specs); None without ``--pretrain``."""
    record = shared_cloning_record(args)
    if record is None:
        return None
    opponents = ["self"] if args.players == 1 else (args.pretrain_opponents or args.opponents)
    return {**record, "pretrain_opponents": [absolute_spec(s) for s in opponents]}


def model_settings(model: Any) -> dict[str, Any]:
    """The network and PPO settings the model keeps (:data:`_FROM_CHECKPOINT`), as options."""
    kwargs = model.policy_kwargs
    return {
        "net": [int(n) for n in kwargs.get("net_arch", [])],
        "features": "figure" if kwargs.get("features_extractor_class") is FigureFeatures else "none",
        "n_epochs": int(model.n_epochs),
        "batch_size": int(model.batch_size),
        "learning_rate": float(model.learning_rate),
        "ent_coef": float(model.ent_coef),
    }


def save_checkpoint(
    model: Any, path: Path, config: GameConfig, extra: dict[str, Any], settings: dict[str, Any] | None = None
) -> None:
    """The model and its sidecar, which records the model file's SHA-256, the model's
    settings (:func:`model_settings`) and the run's ``settings`` (:func:`recorded_settings`),
    replaced both or neither (an interrupted save leaves the previous pair whole)."""
    save_model(
        model,
        path,
        num_players=config.num_players,
        plate_level=config.plate_level,
        max_turns=config.max_turns,
        **model_settings(model),
        **(settings or {}),
        **extra,
    )


class TrainCallback(BaseCallback):
    """Periodic evaluation (keeping the best model) and self-play snapshots.

    Evaluations and snapshots happen at the first step at or past each multiple of
    ``--eval-every`` / ``--snapshot-every`` steps, counted from the model's own step count
    (a resumed run goes on from its checkpoint's).  They happen while a rollout is being
    collected, so the model is the one of the last PPO update (up to one rollout,
    ``N_STEPS`` x ``--n-envs`` steps, before the step count recorded with it).  ``best``
    starts from the metric of the run's ``best.zip`` when the run resumes one measured the
    same way (:func:`resumed_best`)."""

    def __init__(
        self,
        args: argparse.Namespace,
        config: GameConfig,
        pool: OpponentPool | None,
        out: Path,
        best: float = -np.inf,
        metrics: MetricsFile | None = None,
    ) -> None:
        super().__init__()
        self.args, self.config, self.pool, self.out = args, config, pool, out
        self.settings = recorded_settings(args, config)
        self.best = best
        #: the run's progress.csv: each evaluation is a row of its own, at its own step
        self.metrics = metrics
        self.next_eval = args.eval_every
        self.next_snapshot = args.snapshot_every
        self.history: list[dict[str, Any]] = []
        self.start_timesteps = 0
        #: the steps the network has been updated on: the count at the start of the rollout being
        #: collected (SB3 updates after a whole rollout), all of them once ``learn`` returns
        self.trained_timesteps = 0

    def _on_training_start(self) -> None:
        t = self.num_timesteps
        self.start_timesteps = self.trained_timesteps = t
        self.next_eval = (t // self.args.eval_every + 1) * self.args.eval_every
        self.next_snapshot = (t // self.args.snapshot_every + 1) * self.args.snapshot_every
        if t > 0:  # a resumed run: its "self" seats play the resumed model from the first step
            self.snapshot(t)

    def snapshot(self, t: int) -> None:
        """The learner as it is now becomes the "self" opponent (when the pool has one)."""
        if self.pool is not None and "self" in self.pool.specs:
            path = self.out / "snapshot.zip"
            save_checkpoint(self.model, path, self.config, {"timesteps": int(t)}, self.settings)
            # its samples draw from its own generator, seeded by the run's seed and the step
            seed = int(np.random.SeedSequence([self.args.seed, int(t)]).generate_state(1)[0])
            self.pool.snapshot = PolicyAgent(path, deterministic=False, seed=seed)

    def _on_rollout_start(self) -> None:
        self.trained_timesteps = self.num_timesteps

    def _on_step(self) -> bool:
        t = self.num_timesteps
        if t >= self.next_snapshot:
            self.next_snapshot = (t // self.args.snapshot_every + 1) * self.args.snapshot_every
            self.snapshot(t)
        if t >= self.next_eval:
            self.next_eval = (t // self.args.eval_every + 1) * self.args.eval_every
            self.evaluate()
        return True

    def keep_if_best(self, model: Any, metric: float, timesteps: int) -> bool:
        """Save ``model`` as ``best.zip`` when ``metric`` beats the best so far (an equal one
        keeps the earlier model); whether it did."""
        if not metric > self.best:
            return False
        self.best = metric
        label = eval_label(self.args, self.config)
        extra = {"timesteps": timesteps, "eval": {label: metric}, "eval_games": self.args.eval_games}
        save_checkpoint(model, self.out / "best.zip", self.config, extra, self.settings)
        return True

    def evaluate(self, final: bool = False) -> EvalResult:
        """Evaluate the model as it is now; ``final``: the one after the last PPO update
        (logged and recorded as such: a periodic evaluation at the same step count measured
        the model of the update before)."""
        with refused_outputs(f"the evaluation at step {int(self.num_timesteps):,}"):
            res = evaluate_model(self.model, self.config, self.args.eval_opponent, self.args.eval_games, seed=EVAL_SEED)
        metric = res.metric(self.config.solo)
        entry = {"timesteps": int(self.num_timesteps), "metric": metric, "mean_score": res.mean_score}
        self.history.append({**entry, "final": True} if final else entry)
        improved = self.keep_if_best(self.model, metric, int(self.num_timesteps))
        # TensorBoard's point at the rollout's end, as SB3 writes everything it records; the
        # CSV's row at the evaluation's own step (a resume from best.zip keeps its row)
        self.logger.record("eval/metric", metric, exclude=("csv",))
        if self.metrics is not None:
            self.metrics.add({"timesteps": int(self.num_timesteps), "eval/metric": metric})
        if final:  # SB3 writes what is recorded at a rollout's end: there is none after the last
            self.logger.dump(step=self.num_timesteps)
        with above_progress():  # on a terminal, above the steps' bar
            print(
                f"[{'final eval' if final else 'eval'} @ {self.num_timesteps:,} steps, {res.games} games] "
                f"{res.describe(self.config.solo, self.args.eval_opponent)}" + ("  (new best)" if improved else ""),
                flush=True,
            )
        return res


def eval_label(args: argparse.Namespace, config: GameConfig) -> str:
    """What an evaluation's metric measures (the key of ``best.json``'s ``eval``; its
    ``eval_games`` says on how many games): :func:`~umbrella_env.training.options.selection_metric`.
    A ``best.json`` of another label was measured by another formula (before 2026-11-28 the
    label named win rate + mean score / 1000, which it no longer was) and is not compared."""
    return "mean score" if config.solo else f"win rate vs {args.eval_opponent}, ties broken by the mean score"


def meta_timesteps(resume: Path | None) -> int | None:
    """The step count recorded with a ``--resume`` checkpoint (None without one)."""
    if resume is None:
        return None
    timesteps = read_metadata(resume).get("timesteps", 0)
    problem = int_problem("its timesteps", timesteps, minimum=0)
    if problem:
        raise ValueError(f"--resume: the sidecar {str(sidecar_path(resume))!r} is damaged: {problem}")
    return int(timesteps)


def run_seed(args: argparse.Namespace) -> int:
    """The seed of the games, opponents and model of a run: ``--seed``, or for a ``--resume``
    :func:`resume_seed` of it and the checkpoint's step count."""
    return args.seed if args.resume is None else resume_seed(args.seed, meta_timesteps(args.resume) or 0)


def previous_summary(resume: Path | None, timesteps: int | None = None) -> dict[str, Any]:
    """The ``train_summary.json`` beside a ``--resume`` checkpoint (its cloning and
    evaluation history up to the checkpoint's ``timesteps``, which the resumed run's summary
    extends: a run resumed from its ``best.zip`` does not inherit the evaluations after it),
    or an empty dict."""
    if resume is None:
        return {}
    path = Path(resume).with_name("train_summary.json")
    if not path.is_file():
        return {}
    try:
        summary = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"--resume: the run's summary {str(path)!r} is unreadable ({exc})") from None
    history = summary.get("history", []) if isinstance(summary, dict) else None
    if (
        not isinstance(history, list)
        or not all(isinstance(h, dict) for h in history)
        or any(int_problem("", h.get("timesteps", 0), minimum=0) for h in history)
    ):
        raise ValueError(
            f"--resume: the run's summary {str(path)!r} is not a summary this trainer wrote "
            "(expected an object whose 'history' lists evaluations, each with its 'timesteps' count)"
        )
    if timesteps is not None:
        summary["history"] = [h for h in summary.get("history", []) if h.get("timesteps", 0) <= timesteps]
    return summary


def resumed_best(args: argparse.Namespace, config: GameConfig, out: Path) -> float:
    """The metric a resumed run must beat to replace ``best.zip``: the one recorded beside
    the ``--resume`` checkpoint, when it was measured the same way (copied into ``out``
    with its model when ``out`` is another folder); otherwise -inf (a new best is kept)."""
    found = best_beside(args.resume)
    if found is None:
        return -np.inf
    best, meta = found
    recorded, label = meta.get("eval", {}), eval_label(args, config)
    same_games = meta.get("eval_games") == args.eval_games  # older files do not say: not comparable
    if label not in recorded or not same_games:
        games = meta.get("eval_games", "an unrecorded number of")
        was = f"{', '.join(map(repr, recorded)) or 'nothing'} on {games} games"
        print(
            f"note: --resume: {str(best)!r} was measured another way ({was}; this run measures {label!r} on "
            f"{args.eval_games} games): not compared, the run's first evaluation makes a new best.zip",
            file=sys.stderr,
        )
        return -np.inf
    if not copy_checkpoint(best, out):
        return -np.inf
    return float(recorded[label])


def best_beside(resume: Path | None) -> tuple[Path, dict[str, Any]] | None:
    """The ``best.zip`` beside a ``--resume`` checkpoint and its metadata (None without a
    resume, a best.zip or its sidecar), or a ``ValueError`` when it is damaged or its recorded
    evaluations are not numbers: checked with the other files of a resume, before anything
    is written."""
    if resume is None:
        return None
    best = Path(resume).with_name("best.zip")
    if not (best.is_file() and sidecar_path(best).is_file()):
        return None
    try:
        meta = read_metadata(best)
    except ValueError as exc:  # a damaged best.zip: the run would replace it without a word
        raise ValueError(f"--resume: the best model beside it is damaged: {exc}") from None
    recorded = meta.get("eval", {})
    if not (isinstance(recorded, dict) and not any(real_problem("", v) for v in recorded.values())):
        raise ValueError(
            f"--resume: {str(sidecar_path(best))!r} records evaluations {recorded!r}; "
            "expected an object of numbers (the best model's evaluation)"
        )
    return best, meta


# --------------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    p = ShortUsageParser(
        prog=program_name(*TRAIN_COMMAND),
        description=__doc__,
        epilog="train.py --algo alphazero (or umbrella-train --algo alphazero) runs the Gumbel AlphaZero "
        "trainer instead; its options: train.py --algo alphazero --help",
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "--algo",
        choices=["ppo"],
        default="ppo",
        metavar="{ppo,alphazero}",
        help="the trainer: ppo (MaskablePPO, these options; the default) or, through train.py, alphazero",
    )
    p.add_argument("--players", type=int, default=2, help="1 (solo) to 4")
    p.add_argument("--level", type=int, default=1, help="plate level 1-4")
    p.add_argument(
        "--timesteps",
        type=float,
        default=1_000_000,
        help="learner decisions to train for (default 1e6); with --resume, the run's total, not the number to add",
    )
    p.add_argument("--n-envs", type=int, default=64, help="games played side by side")
    p.add_argument("--seed", type=trainer_seed, default=0, help=TRAINER_SEED_HELP)
    p.add_argument(
        "--out",
        type=path_option,
        default=None,
        help="output folder (default runs/train-<players>p-l<level>-<time>-<pid>)",
    )
    p.add_argument(
        "--opponents",
        nargs="+",
        default=["random", "self"],
        help="opponent pool for 2-4 players: random, self, or agent names (greedy, heuristic, ...)",
    )
    p.add_argument(
        "--resume",
        type=path_option,
        default=None,
        help="checkpoint .zip to continue training from (unpickled as it loads: only one you trust)",
    )
    p.add_argument(
        "--overwrite", action="store_true", help="replace a previous run in --out (refused without it or --resume)"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a ~2-minute run on 2 cores (2 players unless --players): clone the heuristic from "
        "1,000 games, then 100k PPO steps against random, greedy and self-play",
    )
    p.add_argument("--eval-every", type=int, default=50_000, help="steps between evaluations (best.zip kept)")
    p.add_argument("--eval-games", type=int, default=40, help="games per evaluation")
    p.add_argument("--eval-opponent", default="heuristic", help="opponent of the evaluation games (2-4 players)")
    p.add_argument("--snapshot-every", type=int, default=50_000, help="steps between self-play snapshots")
    p.add_argument("--shaping", type=float, default=0.1, help="weight of the score-difference shaping reward")
    p.add_argument(
        "--max-turns",
        type=int,
        default=TRAIN_MAX_TURNS,
        help=f"turn limit of training games (default {TRAIN_MAX_TURNS})",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--n-epochs", type=int, default=None, help="PPO epochs per rollout (default: solo 2, 2-4 players 3)")
    p.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="PPO minibatch size, at most a rollout: 32 x --n-envs (default: solo 2048, 2-4 players 1024, "
        "or the rollout when smaller)",
    )
    p.add_argument(
        "--features",
        choices=("figure", "none"),
        default="figure",
        help="policy input: 'figure' adds figure-progress features (agents.features)",
    )
    p.add_argument(
        "--net",
        type=int,
        nargs="+",
        default=None,
        help="hidden layer sizes of the policy and value MLPs (default: solo 128 128, 2-4 players 256 256)",
    )
    p.add_argument(
        "--pretrain",
        default=None,
        metavar="AGENT",
        help="behaviour-clone this agent (e.g. heuristic) before PPO (umbrella_env.training.imitation)",
    )
    p.add_argument("--pretrain-games", type=int, default=2000, help="teacher games for --pretrain")
    p.add_argument(
        "--pretrain-cache",
        type=path_option,
        default=None,
        metavar="FILE.npz",
        help="reuse the teacher games stored in this file, or store them there",
    )
    p.add_argument(
        "--pretrain-opponents",
        nargs="+",
        default=None,
        help="opponents of the teacher games (default: --opponents; 'self' is the teacher)",
    )
    p.add_argument("--pretrain-epochs", type=int, default=8, help="passes over the teacher's decisions")
    p.add_argument("--pretrain-lr", type=float, default=1e-3, help="Adam learning rate of the cloning")
    p.add_argument("--pretrain-batch", type=int, default=256, help="minibatch of the cloning")
    p.add_argument("--workers", type=int, default=2, help="processes playing the teacher games")
    p.add_argument("--learning-rate", type=float, default=5e-4, help="PPO Adam learning rate")
    p.add_argument("--ent-coef", type=float, default=0.01, help="PPO entropy bonus")
    p.add_argument(
        "--torch-threads",
        type=int,
        default=None,
        help="torch CPU threads (default: every core this process may use; "
        "1 is faster when other jobs share the machine)",
    )
    return p


N_STEPS = 32  # rollout length per game; a rollout is N_STEPS x --n-envs decisions


def minibatch_problem(
    batch_size: int,
    n_envs: int,
    whose: str = "--batch-size",
    fix: str = "give another --batch-size (one that divides the rollout wastes nothing)",
) -> str | None:
    """Why ``batch_size`` would leave a minibatch of one decision in a rollout of ``n_envs``
    games (``whose``: the option, or the checkpoint's; ``fix``: what to do), or None: PPO
    normalizes each minibatch's advantages, which is NaN for one sample (then a torch error)."""
    rollout = N_STEPS * n_envs
    batch = min(batch_size, rollout)
    if batch != 1 and rollout % batch != 1:
        return None
    return (
        f"{whose} {batch_size} leaves minibatches of 1 decision in each rollout of {rollout} ({N_STEPS} steps x "
        f"--n-envs {n_envs}): PPO normalizes a minibatch's advantages, which takes 2 or more; {fix}"
    )


def rollout_bytes(n_envs: int) -> int:
    """The memory of MaskablePPO's rollout buffer: float32 observations and action masks of
    ``N_STEPS`` decisions per game (the rest of a step's record is a few floats)."""
    return N_STEPS * n_envs * (OBS_SIZE + A.NUM_ACTIONS) * 4


def minibatch(batch_size: int, n_envs: int) -> int:
    """The PPO minibatch of ``--batch-size`` on ``--n-envs`` games: at most a rollout."""
    return min(batch_size, N_STEPS * n_envs)


def build_model(
    args: argparse.Namespace, env: Any, tensorboard_log: str | None = None, metrics: MetricsFile | None = None
) -> Any:
    """A fresh MaskablePPO with the hyperparameters of ``args`` (see :func:`build_parser`),
    logging as :func:`with_logger` says."""
    return with_logger(
        MaskablePPO(
            "MlpPolicy",
            env,
            n_steps=N_STEPS,
            batch_size=minibatch(args.batch_size, args.n_envs),
            n_epochs=args.n_epochs,
            learning_rate=args.learning_rate,
            gamma=GAMMA,
            ent_coef=args.ent_coef,
            policy_kwargs=policy_kwargs(args),
            seed=args.seed,
            device="cpu",
            tensorboard_log=tensorboard_log,
            verbose=0,
        ),
        metrics,
    )


class MetricsWriter(KVWriter):
    """SB3's logger output to a run's progress.csv: a row per dump (every rollout's end, and
    after the last update its figures), its step as the ``timesteps`` column.  The
    evaluations write their own rows (:class:`TrainCallback`)."""

    def __init__(self, metrics: MetricsFile) -> None:
        self.metrics = metrics

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        scalars = {k: v for k, v in filter_excluded_keys(key_values, key_excluded, "csv").items() if np.isscalar(v)}
        if scalars:
            self.metrics.add({"timesteps": int(step), **scalars})

    def close(self) -> None:
        pass


class LazyTensorBoard(KVWriter):
    """SB3's TensorBoard output, its folder made at the first write: a run stopped before
    its first rollout ends (Ctrl-C while cloning the teacher) leaves no ``tb/`` folder,
    which would make its ``--out`` a previous run."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.inner: TensorBoardOutputFormat | None = None

    def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
        if self.inner is None:
            self.inner = TensorBoardOutputFormat(self.folder)
        self.inner.write(key_values, key_excluded, step)

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()


def with_logger(model: Any, metrics: MetricsFile | None = None, resumed: bool = False) -> Any:
    """``model`` logging to ``metrics`` (a run's progress.csv) and to its TensorBoard folder
    if it has one (``MaskablePPO_<n>`` inside it, as SB3 names them: a new one per run, the
    last one continued by a ``resumed`` run); with neither, nowhere: SB3's own default,
    ``configure(folder=None)``, creates an empty ``SB3-<time>`` folder in the temporary
    directory at every ``learn``."""
    formats: list[KVWriter] = [] if metrics is None else [MetricsWriter(metrics)]
    if model.tensorboard_log is not None:
        name = "MaskablePPO"  # MaskablePPO.learn's tb_log_name
        number = get_latest_run_id(model.tensorboard_log, name) + (0 if resumed else 1)
        formats.append(LazyTensorBoard(str(Path(model.tensorboard_log) / f"{name}_{max(number, 1)}")))
    model.set_logger(Logger(folder=None, output_formats=formats))
    return model


def policy_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"net_arch": list(args.net)}
    if args.features == "figure":
        kwargs["features_extractor_class"] = FigureFeatures
    return kwargs


#: Defaults that depend on the mode: (solo, 2-4 players).  Solo keeps the network small so
#: that training on the native vector env runs above 4,000 env steps/s on 2 cores.
MODE_DEFAULTS = {"n_epochs": (2, 3), "batch_size": (2048, 1024), "net": ([128, 128], [256, 256])}


def resolve_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """Fill the options left at ``None`` with :data:`MODE_DEFAULTS` for ``args.players``."""
    for key, (solo, multi) in MODE_DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, solo if args.players == 1 else multi)
    return args


#: ``--quick``: clone the heuristic from 1,000 of its games, then 100k PPO steps (2-3 minutes on 2 cores).
QUICK = {
    "timesteps": 100_000,
    "n_envs": 64,
    "eval_every": 50_000,
    "eval_games": 60,
    "snapshot_every": 50_000,
    "pretrain": "heuristic",
    "pretrain_games": 1000,
    "pretrain_epochs": 8,
    "opponents": ["random", "greedy", "self"],
    "learning_rate": 2e-4,
    "ent_coef": 0.001,
}


#: The options of :data:`QUICK` that make a new policy (the cloning): a resumed ``--quick`` run
#: takes the others.
_PRETRAIN_KEYS = ("pretrain", "pretrain_games", "pretrain_epochs")


def _pretrain_opponents(args: argparse.Namespace, config: GameConfig) -> list[str]:
    return ["self"] if config.solo else (args.pretrain_opponents or args.opponents)


def load_pretrain_cache(args: argparse.Namespace, config: GameConfig) -> Demonstrations | None:
    """The teacher games of ``--pretrain-cache`` when that file exists (None when it does
    not: they are played and saved there), or a ``ValueError`` when it is not a cache of
    this run's teacher games.  Read before anything is removed or trained."""
    cache = args.pretrain_cache
    if args.pretrain is None or cache is None or not cache.is_file():
        return None
    try:
        demos = Demonstrations.load(cache)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        # NumPy's words for a file that is no archive advise loading it with pickle: not for a user to follow
        detail = "not a NumPy .npz archive" if "allow_pickle" in str(exc) else str(exc)
        raise ValueError(
            f"--pretrain-cache {str(cache)!r} is not a cache of teacher games written by this trainer ({detail}); "
            "remove it or give another file"
        ) from None
    opponents = _pretrain_opponents(args, config)
    demos.check_source(
        source(config, args.pretrain, opponents, args.pretrain_games, args.seed, args.shaping, GAMMA), cache
    )
    return demos


def clone_teacher(
    model: Any, args: argparse.Namespace, config: GameConfig, cached: Demonstrations | None = None
) -> tuple[list[dict[str, float]], dict[str, float]]:
    """``--pretrain``: the teacher's games (``cached``, from :func:`load_pretrain_cache`, or
    played now and saved to ``--pretrain-cache``), behaviour cloning, and one evaluation of
    the cloned policy; returns the cloning history and that evaluation (the baseline PPO
    starts from: ``pretrain_eval`` in ``train_summary.json``)."""
    opponents = _pretrain_opponents(args, config)
    cache = args.pretrain_cache
    if cached is not None:
        demos = cached
        print(f"loaded {len(demos):,} teacher decisions from {cache}", flush=True)
    else:
        demos = collect(
            config,
            args.pretrain,
            opponents,
            args.pretrain_games,
            args.seed,
            args.shaping,
            GAMMA,
            workers=args.workers,
            progress=not args.no_progress,
        )
        if cache is not None:  # a run stopped while it writes keeps no half-written cache
            write_atomically(cache, demos.save)
    history = pretrain(
        model,
        demos,
        args.pretrain_epochs,
        batch_size=args.pretrain_batch,
        seed=args.seed,
        learning_rate=args.pretrain_lr,
    )
    res = evaluate_model(model, config, args.eval_opponent, args.eval_games, seed=EVAL_SEED)
    print(f"[eval after pretraining, {res.games} games] {res.describe(config.solo, args.eval_opponent)}", flush=True)
    evaluation = {"games": res.games, "metric": res.metric(config.solo), "mean_score": res.mean_score}
    return history, evaluation if config.solo else {**evaluation, "win_rate": res.win_rate}


#: Integer options that must be at least 1 (name, attribute).
_POSITIVE = (
    ("--eval-every", "eval_every"),
    ("--eval-games", "eval_games"),
    ("--snapshot-every", "snapshot_every"),
    ("--max-turns", "max_turns"),
    ("--n-epochs", "n_epochs"),
    ("--batch-size", "batch_size"),
    ("--workers", "workers"),
    ("--pretrain-games", "pretrain_games"),
    ("--pretrain-epochs", "pretrain_epochs"),
    ("--pretrain-batch", "pretrain_batch"),
)


#: Real options in (0, maximum], and those in [0, maximum] (None: no maximum).
_POSITIVE_REAL = (
    ("--learning-rate", "learning_rate", MAX_LEARNING_RATE),
    ("--pretrain-lr", "pretrain_lr", MAX_LEARNING_RATE),
)
_NON_NEGATIVE = (("--ent-coef", "ent_coef", None), ("--shaping", "shaping", MAX_SHAPING))


#: Options that only a 2-4 player run uses (refused in solo rather than silently ignored; a
#: solo reward is the score itself).
_MULTIPLAYER_ONLY = (
    ("--opponents", "opponents"),
    ("--eval-opponent", "eval_opponent"),
    ("--pretrain-opponents", "pretrain_opponents"),
    ("--shaping", "shaping"),
    ("--snapshot-every", "snapshot_every"),
)
#: Options a ``--resume`` takes from its checkpoint (MaskablePPO.load keeps the saved network
#: and PPO settings): one given must equal the recorded value (:func:`adopt_settings`).
_FROM_CHECKPOINT = (
    ("--net", "net"),
    ("--features", "features"),
    ("--n-epochs", "n_epochs"),
    ("--batch-size", "batch_size"),
    ("--learning-rate", "learning_rate"),
    ("--ent-coef", "ent_coef"),
)
#: Options that only a run with ``--pretrain`` uses.
_PRETRAIN_ONLY = (
    ("--pretrain-games", "pretrain_games"),
    ("--pretrain-cache", "pretrain_cache"),
    ("--pretrain-opponents", "pretrain_opponents"),
    ("--pretrain-epochs", "pretrain_epochs"),
    ("--pretrain-lr", "pretrain_lr"),
    ("--pretrain-batch", "pretrain_batch"),
    ("--workers", "workers"),
)


def check_options(args: argparse.Namespace, given: Collection[str] = ()) -> None:
    """Refuse, before anything is built or written, options outside their range and options
    ``given`` on the command line that this run would ignore (ValueError)."""
    check_game(args.players, args.level, args.max_turns)
    problems = [int_problem(flag, getattr(args, attr)) for flag, attr in _POSITIVE]
    problems += [
        int_problem("--n-envs", args.n_envs, 1, E.MAX_BATCH),  # the games of a batch of the core
        real_problem("--timesteps", args.timesteps, minimum=1, maximum=MAX_TIMESTEPS),
        None if args.torch_threads is None else int_problem("--torch-threads", args.torch_threads),
    ]
    problems += [
        real_problem(flag, getattr(args, attr), positive=True, maximum=top) for flag, attr, top in _POSITIVE_REAL
    ]
    problems += [real_problem(flag, getattr(args, attr), minimum=0, maximum=top) for flag, attr, top in _NON_NEGATIVE]
    problem = first_problem(problems)
    if problem:
        raise ValueError(problem)
    memory, need = memory_bytes(), rollout_bytes(args.n_envs)
    if memory is not None and need > memory // 2:
        most = max(1, memory // 2 // rollout_bytes(1))
        raise ValueError(
            f"--n-envs {args.n_envs} needs about {need / 2**30:.1f} GiB for one rollout ({N_STEPS} steps x "
            f"{OBS_SIZE} observation + {A.NUM_ACTIONS} mask floats per game), over half of this machine's "
            f"{memory / 2**30:.1f} GiB: give at most {most:,}"
        )
    rollout = N_STEPS * args.n_envs
    if args.resume is None and "batch_size" in given and args.batch_size > rollout:
        raise ValueError(
            f"--batch-size {args.batch_size} is larger than a rollout ({N_STEPS} steps x --n-envs {args.n_envs} = "
            f"{rollout}): give at most {rollout}, or more --n-envs"
        )
    problem = None if args.resume is not None else minibatch_problem(args.batch_size, args.n_envs)
    if problem:  # a resumed run keeps its checkpoint's batch size: checked when it is loaded
        raise ValueError(problem)
    check_layers("--net", args.net)
    if args.players == 1:
        for flag, attr in _MULTIPLAYER_ONLY:
            if attr in given:
                raise ValueError(f"{flag} applies to 2-4 players only (solo has no opponents); leave it out")
    if args.resume is not None:
        if Path(args.resume).suffix.lower() != ".zip":
            raise ValueError(
                f"--resume {str(args.resume)!r}: expected a .zip checkpoint of this trainer (MaskablePPO); "
                f"an alphazero .pt checkpoint resumes with {TRAIN_COMMAND[0]} --algo alphazero --resume"
            )
    if args.pretrain is None and args.resume is None:  # a resume's are its cloning's (adopt_cloning)
        for flag, attr in _PRETRAIN_ONLY:
            if attr in given:
                raise ValueError(
                    f"{flag} needs --pretrain AGENT (the teacher to clone); leave it out or add --pretrain"
                )


def adopt_settings(args: argparse.Namespace, given: Collection[str], config: GameConfig) -> list[str]:
    """A ``--resume`` keeps its checkpoint's network and PPO settings (:data:`_FROM_CHECKPOINT`:
    one given must equal the recorded one, so the interrupted command with ``--resume`` added
    runs) and goes on with its run's ``--max-turns`` (the observation's turn fraction counts
    to it) and, at 2-4 players, ``--shaping`` and ``--opponents`` (:data:`_RUN_SETTINGS`)
    unless the command line gives them: a given one that differs is
    used, and the note lines returned say so.  ``ValueError`` for a sidecar that cannot be
    read or records a value out of range, and for a recorded opponent that cannot be built."""
    if "opponents" in given:  # compared with the recorded ones, whose checkpoint paths are absolute
        args.opponents = [absolute_spec(s) for s in args.opponents]
    try:
        meta = read_metadata(args.resume)
    except ValueError as exc:
        raise ValueError(f"--resume: {exc}") from None
    for flag, dest in _FROM_CHECKPOINT:
        if dest not in given:
            continue
        saved, now = meta.get(dest), getattr(args, dest)
        if saved is None:  # a checkpoint written before the sidecar recorded them
            raise ValueError(
                f"{flag} comes from the checkpoint on --resume (its network and PPO settings); leave it out"
            )
        if (list(now) if dest == "net" else now) != saved:  # a given --batch-size is never above a rollout
            raise ValueError(
                f"{flag} {shown_option(now)} differs from the checkpoint's ({shown_option(saved)}): leave {flag} "
                "out (a resume keeps its network and PPO settings)"
            )
    settings = [("--max-turns", "max_turns"), *([] if config.solo else _RUN_SETTINGS)]
    try:
        cloning = adopt_cloning(args, given, meta, _CLONING, {d for _, d in _PRETRAIN_ONLY})
        notes = cloning + adopt_recorded(args, given, meta, settings)
        check_options(args, given)  # the recorded values' ranges
    except ValueError as exc:
        raise ValueError(f"--resume: with the settings the checkpoint records: {exc}") from None
    if not config.solo and "opponents" not in given:
        check_recorded_opponents(sorted(set(args.opponents)), config)
    return notes


def parse_options(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[argparse.Namespace, set[str]]:
    """The parsed options and the options written on the command line: the ``--quick``
    preset fills in every option the command line leaves out (an option given keeps its
    value, even when it equals the default), then the per-mode defaults
    (:data:`MODE_DEFAULTS`) fill in the rest."""
    args = parser.parse_args(argv)
    given = given_options(build_parser, argv)
    if args.quick:  # a resumed --quick run: the preset without its cloning, which made the policy resumed
        preset = QUICK if args.resume is None else {k: v for k, v in QUICK.items() if k not in _PRETRAIN_KEYS}
        apply_preset(args, preset, given)
    args = resolve_defaults(args)
    args.cloning = cloning_record(args) if args.resume is None else None  # a resume's: adopt_cloning
    return args, given


@command
def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, given = parse_options(parser, sys.argv[1:] if argv is None else list(argv))
    try:
        check_options(args, given)
        config = GameConfig(num_players=args.players, plate_level=args.level, max_turns=args.max_turns)
        notes: list[str] = []
        if args.resume is not None:  # its recorded --max-turns may change the game's configuration
            notes = adopt_settings(args, given, config)
            config = GameConfig(num_players=args.players, plate_level=args.level, max_turns=args.max_turns)
        if "snapshot_every" in given and not config.solo and "self" not in args.opponents:
            raise ValueError(
                "--snapshot-every: no 'self' among the opponents (the learner's snapshots), so no snapshot is "
                "taken; leave it out, or add self to --opponents"
            )
        # Unknown agents, and checkpoints made for another game, are refused here, before any work.
        if args.pretrain is not None:
            build_agent(args.pretrain, config)
        if config.num_players > 1:
            build_agent(args.eval_opponent, config)
            cloning = args.pretrain_opponents if args.pretrain is not None else None  # a resume clones nothing
            for spec in sorted({*args.opponents, *(cloning or ())} - {"random", "self"}):
                build_agent(spec, config)
        else:
            args.eval_opponent = "random"
        out = args.out or default_run_dir(f"train-{config.num_players}p-l{config.plate_level}")
        problem = output_dir_problem(out)
        if problem is not None:
            raise ValueError(f"--out {str(out)!r} cannot hold the run: {problem}")
        problem = overwrite_problem(out, RUN_FILES, args.overwrite, {"--resume": args.resume})
        if problem is not None:
            raise ValueError(problem)
        if args.pretrain is not None and args.pretrain_cache is not None and not args.pretrain_cache.is_file():
            problem = output_file_problem(args.pretrain_cache, ".npz")
            if problem is not None:
                raise ValueError(f"--pretrain-cache: {problem}")
        previous = previous_summary(args.resume, meta_timesteps(args.resume))
        metrics_rows: list[dict[str, str]] = []
        pool = None
        seed = run_seed(args)
        if config.solo:
            env: VecEnv = UmbrellaSB3VecEnv(
                num_envs=args.n_envs, plate_level=config.plate_level, max_turns=config.max_turns
            )
            env.seed(seed)
        else:
            pool = OpponentPool(args.opponents, config, seed=seed)
            env = LearnerVecEnv(args.n_envs, config, pool, args.shaping, seed=seed)
        if args.resume is not None:
            meta = read_metadata(args.resume)
            check_configuration(
                meta, args.resume, num_players=config.num_players, plate_level=config.plate_level,
                named="--resume", target="this run",
            )  # fmt: skip
            if not zipfile.is_zipfile(args.resume):
                raise ValueError(f"--resume {str(args.resume)!r} is not a readable MaskablePPO .zip (truncated?)")
            try:  # loadable, before --overwrite removes anything
                resumed = load_model(args.resume)
            except ValueError as exc:
                raise ValueError(f"--resume: {exc}") from None
            problem = minibatch_problem(
                resumed.batch_size, args.n_envs, "the --resume checkpoint's batch size", "give another --n-envs"
            )
            if problem:
                raise ValueError(problem)
            best_beside(args.resume)  # its evaluations are read at the start of training
            # the metrics of the resumed run up to its checkpoint (refused here if damaged)
            metrics_rows = read_rows(Path(args.resume).parent / METRICS_FILE, "timesteps", resumed.num_timesteps)
            done = int(resumed.num_timesteps)
            if int(args.timesteps) <= done:
                raise ValueError(
                    f"--timesteps {int(args.timesteps):,}: --resume {str(args.resume)!r} has trained {done:,} steps; "
                    f"give --timesteps of more than {done:,} (the run's total, not the number to add)"
                )
        cached = load_pretrain_cache(args, config)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    for note in notes:  # the resume passed every check
        say(note)
    if args.overwrite:
        remove_run(out, RUN_FILES)
    with output_folder(out):  # a run that failed before writing anything leaves no empty folder
        return _train(
            args, parser, config, env, pool, out, previous, cached, MetricsFile(out / METRICS_FILE, metrics_rows)
        )


def _train(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    config: GameConfig,
    env: Any,
    pool: OpponentPool | None,
    out: Path,
    previous: dict[str, Any],
    cached: Demonstrations | None,
    metrics: MetricsFile,
) -> int:
    note = oversubscribed("--torch-threads", args.torch_threads, "threads")
    if note:
        print(note, file=sys.stderr)
    args.torch_threads = args.torch_threads or local_cpus()
    set_torch(threads=max(1, args.torch_threads))
    try:  # what SB3 writes with: a tensorboard that is installed but does not import is none
        from torch.utils.tensorboard import SummaryWriter  # noqa: F401

        tb: str | None = str(out / "tb")
    except ImportError:
        tb = None
    if args.resume is not None:
        try:
            # the seed of this run, not the one saved in the checkpoint (which load would apply)
            with moved_modules():  # a checkpoint of 0.1.0 names the features' old module
                loaded = MaskablePPO.load(args.resume, env=env, device="cpu", tensorboard_log=tb, seed=run_seed(args))
            model = with_logger(loaded, metrics, resumed=True)
        except (ValueError, KeyError, RuntimeError, OSError, zipfile.BadZipFile) as exc:
            parser.error(f"--resume {str(args.resume)!r} cannot be loaded as a MaskablePPO model: {exc}")
    else:
        model = build_model(args, env, tb, metrics)
    pretrain_history = pretrain_eval = None
    if args.pretrain is not None:
        try:
            pretrain_history, pretrain_eval = clone_teacher(model, args, config, cached)
        except KeyboardInterrupt:  # nothing is trained yet: nothing to save
            print(
                f"\ninterrupted in --pretrain {args.pretrain} (its teacher games or the cloning): "
                "no checkpoint was written",
                flush=True,
            )
            return 130
        except TrainingDiverged as exc:
            kept = "no checkpoint was written"
            print(f"error: {diverged_message(exc, kept, f'--pretrain-lr (now {args.pretrain_lr:g})')}", file=sys.stderr)
            return 1
        except WorkerDied as exc:  # a teacher-game worker died: nothing is trained yet either
            print(f"error: {exc}; no checkpoint was written", file=sys.stderr, flush=True)
            return 1
    callback = TrainCallback(args, config, pool, out, resumed_best(args, config, out), metrics)
    # measured as the PPO evaluations are: the cloned policy is the first best
    if pretrain_eval is not None and callback.keep_if_best(model, pretrain_eval["metric"], 0):
        print(f"best.zip: the cloned policy, until a PPO evaluation beats it -> {out / 'best.zip'}", flush=True)
    # PPO collects whole rollouts: the steps it trains are the next multiple of one rollout,
    # and the progress bar counts to that (it read "2,048/10" for --timesteps 10).
    # A resume's --timesteps is the run's total (as alphazero's --iterations and rllib_train's
    # --timesteps): it trains what is left of it.
    rollout = model.n_steps * model.n_envs
    done = 0 if args.resume is None else int(model.num_timesteps)
    asked = int(args.timesteps) - done
    timesteps = -(-asked // rollout) * rollout
    rounded = ""
    if timesteps != asked:
        left = "" if done == 0 else f" less the {done:,} of --resume"
        rounded = f" (--timesteps {int(args.timesteps):,}{left} in whole rollouts of {rollout:,})"
    to = "" if done == 0 else f", to {done + timesteps:,} in all"
    print(
        f"training {config.num_players}-player level {config.plate_level} for {timesteps:,} steps{rounded}{to} "
        f"on {args.n_envs} games -> {out}",
        flush=True,
    )
    t0 = time.perf_counter()
    interrupted, final, elapsed = False, None, None
    # not SB3's bar (progress_bar=True): it draws nothing in a log, and closes only when
    # training ends normally (interrupted, its refresh thread went on)
    bar = None if args.no_progress else StepProgress(done + timesteps, done)
    try:
        model.learn(
            timesteps,
            callback=callback if bar is None else CallbackList([callback, bar]),
            reset_num_timesteps=args.resume is None,
        )
        elapsed = time.perf_counter() - t0
        callback.trained_timesteps = int(model.num_timesteps)
        check_policy(model, f"the PPO update at step {int(model.num_timesteps):,}")
        _close(bar)  # the steps are done: their last line before the final evaluation's
        final = callback.evaluate(final=True)
    except KeyboardInterrupt:  # Ctrl-C, in the PPO steps or the final evaluation: keep what was trained
        interrupted = True
        _close(bar)  # before the message: closed after it, the bar was drawn again under it
        collected = int(model.num_timesteps)
        # the steps of the rollout being collected (or fitted) are not in the network: a resume counts
        # from the last update's, so that it trains them again rather than skipping them
        model.num_timesteps = callback.trained_timesteps
        dropped = "" if collected == model.num_timesteps else f" (of the {collected:,} collected: the last update's)"
        say(
            f"\ninterrupted at {int(model.num_timesteps):,} trained steps{dropped}: saving last.zip and the summary",
            file=sys.stderr,
        )
    except (ValueError, TrainingDiverged) as exc:  # a diverged policy fails at its next forward pass
        _close(bar)
        diverged = exc if isinstance(exc, TrainingDiverged) else _diverged(exc, model)
        if diverged is None:
            raise
        best = out / "best.zip"
        kept = f"{best} holds the best evaluation's model" if best.is_file() else "no checkpoint was written"
        say(
            f"\nerror: {diverged_message(diverged, kept, f'--learning-rate (now {args.learning_rate:g})')}",
            file=sys.stderr,
        )
        return 1
    finally:
        _close(bar)
    elapsed = max(time.perf_counter() - t0 if elapsed is None else elapsed, 1e-9)
    steps = int(model.num_timesteps) - callback.start_timesteps  # this session's (a resume's own)
    save_checkpoint(model, out / "last.zip", config, {"timesteps": int(model.num_timesteps)}, callback.settings)
    metrics.flush()  # a resume stopped before its first row: its file is the resumed rows, not the stopped run's
    summary = {
        "players": config.num_players,
        "level": config.plate_level,
        "timesteps": int(model.num_timesteps),
        "resumed_from": None if args.resume is None else str(args.resume),
        "session_timesteps": steps,
        "interrupted": interrupted,
        "seconds": round(elapsed, 1),
        "env_steps_per_second": round(steps / elapsed, 1),
        "eval_opponent": None if config.solo else args.eval_opponent,
        # a resumed run keeps the cloning and the evaluations of the sessions before it
        "pretrain": pretrain_history if pretrain_history is not None else previous.get("pretrain"),
        "pretrain_eval": pretrain_eval if pretrain_eval is not None else previous.get("pretrain_eval"),
        "history": [*previous.get("history", []), *callback.history],
        "best_metric": callback.best,
        "final_metric": None if final is None else final.metric(config.solo),
    }
    write_atomically(
        out / "train_summary.json", lambda tmp: tmp.write_text(json_text(summary, indent=2) + "\n", encoding="utf-8")
    )
    best = out / "best.zip"  # none when stopped before the first evaluation
    kept = (
        f"best model: {best}" if best.is_file() else f"no evaluation yet, no best.zip; last model: {out / 'last.zip'}"
    )
    say(
        f"{'stopped' if interrupted else 'done'}: {steps:,} steps in {elapsed:.0f} s "
        f"({steps / elapsed:,.0f} env steps/s), {int(model.num_timesteps):,} in all; {kept}"
    )
    return 130 if interrupted else 0


def check_policy(model: Any, stage: str) -> None:
    """:class:`TrainingDiverged` when the policy's weights, or its outputs on the first
    positions of its last rollout, are not finite: the last update of a run is checked here,
    before the final evaluation plays the policy (each earlier one by the next forward pass)."""
    check_weights(stage, model.policy.state_dict())
    buffer = model.rollout_buffer  # [steps, envs, ...], or flattened by the update's passes
    observations = torch.as_tensor(buffer.observations.reshape(-1, *buffer.obs_shape)[:64])
    masks = buffer.action_masks.reshape(-1, buffer.action_masks.shape[-1])[:64]
    with torch.no_grad(), refused_outputs(stage):
        model.policy.get_distribution(observations, action_masks=masks)


class StepProgress(BaseCallback):
    """The PPO steps' progress (:class:`umbrella_env.parallel.Progress`): a bar on a
    terminal, a line every 30 s in a log; a resumed run's count starts at its checkpoint's."""

    def __init__(self, total: int, initial: int) -> None:
        super().__init__()
        self.total, self.initial = total, initial
        self.progress: Progress | None = None

    def _on_training_start(self) -> None:
        self.progress = Progress(self.total, True, "PPO steps", initial=self.initial, unit="step")

    def _on_step(self) -> bool:
        assert self.progress is not None
        self.progress.update(self.training_env.num_envs)
        return True

    def close(self) -> None:
        """Close the bar (closing twice is harmless)."""
        if self.progress is not None:
            self.progress.close()
            self.progress = None


def _close(bar: StepProgress | None) -> None:
    if bar is not None:
        bar.close()


def _diverged(exc: ValueError, model: Any) -> TrainingDiverged | None:
    """The divergence behind a ``ValueError`` raised inside ``model.learn``: the policy's
    weights or outputs no longer finite (None for any other error, which is raised as is)."""
    stage = f"the PPO update at step {int(model.num_timesteps):,}"
    try:
        check_weights(stage, model.policy.state_dict())
    except TrainingDiverged as diverged:
        return diverged
    return TrainingDiverged(stage, "the policy's outputs are not finite (NaN or inf)") if invalid_outputs(exc) else None


if __name__ == "__main__":
    sys.exit(main())
