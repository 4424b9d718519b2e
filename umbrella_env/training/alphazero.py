"""Train a Gumbel AlphaZero network by self-play (``python train.py --algo alphazero``).

    python -m umbrella_env.training.alphazero --players 2 --iterations 40 --out runs/az-2p
    python train.py --algo alphazero --players 1 --iterations 30 --out runs/az-solo

One iteration:

1. **self-play**: ``--games`` games, split over ``--workers`` processes; each process plays
   its games all at once, every decision searched by :class:`agents.az.search.GumbelSearch`
   with ``--simulations`` simulations over determinized copies, the leaves of all its
   games evaluated in one forward pass per simulation step;
2. every searched decision (more than one legal action) goes to the **replay buffer**
   (``--buffer`` positions, oldest dropped): observation, legal mask, the improved policy
   of the search (policy target) and, once the game ends, the outcome values of every
   seat in the decider-relative order (:func:`agents.az.search.outcome_values`);
3. ``--train-steps`` Adam steps on minibatches of ``--batch-size`` drawn from the buffer
   (cross-entropy to the improved policy + ``--value-weight`` x squared value error).

Before the first iteration, ``--pretrain-games`` games of the ``--teacher`` agent
(``heuristic``, or ``search`` with ``--teacher-sims``, ``search-common`` for the
search on common random numbers; played by
:func:`umbrella_env.match.play_out`) fit the network for ``--pretrain-epochs`` epochs
(policy: the teacher's action; value: the same outcome values; the learning rate
annealed from ``--pretrain-learning-rate``), so self-play starts from a sensible policy
instead of random play; the teacher's positions also fill the replay buffer, so the first
iterations do not fit a few self-play games over and over.  ``--quick`` is the README's
two-minute run.

``--heuristic-inputs`` trains a network that also reads the heuristic agent's action values
(:class:`agents.az.net.HeuristicInputs`; every stored position carries them).  ``--init
CHECKPOINT`` starts a new run from a checkpoint's weights (the shipped ``az-2p-net`` is
``az-2p`` continued this way) and evaluates that starting point first.  ``--iterations 0``
stops there: the teacher's games are fitted (or the ``--init`` weights taken), evaluated and
saved, with no self-play (the two stages of the shipped solo network amount to such runs).

``--selfplay policy-gradient`` (solo only) replaces the search in step 1 and the replay
buffer in steps 2-3 by a policy-gradient step on the final score: the network alone plays
``--games`` games, sampling each decision from its policy at temperature
``--pg-temperature``; every decision with a choice then gets the advantage of its game's
final score over the value network's prediction (normalized over the iteration), and
``--pg-epochs`` passes of clipped-ratio minibatch steps (PPO's surrogate, ratio clipped to
1 +- ``--pg-clip``; plus ``--value-weight`` x the squared error of the value, the score /
40) follow (:func:`pg_chunk`, :func:`pg_update`).  It optimizes the network alone, where the
Gumbel self-play optimizes what the search teaches it (docs/alphazero.md, "Self-play and
training").  The search options still go to the checkpoint's sidecar: they are the search
the network is played with (``--eval-search-games``, the agent with search).

Every ``--eval-every`` iterations the network alone plays ``--eval-games`` games against
``heuristic`` and ``--eval-search-games`` against ``search`` (``--eval-search-sims``
simulations per decision) through :func:`umbrella_env.match.play_game`, seats rotated, on
deals no training game uses; solo: the mean score of the network alone and of network +
search.  The best network is kept as ``best.pt``; ``last.pt`` is written at every
evaluation; ``history.json`` holds every evaluation and ``learning_curve.png`` plots it
(when matplotlib is installed); ``progress.csv`` holds every scalar logged, a row per
iteration (:mod:`umbrella_env.training.metrics`), and TensorBoard's ``tb/`` the same when it
is installed.  ``--resume last.pt`` continues a run.  Runs are
reproducible from ``--seed`` for fixed ``--workers`` and ``--torch-threads``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from umbrella_env.cli_args import HelpFormatter, ShortUsageParser, command, missing_extra, set_torch
from umbrella_env.core.jsonio import parse_json

try:
    import torch
except ImportError as exc:  # pragma: no cover - exercised only without the train extra
    missing_extra(__name__, exc, "the alphazero trainer")

from agents import make_agent
from agents.az.agent import SHIPPED_MODELS, AZAgent, model_file
from agents.az.net import (
    DEFAULT_HIDDEN,
    DEFAULT_SLIDE_HIDDEN,
    MAX_STORED,
    SOLO_SCALE,
    AZNet,
    HeuristicInputs,
    load_network,
    read_metadata,
    save_network,
    value_size,
)
from agents.az.search import DEFAULT_C_SCALE, GumbelSearch, outcome_values, to_relative
from agents.checkpoint import (
    check_configuration,
    compressed_record,
    copy_checkpoint,
    file_sha256,
    nonfinite_weights,
    sidecar_path,
)
from agents.checks import MAX_C_SCALE, MAX_LAYER_SIZE, check_finite_outputs
from agents.search import PLAYOUT_TURNS
from umbrella_env.cli_args import first_problem, int_problem, is_terminal, path_option, real_problem
from umbrella_env.core.actions import NUM_ACTIONS
from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig
from umbrella_env.core.engine import MAX_BATCH, draw_key
from umbrella_env.core.observation import OBS_SIZE
from umbrella_env.core.single import SingleGame
from umbrella_env.envs.common import play_forced  # self-play records and searches choices only
from umbrella_env.match import play_game, play_out
from umbrella_env.parallel import (
    Progress,
    WorkerDied,
    above_progress,
    local_cpus,
    oversubscribed,
    process_pool,
    stop_pool,
    worker_died,
)
from umbrella_env.paths import (
    default_run_dir,
    json_text,
    output_dir_problem,
    output_folder,
    remove_run,
    write_atomically,
)
from umbrella_env.training.divergence import (
    TrainingDiverged,
    check_losses,
    check_optimizer,
    check_outputs,
    check_weights,
    diverged_message,
    optimizer_moments,
    refused_outputs,
)
from umbrella_env.training.metrics import METRICS_FILE, MetricsFile, read_rows
from umbrella_env.training.options import (
    MAX_LEARNING_RATE,
    RUN_FILES,
    TRAINER_SEED_HELP,
    adopt_recorded,
    apply_preset,
    check_game,
    check_layers,
    check_repeated,
    given_options,
    overwrite_problem,
    trainer_seed,
    win_rate_text,
)

PROG = "python -m umbrella_env.training.alphazero"
#: Self-play turn limit: a well-played 2-player game lasts about 30 turns; an early network
#: that wanders would otherwise spend minutes on one game.  A truncated game is a draw.
SELFPLAY_MAX_TURNS = 100
#: Agents the network can imitate before self-play (``--teacher``).
#: ``search-common``: the ``search`` agent on common random numbers (``common_numbers=True``).
TEACHERS = ("heuristic", "search", "search-common")
#: Base seed of the evaluation deals (training deals come from --seed's SeedSequence).
EVAL_SEED = 990_000
#: ``--selfplay``: the Gumbel search's games (module doc), or the network alone's games and a
#: policy-gradient step on the final score (solo).
SELFPLAY_MODES = ("gumbel", "policy-gradient")


# --------------------------------------------------------------------------- samples
#: One position: (observation, legal mask, policy target, values, heuristic inputs or None).
Row = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, "np.ndarray | None"]


class Samples:
    """Positions with their targets: observations (float16), packed legal masks, policy
    targets (float16, dense over the 968 actions), decider-relative values and, for a
    network with heuristic inputs, those inputs (float16 [N, 968]; else None)."""

    def __init__(
        self,
        obs: np.ndarray,
        masks: np.ndarray,
        policy: np.ndarray,
        values: np.ndarray,
        heur: np.ndarray | None = None,
    ) -> None:
        self.obs, self.masks, self.policy, self.values, self.heur = obs, masks, policy, values, heur

    def __len__(self) -> int:
        return len(self.obs)

    def __getitem__(self, idx: Any) -> Samples:
        return Samples(
            self.obs[idx],
            self.masks[idx],
            self.policy[idx],
            self.values[idx],
            None if self.heur is None else self.heur[idx],
        )

    @classmethod
    def build(cls, rows: list[Row], v: int, heuristic_inputs: bool = False) -> Samples:
        if not rows:
            return cls(
                np.zeros((0, OBS_SIZE), np.float16),
                np.zeros((0, (NUM_ACTIONS + 7) // 8), np.uint8),
                np.zeros((0, NUM_ACTIONS), np.float16),
                np.zeros((0, v), np.float32),
                np.zeros((0, NUM_ACTIONS), np.float16) if heuristic_inputs else None,
            )
        obs, masks, policy, values, heur = zip(*rows)
        return cls(
            np.stack(obs).astype(np.float16),
            np.packbits(np.stack(masks), axis=1),
            np.stack(policy).astype(np.float16),
            np.stack(values).astype(np.float32),
            np.stack(heur).astype(np.float16) if heuristic_inputs else None,
        )

    @classmethod
    def concat(cls, parts: Sequence[Samples]) -> Samples:
        obs, masks, policy, values = (
            np.concatenate([getattr(p, k) for p in parts]) for k in ("obs", "masks", "policy", "values")
        )
        heur = None if parts[0].heur is None else np.concatenate([p.heur for p in parts])
        return cls(obs, masks, policy, values, heur)


class ReplayBuffer:
    """The last ``capacity`` positions, sampled uniformly by a seeded generator."""

    def __init__(self, capacity: int, v: int, heuristic_inputs: bool = False) -> None:
        self.capacity = capacity
        self.data = Samples.build([], v, heuristic_inputs)

    def __len__(self) -> int:
        return len(self.data)

    def add(self, new: Samples) -> None:
        data = Samples.concat([self.data, new])
        if len(data) > self.capacity:
            cut = len(data) - self.capacity
            data = data[cut:]
        self.data = data

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        return self.data[rng.integers(0, len(self.data), n)]


#: One decision of a game in progress: (observation, legal mask, policy target, seat, heuristic inputs or None).
Record = tuple[np.ndarray, np.ndarray, np.ndarray, int, "np.ndarray | None"]


def game_targets(records: list[Record], game: SingleGame, margin_weight: float) -> list[Row]:
    """Rows of one finished game: each decision's targets, values in its decider's relative order."""
    z = outcome_values(game, margin_weight)
    return [(obs, mask, policy, to_relative(z, seat), heur) for obs, mask, policy, seat, heur in records]


# --------------------------------------------------------------------------- self-play
def _build_net(job: dict[str, Any]) -> AZNet:
    """The network of a self-play job (its architecture and weights)."""
    net = AZNet(job["config"].num_players, job["hidden"], job["slide_hidden"], job.get("heuristic_inputs", False))
    weights = job["weights"]
    net.load_state_dict({k: torch.as_tensor(v) for k, v in weights.items()})
    net.eval()
    return net


#: How the self-play workers name the network they play (:func:`agents.checks.outputs_not_finite`).
SELFPLAY_NET = "the network in training"

#: The counters :func:`selfplay_chunk` returns, summed over workers by the trainer and the benchmark.
SELFPLAY_STATS = (
    "games",
    "decisions",
    "forced",
    "simulations",
    "leaves",
    "seconds",
    "network_s",
    "engine_s",
    "rollout_s",
    "inputs_s",
)


def selfplay_chunk(job: dict[str, Any]) -> dict[str, Any]:
    """Play the games of ``job["seeds"]`` all at once with one network (module doc, step 1)."""
    config: GameConfig = job["config"]
    net = _build_net(job)
    timers = {"network": 0.0}

    def evaluate(obs: np.ndarray, heur: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        t0 = time.perf_counter()
        out = net.predict(obs, heur)
        timers["network"] += time.perf_counter() - t0
        check_finite_outputs(SELFPLAY_NET, *out)  # a NaN prior would steer the search to any action
        return out

    search = GumbelSearch(
        evaluate,
        simulations=job["simulations"],
        max_considered=job["max_considered"],
        c_scale=job.get("c_scale", DEFAULT_C_SCALE),
        margin_weight=job["margin_weight"],
        rollout_weight=job.get("rollout_weight", 0.0),
        rollout_turns=job.get("rollout_turns", PLAYOUT_TURNS),
        heuristic_inputs=net.heuristic_inputs,
    )
    t_start = time.perf_counter()
    rngs = [np.random.default_rng(s) for s in job["seeds"]]
    games = [SingleGame.new(config, draw_key(rng)) for rng in rngs]
    records: list[list[Record]] = [[] for _ in games]
    rows: list[Row] = []
    live = list(range(len(games)))
    decisions = forced = 0
    engine = 0.0

    def finish(i: int) -> None:
        rows.extend(game_targets(records[i], games[i], job["margin_weight"]))

    while live:
        t0 = time.perf_counter()
        for i in live:  # forced moves need no search
            forced += play_forced(games[i])
            if games[i].done:
                finish(i)
        engine += time.perf_counter() - t0
        live = [i for i in live if not games[i].done]
        if not live:
            break
        results = search.run([games[i] for i in live], [rngs[i] for i in live])
        t0 = time.perf_counter()
        for i, res in zip(live, results):
            g = games[i]
            seat = g.actor
            policy = np.zeros(NUM_ACTIONS, dtype=np.float32)
            policy[res.actions] = res.policy
            records[i].append((g.observe(seat), g.legal_mask(), policy, seat, res.inputs))
            g.step(res.action)
            decisions += 1
            if g.done:
                finish(i)
        engine += time.perf_counter() - t0
        live = [i for i in live if not games[i].done]
    elapsed = time.perf_counter() - t_start
    stats = dict(search.stats)
    return {
        "samples": Samples.build(rows, value_size(config.num_players), net.heuristic_inputs),
        "games": len(games),
        "decisions": decisions,
        "forced": forced,
        "scores": [g.scores() for g in games],
        "seconds": elapsed,
        "network_s": timers["network"],
        "engine_s": engine + stats["engine_s"],
        "simulations": stats["simulations"],
        "leaves": stats["leaves"],
        "rollout_s": stats["rollout_s"],
        "inputs_s": stats["inputs_s"],
    }


# --------------------------------------------------------------------------- policy gradient
@dataclass
class Decisions:
    """The decisions with a choice of the network's own games (``--selfplay policy-gradient``):
    observations, heuristic inputs (or None), the legal action ids padded with -1 [N, L],
    the index of the action played among them, and the final score of the decision's game."""

    obs: np.ndarray
    heur: np.ndarray | None
    legal: np.ndarray
    chosen: np.ndarray
    score: np.ndarray

    def __len__(self) -> int:
        return len(self.obs)

    @classmethod
    def concat(cls, parts: Sequence[Decisions]) -> Decisions:
        width = max(p.legal.shape[1] for p in parts)
        legal = np.concatenate(
            [np.pad(p.legal, ((0, 0), (0, width - p.legal.shape[1])), constant_values=-1) for p in parts]
        )
        heur = None if parts[0].heur is None else np.concatenate([p.heur for p in parts])
        return cls(
            np.concatenate([p.obs for p in parts]),
            heur,
            legal,
            np.concatenate([p.chosen for p in parts]),
            np.concatenate([p.score for p in parts]),
        )


def pg_chunk(job: dict[str, Any]) -> dict[str, Any]:
    """Solo games of ``job["seeds"]`` played all at once by the network alone, each decision
    with a choice sampled from softmax(logits / ``temperature``) over the legal actions with
    the game's own generator (one forward pass per step for all the games in flight)."""
    config: GameConfig = job["config"]
    net = _build_net(job)
    inputs = HeuristicInputs() if net.heuristic_inputs else None
    temperature = float(job["temperature"])
    t_start = time.perf_counter()
    rngs = [np.random.default_rng(s) for s in job["seeds"]]
    games = [SingleGame.new(config, draw_key(rng)) for rng in rngs]
    #: per game, its decisions with a choice: (observation, heuristic inputs, legal ids, index played)
    records: list[list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]] = [[] for _ in games]
    no_inputs = np.zeros(0, dtype=np.float32)
    forced = 0
    network = inputs_s = 0.0
    while True:
        todo: list[tuple[int, np.ndarray]] = []
        for i, g in enumerate(games):
            forced += play_forced(g)
            if not g.done:
                todo.append((i, np.asarray(g.legal_actions(), dtype=np.int64)))
        if not todo:
            break
        obs = np.stack([games[i].observe() for i, _ in todo]).astype(np.float32)
        t0 = time.perf_counter()
        heur = None if inputs is None else np.stack([inputs(games[i], legal) for i, legal in todo])
        t1 = time.perf_counter()
        logits, _ = net.predict(obs, heur)
        network += time.perf_counter() - t1
        check_finite_outputs(SELFPLAY_NET, logits)  # NaN probabilities: NumPy's sampler would refuse them
        inputs_s += t1 - t0
        for j, (i, legal) in enumerate(todo):
            z = logits[j, legal].astype(np.float64) / temperature
            p = np.exp(z - z.max())
            k = int(rngs[i].choice(len(legal), p=p / p.sum()))
            records[i].append((obs[j], no_inputs if heur is None else heur[j], legal, k))
            games[i].step(int(legal[k]))
    rows = [(r, float(g.score(0))) for rec, g in zip(records, games) for r in rec]
    width = max((len(r[2]) for r, _ in rows), default=1)
    legal_ids = np.full((len(rows), width), -1, dtype=np.int64)
    for n, (r, _) in enumerate(rows):
        legal_ids[n, : len(r[2])] = r[2]
    data = Decisions(
        obs=np.array([r[0] for r, _ in rows], dtype=np.float32).reshape(-1, OBS_SIZE),
        heur=None if inputs is None else np.array([r[1] for r, _ in rows], dtype=np.float32).reshape(-1, NUM_ACTIONS),
        legal=legal_ids,
        chosen=np.array([r[3] for r, _ in rows], dtype=np.int64),
        score=np.array([sc for _, sc in rows], dtype=np.float32),
    )
    elapsed = time.perf_counter() - t_start
    return {
        "samples": data,
        "games": len(games),
        "decisions": len(rows),
        "forced": forced,
        "scores": [g.scores() for g in games],
        "seconds": elapsed,
        "network_s": network,
        "engine_s": elapsed - network - inputs_s,
        "simulations": 0,
        "leaves": 0,
        "rollout_s": 0.0,
        "inputs_s": inputs_s,
    }


def pg_update(
    net: AZNet,
    opt: torch.optim.Optimizer,
    data: Decisions,
    *,
    temperature: float,
    epochs: int,
    batch: int,
    clip: float,
    value_weight: float,
    rng: np.random.Generator,
    stage: str = "the policy-gradient update",
) -> dict[str, float]:
    """``epochs`` shuffled passes of clipped-ratio policy-gradient steps over the decisions of
    one iteration (module doc); the sampling policy is the network before the first step.
    Returns the mean policy and value losses and the policy's mean entropy
    (:class:`TrainingDiverged` when they or the weights stop being finite)."""
    n = len(data)
    valid = torch.as_tensor(data.legal >= 0)
    legal = torch.as_tensor(np.maximum(data.legal, 0))
    chosen = torch.as_tensor(data.chosen)
    target = torch.as_tensor(data.score / SOLO_SCALE)
    heur_all = None if data.heur is None else torch.as_tensor(data.heur.astype(np.float32))
    x_all, s_all = encode_all(net, data.obs, data.heur)

    def forward(idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits, values = net.heads(x_all[idx], s_all[idx], None if heur_all is None else heur_all[idx])
        z = torch.gather(logits, 1, legal[idx]) / temperature
        logp = torch.log_softmax(z.masked_fill(~valid[idx], -1e9), dim=1)
        return logp.gather(1, chosen[idx, None])[:, 0], values[:, 0], logp

    net.eval()
    with torch.no_grad():
        old, baseline = [], []
        for lo in range(0, n, 2048):
            lp, v, _ = forward(torch.arange(lo, min(lo + 2048, n)))
            old.append(lp)
            baseline.append(v)
        old_logp = torch.cat(old)
        adv = target - torch.cat(baseline)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8) if n > 1 else adv * 0.0
    net.train()
    tot_p = tot_v = tot_h = 0.0
    steps = 0
    for _ in range(epochs):
        order = torch.as_tensor(rng.permutation(n))
        for lo in range(0, n, batch):
            idx = order[lo : lo + batch]
            lp, v, logp = forward(idx)
            ratio = torch.exp(lp - old_logp[idx])
            a = adv[idx]
            policy_loss = -torch.min(ratio * a, torch.clamp(ratio, 1 - clip, 1 + clip) * a).mean()
            value_loss = ((v - target[idx]) ** 2).mean()
            p_loss, v_loss = float(policy_loss.detach()), float(value_loss.detach())
            check_losses(stage, policy_loss=p_loss, value_loss=v_loss)
            opt.zero_grad()
            (policy_loss + value_weight * value_loss).backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            entropy = -(logp.exp() * logp.masked_fill(~valid[idx], 0.0)).sum(dim=1).mean()
            tot_p += p_loss
            tot_v += v_loss
            tot_h += float(entropy.detach())
            steps += 1
    net.eval()
    check_phase(stage, net, opt, (lambda: forward(idx)[:2]) if steps else None)
    steps = max(steps, 1)
    return {"policy_loss": tot_p / steps, "value_loss": tot_v / steps, "entropy": tot_h / steps}


# --------------------------------------------------------------------------- teacher games
def teacher_agent(teacher: str, simulations: int, seed: int) -> Any:
    """The teacher of the pretraining games: ``heuristic``, or ``search`` (``search-common``:
    on common random numbers) with ``simulations``."""
    if teacher == "heuristic":
        return make_agent(teacher, seed=seed)
    return make_agent(teacher, seed=seed, simulations=simulations)


def teacher_chunk(job: dict[str, Any]) -> Samples:
    """Teacher games (every seat the teacher): each decision with a choice, the
    teacher's action as a one-hot policy target and the game's outcome values."""
    config: GameConfig = job["config"]
    inputs = HeuristicInputs() if job.get("heuristic_inputs", False) else None
    rows: list[Row] = []
    for seed in job["seeds"]:
        rng = np.random.default_rng(seed)
        agents = [
            teacher_agent(job["teacher"], job.get("teacher_sims", 16), int(rng.integers(2**63)))
            for _ in range(config.num_players)
        ]
        records: list[Record] = []

        def record(game: SingleGame, seat: int, action: int, records: list[Record] = records) -> None:
            mask = game.legal_mask()
            if mask.sum() > 1:
                policy = np.zeros(NUM_ACTIONS, dtype=np.float32)
                policy[action] = 1.0
                heur = None if inputs is None else inputs(game, np.flatnonzero(mask))
                records.append((game.observe(seat), mask, policy, seat, heur))

        game = play_out(agents, SingleGame.new(config, draw_key(rng)), on_move=record)
        rows += game_targets(records, game, job["margin_weight"])
    return Samples.build(rows, value_size(config.num_players), inputs is not None)


def _heur(b: Samples) -> torch.Tensor | None:
    return None if b.heur is None else torch.as_tensor(b.heur.astype(np.float32))


# --------------------------------------------------------------------------- learning
def _learn(
    opt: torch.optim.Optimizer, logits: torch.Tensor, values: torch.Tensor, b: Samples, value_weight: float, stage: str
) -> tuple[float, float]:
    """One Adam step on policy cross-entropy + ``value_weight`` x value squared error of the
    minibatch ``b``; returns (policy loss, value loss).  A loss that is not finite raises
    :class:`TrainingDiverged` (for ``stage``) before the step."""
    mask = torch.as_tensor(np.unpackbits(b.masks, axis=1, count=NUM_ACTIONS).astype(bool))
    target = torch.as_tensor(b.policy.astype(np.float32))
    logp = torch.log_softmax(logits.masked_fill(~mask, -1e9), dim=1)
    policy_loss = -(target * logp).sum(dim=1).mean()
    value_loss = ((values - torch.as_tensor(b.values)) ** 2).sum(dim=1).mean()
    p_loss, v_loss = float(policy_loss.detach()), float(value_loss.detach())
    check_losses(stage, policy_loss=p_loss, value_loss=v_loss)
    opt.zero_grad()
    (policy_loss + value_weight * value_loss).backward()
    opt.step()
    return p_loss, v_loss


def check_phase(
    stage: str, net: AZNet, opt: torch.optim.Optimizer, last_outputs: Callable[[], Sequence[torch.Tensor]] | None
) -> None:
    """The end of an update phase (divergence module): :class:`TrainingDiverged` for weights
    not finite or beyond what a checkpoint stores, an optimizer state not finite, or the
    outputs of ``last_outputs()`` (the phase's last minibatch again, through the updated
    network: no draw, no state changed; None when the phase took no step) not finite."""
    check_weights(stage, net.state_dict(), MAX_STORED)
    check_optimizer(stage, opt.state_dict(), [name for name, _ in net.named_parameters()])
    if last_outputs is not None:
        with torch.no_grad():
            check_outputs(stage, *last_outputs())


def train_steps(
    net: AZNet,
    opt: torch.optim.Optimizer,
    data: ReplayBuffer,
    steps: int,
    batch: int,
    rng: np.random.Generator,
    value_weight: float,
    stage: str = "the update",
) -> dict[str, float]:
    """``steps`` Adam steps on minibatches drawn uniformly from the replay buffer; returns
    the mean losses (:class:`TrainingDiverged` when they or the weights stop being finite)."""
    net.train()
    tot_p = tot_v = 0.0
    for _ in range(steps):
        b = data.sample(batch, rng)
        logits, values = net(torch.as_tensor(b.obs.astype(np.float32)), _heur(b))
        p_loss, v_loss = _learn(opt, logits, values, b, value_weight, stage)
        tot_p += p_loss
        tot_v += v_loss
    net.eval()
    check_phase(stage, net, opt, (lambda: net(torch.as_tensor(b.obs.astype(np.float32)), _heur(b))) if steps else None)
    return {"policy_loss": tot_p / max(steps, 1), "value_loss": tot_v / max(steps, 1)}


def encode_all(
    net: AZNet, obs: np.ndarray, heur: np.ndarray | None, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """The network's parameter-free input features (:meth:`AZNet.encode`: trunk input and
    per-slide features) of every position, computed once, in chunks, stored as ``dtype``."""
    codes, slides = [], []
    for lo in range(0, len(obs), 1024):
        h = None if heur is None else torch.as_tensor(heur[lo : lo + 1024].astype(np.float32))
        x, per_slide, _ = net.encode(torch.as_tensor(obs[lo : lo + 1024].astype(np.float32)), h)
        codes.append(x.to(dtype))
        slides.append(per_slide.to(dtype))
    return torch.cat(codes), torch.cat(slides)


def fit_samples(
    net: AZNet,
    opt: torch.optim.Optimizer,
    data: Samples,
    epochs: int,
    batch: int,
    rng: np.random.Generator,
    value_weight: float,
    stage: str = "pretraining",
) -> dict[str, float]:
    """Pretraining: ``epochs`` shuffled passes over a fixed set of samples, the learning
    rate on a cosine from its value down to a tenth of it (then restored).  The network's
    parameter-free input features (:meth:`AZNet.encode`) are computed once per sample.
    :class:`TrainingDiverged` when the losses or the weights stop being finite."""
    x_all, s_all = encode_all(net, data.obs, data.heur, torch.float16)
    h_all = None if data.heur is None else torch.as_tensor(data.heur)
    per_epoch = max(1, len(data) // batch)
    steps = max(1, epochs * per_epoch)
    base_lr = [g["lr"] for g in opt.param_groups]
    net.train()
    tot_p = tot_v = 0.0
    order = rng.permutation(len(data))
    for step in range(steps):
        f = 0.1 + 0.45 * (1.0 + np.cos(np.pi * step / steps))
        for g, lr in zip(opt.param_groups, base_lr):
            g["lr"] = lr * f
        if step % per_epoch == 0:
            order = rng.permutation(len(data))
        idx = order[(step % per_epoch) * batch : (step % per_epoch + 1) * batch]
        b = data[idx]
        t = torch.as_tensor(idx)
        logits, values = net.heads(x_all[t].float(), s_all[t].float(), None if h_all is None else h_all[t].float())
        p_loss, v_loss = _learn(opt, logits, values, b, value_weight, stage)
        tot_p += p_loss
        tot_v += v_loss
    for g, lr in zip(opt.param_groups, base_lr):
        g["lr"] = lr
    net.eval()
    h = None if h_all is None else h_all[t].float()
    check_phase(stage, net, opt, lambda: net.heads(x_all[t].float(), s_all[t].float(), h))
    return {"policy_loss": tot_p / steps, "value_loss": tot_v / steps, "steps": steps}


# --------------------------------------------------------------------------- evaluation
def eval_seed(i: int) -> int:
    """Seed of evaluation game ``i`` (deals that no training game uses)."""
    return EVAL_SEED + i


def evaluate_network(
    net: AZNet,
    config: GameConfig,
    opponent: Any | None,
    games: int,
    *,
    search: bool = False,
    simulations: int = 16,
    search_options: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, float]:
    """Games of the network (alone, or with ``simulations`` of search, ``search_options``
    passed to :class:`~agents.az.agent.AZAgent`) through :func:`umbrella_env.match.play_game`,
    seats rotated; ``opponent`` is an agent (None in solo); ``progress(1)`` after each game.
    Returns the win rate (shared wins split; 0 in solo) and the network's mean score."""
    options = {"simulations": simulations, **(search_options or {})} if search else {}
    me = AZAgent(net, search=search, plate_level=config.plate_level, name="learner", **options)
    wins = score = 0.0
    for i in range(games):
        seat = i % config.num_players
        agents = [opponent] * config.num_players
        agents[seat] = me
        res = play_game(agents, config, eval_seed(i))
        wins += res.credits[seat]
        score += res.scores[seat]
        if progress is not None:
            progress(1)
    return {"win_rate": wins / games if config.num_players > 1 else 0.0, "mean_score": score / games}


def search_opponent(simulations: int, seed: int = 0) -> Any:
    """The ``search`` agent with a reduced budget (training's evaluation opponent)."""
    return make_agent("search", seed=seed, simulations=simulations)


def search16(seed: int | None = None) -> Any:
    """``search`` with 16 simulations per decision: a factory for ``evaluate.py``
    (``--agents umbrella_env.training.alphazero:search16``), the budget of the training
    evaluations."""
    return make_agent("search", seed=seed, simulations=16)


def search50(seed: int | None = None) -> Any:
    """``search`` with 50 simulations per decision (``umbrella_env.training.alphazero:search50``)."""
    return make_agent("search", seed=seed, simulations=50)


def az_2p_128(seed: int | None = None) -> Any:
    """The shipped ``az-2p`` with 128 simulations per decision (``umbrella_env.training.alphazero:az_2p_128``)."""
    return make_agent("az-2p", seed=seed, simulations=128)


def az_solo_128(seed: int | None = None) -> Any:
    """The shipped ``az-solo`` with 128 simulations per decision (``umbrella_env.training.alphazero:az_solo_128``)."""
    return make_agent("az-solo", seed=seed, simulations=128)


def az_solo_256(seed: int | None = None) -> Any:
    """The shipped ``az-solo`` with 256 simulations over 8 considered root actions
    (``umbrella_env.training.alphazero:az_solo_256``)."""
    return make_agent("az-solo", seed=seed, simulations=256, max_considered=8)


def az_2p_value(seed: int | None = None) -> Any:
    """The shipped ``az-2p`` searching with the value network alone at the leaves, no playouts
    (``umbrella_env.training.alphazero:az_2p_value``; the search settings it was trained with)."""
    return make_agent("az-2p", seed=seed, rollout_weight=0.0, max_considered=None)


def az_solo_value(seed: int | None = None) -> Any:
    """The shipped ``az-solo`` searching with the value network alone at the leaves
    (``umbrella_env.training.alphazero:az_solo_value``)."""
    return make_agent("az-solo", seed=seed, rollout_weight=0.0, max_considered=None)


def plot_history(history: list[dict[str, Any]], path: Path, solo: bool) -> bool:
    """The learning curve (win rates, or solo mean scores, per evaluation); False without matplotlib."""
    try:
        from matplotlib.figure import Figure  # not pyplot: the caller's backend stays as it is
    except ImportError:
        return False
    x = [h["games"] for h in history]
    fig = Figure(figsize=(6.4, 3.8))
    ax = fig.subplots()
    if solo:
        ax.plot(x, [h["net_score"] for h in history], marker="o", label="network alone")
        if any("search_score" in h for h in history):
            ax.plot(
                [h["games"] for h in history if "search_score" in h],
                [h["search_score"] for h in history if "search_score" in h],
                marker="s",
                label="network + search",
            )
        ax.set_ylabel("mean score (solo)")
    else:
        ax.plot(x, [100 * h["vs_heuristic"] for h in history], marker="o", label="network alone vs heuristic")
        if any("vs_search" in h for h in history):
            ax.plot(
                [h["games"] for h in history if "vs_search" in h],
                [100 * h["vs_search"] for h in history if "vs_search" in h],
                marker="s",
                label=f"network alone vs search ({history[-1].get('search_sims', '?')} sims)",
            )
        ax.axhline(50, color="grey", lw=0.8, ls="--")
        ax.set_ylabel("win rate (%)")
    ax.set_xlabel("self-play games")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    ax.set_title(history[-1].get("title", "Gumbel AlphaZero learning curve"), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


# --------------------------------------------------------------------------- CLI
def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    p = ShortUsageParser(prog=prog, description=__doc__, formatter_class=HelpFormatter)
    p.add_argument("--players", type=int, default=2, help="1 (solo) to 4 (default 2)")
    p.add_argument("--level", type=int, default=1, help="plate level 1-4 (default 1)")
    p.add_argument(
        "--iterations",
        type=int,
        default=40,
        help="self-play + training iterations (default 40; 0: only the teacher games or --init, evaluated and "
        "saved); with --resume, the run's total, not the number to add",
    )
    p.add_argument("--games", type=int, default=64, help="self-play games per iteration (default 64)")
    p.add_argument(
        "--selfplay",
        choices=SELFPLAY_MODES,
        default="gumbel",
        help="gumbel: games of the Gumbel search, fitted from the replay buffer (default); policy-gradient "
        "(solo): games of the network alone and a policy-gradient step on the final score (module doc)",
    )
    p.add_argument(
        "--pg-temperature",
        type=float,
        default=0.3,
        help="policy-gradient: the games sample softmax(logits / T) (default 0.3)",
    )
    p.add_argument(
        "--pg-epochs", type=int, default=3, help="policy-gradient: passes over an iteration's decisions (default 3)"
    )
    p.add_argument(
        "--pg-clip",
        type=float,
        default=0.2,
        help="policy-gradient: the probability ratio is clipped to 1 +- this (default 0.2)",
    )
    p.add_argument("--simulations", type=int, default=16, help="search simulations per decision (default 16)")
    p.add_argument("--max-considered", type=int, default=16, help="root actions considered (default 16)")
    p.add_argument(
        "--c-scale",
        type=float,
        default=DEFAULT_C_SCALE,
        help=f"weight of the search's Q values in the improved policy, sigma's c_scale (default {DEFAULT_C_SCALE})",
    )
    p.add_argument(
        "--rollout-weight",
        type=float,
        default=0.0,
        help="lambda in [0, 1]: weight of heuristic playouts in the search's leaf values "
        "(default 0: the value network alone; playouts cost far more than a network leaf)",
    )
    p.add_argument(
        "--rollout-turns",
        type=int,
        default=PLAYOUT_TURNS,
        help=f"whole turns of a playout at 2-4 players (default {PLAYOUT_TURNS})",
    )
    p.add_argument("--buffer", type=int, default=60_000, help="replay buffer positions (default 60000)")
    p.add_argument("--batch-size", type=int, default=256, help="minibatch size (default 256)")
    p.add_argument("--train-steps", type=int, default=200, help="Adam steps per iteration (default 200)")
    p.add_argument(
        "--learning-rate", type=float, default=3e-4, help="Adam learning rate of the self-play training (default 3e-4)"
    )
    p.add_argument(
        "--pretrain-learning-rate",
        type=float,
        default=1e-3,
        help="peak learning rate of the pretraining, annealed to a tenth (default 1e-3)",
    )
    p.add_argument("--weight-decay", type=float, default=1e-5, help="Adam weight decay (default 1e-5)")
    p.add_argument("--value-weight", type=float, default=1.0, help="weight of the value loss (default 1)")
    p.add_argument(
        "--margin-weight",
        type=float,
        default=0.5,
        help="2-4 players: share of the score margin in the value targets, 0-1 (default 0.5)",
    )
    p.add_argument(
        "--hidden",
        type=int,
        nargs="+",
        default=list(DEFAULT_HIDDEN),
        help=f"trunk layer sizes (default {' '.join(map(str, DEFAULT_HIDDEN))})",
    )
    p.add_argument(
        "--slide-hidden",
        type=int,
        default=DEFAULT_SLIDE_HIDDEN,
        help=f"width of the shared slide scorer (default {DEFAULT_SLIDE_HIDDEN})",
    )
    p.add_argument(
        "--heuristic-inputs",
        action="store_true",
        help="the network also reads the heuristic agent's value of every legal action "
        "(agents.az.net.HeuristicInputs; the agent then needs the game even without search)",
    )
    p.add_argument(
        "--teacher",
        choices=TEACHERS,
        default="heuristic",
        help="agent whose games the network imitates before self-play (default heuristic)",
    )
    p.add_argument(
        "--teacher-sims",
        type=int,
        default=16,
        help="simulations per decision of a search teacher (default 16)",
    )
    p.add_argument(
        "--pretrain-games",
        type=int,
        default=1000,
        help="teacher games fitted before self-play, 0 for none (default 1000; with --init, 0 unless another "
        "pretraining option is given: the run starts from the checkpoint's network)",
    )
    p.add_argument("--pretrain-epochs", type=int, default=4, help="epochs over the teacher games (default 4)")
    p.add_argument("--eval-every", type=int, default=5, help="iterations between evaluations (default 5)")
    p.add_argument(
        "--eval-games",
        type=int,
        default=100,
        help="games of the network alone vs heuristic (solo: alone) per evaluation (default 100)",
    )
    p.add_argument(
        "--eval-search-games",
        type=int,
        default=20,
        help="games vs search (solo: of network + search) per evaluation, 0 for none (default 20)",
    )
    p.add_argument(
        "--eval-search-sims",
        type=int,
        default=50,
        help="simulations per decision of the search opponent in evaluations (default 50)",
    )
    p.add_argument(
        "--max-turns",
        type=int,
        default=SELFPLAY_MAX_TURNS,
        help=f"turn limit of the self-play games (default {SELFPLAY_MAX_TURNS}; evaluation games "
        f"use the standard {DEFAULT_MAX_TURNS})",
    )
    p.add_argument("--workers", type=int, default=None, help="self-play processes (default: the cores available)")
    p.add_argument("--torch-threads", type=int, default=1, help="torch threads of the training process (default 1)")
    p.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="minutes: stop after the iteration that passes it (then evaluate and save)",
    )
    p.add_argument("--seed", type=trainer_seed, default=0, help=TRAINER_SEED_HELP)
    p.add_argument(
        "--out", type=path_option, default=None, help="output folder (default runs/az-<P>p-l<level>-<time>-<pid>)"
    )
    p.add_argument(
        "--resume",
        type=path_option,
        default=None,
        help="continue from a .pt checkpoint of this trainer (--hidden, --slide-hidden and --heuristic-inputs, "
        "and how its games were played, --selfplay, --max-turns, --simulations, --max-considered, --c-scale, "
        "--rollout-weight, --rollout-turns, --margin-weight and --pg-*, left out, are the checkpoint's)",
    )
    p.add_argument(
        "--overwrite", action="store_true", help="replace a previous run in --out (refused without it or --resume)"
    )
    p.add_argument(
        "--init",
        type=path_option,
        default=None,
        help=f"start a new run from the weights of a .pt checkpoint of this trainer or a shipped model "
        f"({', '.join(SHIPPED_MODELS)}) (same players and level; the layer options left out are the checkpoint's; "
        "with --heuristic-inputs from a network without them, the new inputs start at their defaults); its name "
        "and SHA-256 go to the sidecar",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar; a line per iteration instead (as when the output is a file: on a terminal the bar "
        "shows progress and only the iterations that evaluate print a line)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="a run of about 2 minutes on 2 cores (the README's main job; options given explicitly win): "
        + ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in QUICK.items()),
    )
    return p


#: ``--quick``: imitate 2,000 heuristic games, then 2 short self-play iterations.
QUICK: dict[str, Any] = {
    "pretrain_games": 2000,
    "pretrain_epochs": 4,
    "iterations": 2,
    "games": 32,
    "simulations": 16,
    "max_considered": 4,
    "train_steps": 100,
    "eval_every": 2,
    "eval_games": 100,
    "eval_search_games": 0,
}


def parse_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> tuple[argparse.Namespace, set[str]]:
    """The parsed options, with the ``--quick`` preset filling in every option the command
    line leaves out (an option given keeps its value, even when it equals the default), and
    the options written on the command line."""
    args = parser.parse_args(argv)
    given = given_options(build_parser, argv)
    if args.quick:
        apply_preset(args, QUICK, given)
    if args.init is not None:
        args.init = model_file(args.init)
        if not {"pretrain_games", *_PRETRAIN_ONLY} & given:  # the start is the checkpoint's network, not the teacher's
            args.pretrain_games = 0
    return args, given


#: (flag, attribute, lowest valid value)
_MINIMUM = (
    ("--iterations", "iterations", 0),
    ("--games", "games", 1),
    ("--simulations", "simulations", 1),
    ("--max-considered", "max_considered", 2),
    ("--buffer", "buffer", 1),
    ("--batch-size", "batch_size", 1),
    ("--train-steps", "train_steps", 0),
    ("--pretrain-games", "pretrain_games", 0),
    ("--pretrain-epochs", "pretrain_epochs", 1),
    ("--eval-every", "eval_every", 1),
    ("--eval-games", "eval_games", 1),
    ("--eval-search-games", "eval_search_games", 0),
    ("--eval-search-sims", "eval_search_sims", 1),
    ("--max-turns", "max_turns", 1),
    ("--workers", "workers", 1),
    ("--torch-threads", "torch_threads", 1),
    ("--teacher-sims", "teacher_sims", 1),
    ("--rollout-turns", "rollout_turns", 1),
    ("--pg-epochs", "pg_epochs", 1),
)
#: Real options in (0, maximum] (None: no maximum).
_POSITIVE_REAL = (
    ("--learning-rate", "learning_rate", MAX_LEARNING_RATE),
    ("--pretrain-learning-rate", "pretrain_learning_rate", MAX_LEARNING_RATE),
    ("--value-weight", "value_weight", None),
    ("--c-scale", "c_scale", MAX_C_SCALE),
)
#: The lowest ``--pg-temperature``: the logits divided by a smaller one can reach the -1e9
#: that stands for an illegal action, and the sampling turns to NaN.
MIN_PG_TEMPERATURE = 1e-3
#: The largest ``--weight-decay`` (Adam's L2 term): beyond it the decay swamps the gradients
#: and Adam's state overflows, which freezes the network.
MAX_WEIGHT_DECAY = 1
#: Options only the policy-gradient self-play uses, and those only the Gumbel self-play uses
#: (the search options stay valid: they are the search the network is played with).
_PG_ONLY = ("pg_temperature", "pg_epochs", "pg_clip")
_GUMBEL_ONLY = ("buffer", "train_steps")


#: Options only the pretraining of a new run uses (--pretrain-games >= 1, no --resume).
_PRETRAIN_ONLY = ("teacher", "teacher_sims", "pretrain_epochs", "pretrain_learning_rate")


def check_options(args: argparse.Namespace, given: Collection[str] = ()) -> None:
    """Refuse, before anything is built or written, options outside their range and options
    ``given`` on the command line that this run would ignore (ValueError)."""
    check_game(args.players, args.level, args.max_turns)
    problems = [int_problem(flag, getattr(args, attr), low) for flag, attr, low in _MINIMUM]
    problems.append(int_problem("--games", args.games, 1, MAX_BATCH))  # the games in flight: a batch of the core
    problems.append(int_problem("--slide-hidden", args.slide_hidden, 1, MAX_LAYER_SIZE))  # as a checkpoint's sidecar
    problems += [
        real_problem(flag, getattr(args, attr), positive=True, maximum=top) for flag, attr, top in _POSITIVE_REAL
    ]
    problems += [
        real_problem("--pg-temperature", args.pg_temperature, minimum=MIN_PG_TEMPERATURE),
        real_problem("--weight-decay", args.weight_decay, minimum=0, maximum=MAX_WEIGHT_DECAY),
        real_problem("--margin-weight", args.margin_weight, minimum=0, maximum=1),
        real_problem("--rollout-weight", args.rollout_weight, minimum=0, maximum=1),
        None if args.time_limit is None else real_problem("--time-limit", args.time_limit, positive=True),
    ]
    problem = first_problem(problems)
    if problem:
        raise ValueError(problem)
    if args.iterations == 0 and args.resume is None and not args.pretrain_games and args.init is None:
        raise ValueError(
            "--iterations 0 trains no self-play: give --pretrain-games (at least 1) or --init, "
            "or --iterations of at least 1"
        )
    if args.selfplay == "policy-gradient" and args.players != 1:
        raise ValueError(
            f"--selfplay policy-gradient trains on the final score of solo games: give --players 1 "
            f"(got {args.players}; at 2-4 players the Gumbel self-play is the trainer)"
        )
    if args.selfplay == "gumbel" and args.buffer < args.batch_size:
        raise ValueError(
            f"--buffer ({args.buffer}) must be at least --batch-size ({args.batch_size}): "
            "the replay buffer must hold one minibatch"
        )
    check_layers("--hidden", args.hidden)
    if not 0 < args.pg_clip < 1:  # NaN fails too
        raise ValueError(f"--pg-clip must be a number in (0, 1), got {args.pg_clip}")
    for applies, dests, why in (  # (the run ignores them, options, why): the first that applies and is given
        # (a resume's pretraining options must be its run's: adopt_pretraining)
        (not args.pretrain_games, _PRETRAIN_ONLY, "they need --pretrain-games >= 1"),
        (args.teacher == "heuristic", ("teacher_sims",), "the heuristic teacher does not search"),
        (
            args.players == 1,
            ("margin_weight", "eval_search_sims"),
            "solo values are scores, and the solo evaluation with search uses --simulations",
        ),
        (not args.eval_search_games, ("eval_search_sims",), "they need --eval-search-games >= 1"),
        (args.selfplay == "gumbel", _PG_ONLY, "they need --selfplay policy-gradient"),
        (args.selfplay == "policy-gradient", _GUMBEL_ONLY, "the policy-gradient self-play keeps no replay buffer"),
    ):
        ignored = [f"--{dest.replace('_', '-')}" for dest in dests if applies and dest in given]
        if ignored:
            raise ValueError(f"{', '.join(ignored)}: not used by this run ({why}); leave them out")


def adopt_architecture(meta: dict[str, Any], args: argparse.Namespace, given: Collection[str]) -> None:
    """Set the options that shape the network (``--hidden``, ``--heuristic-inputs``,
    ``--slide-hidden``) not given on the command line to the checkpoint's
    (as PPO's ``--resume`` takes its network from the checkpoint), so resuming or continuing a
    network does not mean repeating its shape; an option given is checked against it instead
    (:func:`check_architecture`)."""
    if "hidden" not in given and isinstance(meta.get("hidden"), list):
        args.hidden = list(meta["hidden"])
    if "heuristic_inputs" not in given:
        args.heuristic_inputs = args.heuristic_inputs or bool(meta.get("heuristic_inputs", False))
    if "slide_hidden" not in given:
        args.slide_hidden = int(meta.get("slide_hidden", DEFAULT_SLIDE_HIDDEN))


#: The run's settings a ``--resume`` takes from its checkpoint's sidecar unless the command
#: line gives them (a given one that differs is used, and a note says so): how its games are
#: played.  ``--seed`` is each session's own (the sidecar's ``resumed`` list).
RUN_SETTINGS = (
    ("--selfplay", "selfplay"),
    ("--max-turns", "max_turns"),
    ("--simulations", "simulations"),
    ("--max-considered", "max_considered"),
    ("--c-scale", "c_scale"),
    ("--rollout-weight", "rollout_weight"),
    ("--rollout-turns", "rollout_turns"),
    ("--margin-weight", "margin_weight"),
    ("--pg-temperature", "pg_temperature"),
    ("--pg-epochs", "pg_epochs"),
    ("--pg-clip", "pg_clip"),
)


#: The pretraining options a checkpoint records (its origin): a resume may repeat them,
#: equal, as in the interrupted command (:func:`adopt_pretraining`).
_PRETRAINING = (
    ("--pretrain-games", "pretrain_games"),
    ("--teacher", "teacher"),
    ("--teacher-sims", "teacher_sims"),
    ("--pretrain-epochs", "pretrain_epochs"),
    ("--pretrain-learning-rate", "pretrain_learning_rate"),
)


def adopt_pretraining(meta: dict[str, Any], args: argparse.Namespace, given: Collection[str]) -> list[str]:
    """A resume does not pretrain again: the pretraining options given (the interrupted
    command's) must be the run's, as its checkpoint records them; they are then accepted and
    unused, and the note returned says so (``--pretrain-games 0`` is taken as is).
    ``ValueError`` for a given one that differs, or that the checkpoint does not record (a
    run that did not pretrain, or a checkpoint older than the record): :func:`check_repeated`."""
    # --pretrain-games 0 asks for no pretraining, as a resume does anyway
    asked = [d for _, d in _PRETRAINING if d in given and not (d == "pretrain_games" and not args.pretrain_games)]
    record = meta if meta.get("pretrain_games") else None  # a run without pretraining records none of it
    flags = check_repeated(args, asked, record, _PRETRAINING, "pretraining")
    if not flags:
        return []
    return [
        f"note: {', '.join(flags)}: the run's pretraining, done at its start; a resumed run does not pretrain again"
    ]


def adopt_settings(meta: dict[str, Any], args: argparse.Namespace, given: Collection[str]) -> list[str]:
    """``--resume``: :data:`RUN_SETTINGS` not given take the checkpoint's values (a resume left
    them at the options' defaults, unsaid: a policy-gradient run went on with the Gumbel
    search); the note lines returned name a given one that differs.  ``ValueError`` for a
    recorded value of the wrong kind or out of range, before anything is built."""
    pg = meta.get("pg")  # the policy-gradient options, recorded as one mapping
    flat = {**meta, **({f"pg_{k}": v for k, v in pg.items()} if isinstance(pg, dict) else {})}
    try:
        notes = adopt_pretraining(meta, args, given) + adopt_recorded(args, given, flat, RUN_SETTINGS)
        if args.selfplay not in SELFPLAY_MODES:
            raise ValueError(f"--selfplay must be one of {', '.join(SELFPLAY_MODES)}, got {args.selfplay!r}")
        check_options(args, given)  # the recorded values' ranges
    except ValueError as exc:
        raise ValueError(f"--resume: with the settings the checkpoint records: {exc}") from None
    return notes


def check_architecture(
    flag: str, path: Path, meta: dict[str, Any], args: argparse.Namespace, config: GameConfig
) -> None:
    """Refuse (ValueError) a ``--resume`` or ``--init`` checkpoint whose configuration or layers
    differ from this run's.  ``--init`` may add heuristic inputs to a network without them."""
    check_configuration(
        meta, path, num_players=config.num_players, plate_level=config.plate_level, named=flag, target="this run"
    )
    if list(meta["hidden"]) != list(args.hidden):
        raise ValueError(f"{flag} {str(path)!r} has hidden layers {meta['hidden']}, this run --hidden {args.hidden}")
    has = bool(meta.get("heuristic_inputs", False))
    if has != args.heuristic_inputs and (flag == "--resume" or has):
        raise ValueError(
            f"{flag} {str(path)!r} has heuristic_inputs={has}, "
            f"this run {'--heuristic-inputs' if args.heuristic_inputs else 'no --heuristic-inputs'}"
        )
    if int(meta.get("slide_hidden", DEFAULT_SLIDE_HIDDEN)) != args.slide_hidden:
        raise ValueError(
            f"{flag} {str(path)!r} has a slide scorer of {meta.get('slide_hidden')} units, "
            f"this run --slide-hidden {args.slide_hidden}"
        )


def initial_weights(net: AZNet, old: AZNet) -> None:
    """``--init``: copy the weights of the network ``old`` (the checkpoint's) into ``net``.
    Heuristic inputs the checkpoint lacks start at their defaults: a zero weight in the slide
    scorer's input layer and the default gains."""
    state = old.state_dict()
    if net.heuristic_inputs and not old.heuristic_inputs:
        w = state["slide_input.weight"]
        state["slide_input.weight"] = torch.cat([w, torch.zeros(w.shape[0], 1)], dim=1)
        state["heuristic_gain"] = net.heuristic_gain.detach().clone()
    net.load_state_dict(state)


def command_line(argv: Sequence[str]) -> str:
    return " ".join([PROG, *argv])


@command
def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    """The trainer's command line; ``prog`` names the command in usage and errors (``train.py
    --algo alphazero`` when dispatched by :mod:`umbrella_env.training.cli`); the command
    recorded in the checkpoints is always the module's own."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(prog)
    args, given = parse_options(parser, argv)
    if args.workers is None:
        args.workers = local_cpus()
    try:
        if args.resume is not None and "selfplay" not in given:  # the options a run uses follow its mode
            recorded = read_metadata(args.resume).get("selfplay")
            args.selfplay = recorded if recorded in SELFPLAY_MODES else args.selfplay
        check_options(args, given)
        config = GameConfig(num_players=args.players, plate_level=args.level, max_turns=args.max_turns)
        resume_meta = None
        settings_notes: list[str] = []
        if args.resume is not None and args.init is not None:  # the run's own start, repeated, or refused
            started = read_metadata(args.resume).get("init")
            same = isinstance(started, dict) and args.init.is_file() and started.get("sha256") == file_sha256(args.init)
            if not same:
                raise ValueError(
                    "--resume continues a run and --init starts a new one: give one of them (--init is accepted "
                    "on a resume only as the file the run started from)"
                )
            settings_notes.append(f"note: --init {args.init}: the run's start; a resume does not start anew")
            args.init = None
        init_net = None
        if args.init is not None:
            init_meta = read_metadata(args.init)
            adopt_architecture(init_meta, args, given)
            check_architecture("--init", args.init, init_meta, args, config)
            init_net, _ = load_network(args.init, num_players=config.num_players)  # a corrupt file is refused here
        resume = None
        if args.resume is not None:
            resume_meta = read_metadata(args.resume)
            adopt_architecture(resume_meta, args, given)
            check_architecture("--resume", args.resume, resume_meta, args, config)
            settings_notes += adopt_settings(resume_meta, args, given)
            config = GameConfig(num_players=args.players, plate_level=args.level, max_turns=args.max_turns)
            done = int(resume_meta.get("iteration", 0))
            if args.iterations <= done:
                raise ValueError(
                    f"--iterations {args.iterations}: --resume {str(args.resume)!r} is already at iteration {done}; "
                    f"give --iterations of at least {done + 1} (the total, not the number to add)"
                )
            resume = read_resume(args.resume, config)
        out = args.out or default_run_dir(f"az-{config.num_players}p-l{config.plate_level}")
        problem = output_dir_problem(out)
        if problem is not None:
            raise ValueError(f"--out {str(out)!r} cannot hold the run: {problem}")
        problem = overwrite_problem(out, RUN_FILES, args.overwrite, {"--resume": args.resume, "--init": args.init})
        if problem is not None:
            raise ValueError(problem)
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    if args.overwrite:
        remove_run(out, RUN_FILES)
    for note in [] if resume is None else resume.notes:
        print(f"note: --resume: {note}", file=sys.stderr)
    for note in settings_notes:  # the resume passed every check
        print(note, flush=True)
    with output_folder(out):  # a run stopped before writing anything leaves no empty folder
        return _run(Trainer(args, config, out, command_line(argv), resume, init_net, given), out)


def _run(trainer: Trainer, out: Path) -> int:
    """``trainer.run()``; Ctrl-C, a dead worker or a diverged update ends it in one line naming
    what was kept."""
    try:
        return trainer.run()
    except (KeyboardInterrupt, WorkerDied, TrainingDiverged) as exc:  # last.pt & co. hold the last evaluation
        saved = trainer.last_saved
        where = (
            f"{out / 'last.pt'} holds the network of iteration {saved} (continue with --resume {out / 'last.pt'})"
            if saved is not None
            else f"this run saved no checkpoint in {out} yet (the first is written at the first evaluation)"
        )
        if isinstance(exc, TrainingDiverged):
            a = trainer.args
            option = (
                f"--pretrain-learning-rate (now {a.pretrain_learning_rate:g})"
                if exc.stage == "pretraining"
                else f"--learning-rate (now {a.learning_rate:g})"
            )
            print(f"\nerror: {diverged_message(exc, where, option)}", file=sys.stderr)
            return 1
        if isinstance(exc, WorkerDied):
            print(f"\nerror: {exc}; {where}", file=sys.stderr)
            return 1
        when = f"in {trainer.stage}" if trainer.stage else f"after iteration {trainer.iteration}"
        print(f"\ninterrupted {when}: {where}", file=sys.stderr)
        return 130


@dataclass
class Resume:
    """What ``--resume`` continues, read (and checked) before the run starts."""

    net: AZNet
    meta: dict[str, Any]
    history: list[dict[str, Any]]
    optimizer: dict[str, Any] | None
    #: the rows of the run's progress.csv up to the checkpoint's iteration
    metrics: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the resume cannot continue, said before the run


def read_resume(path: Path, config: GameConfig) -> Resume:
    """The network, sidecar, evaluation history and optimizer state of a ``--resume``
    checkpoint, or a ValueError naming the file that cannot be read.  ``history.json`` and
    ``optimizer.pt`` beside it are the run's (the optimizer's of ``last.pt``): one that is
    missing, or an optimizer state of another iteration than the checkpoint's (``--resume
    best.pt``), is not read, and :attr:`Resume.notes` say so."""
    net, meta = load_network(path, num_players=config.num_players, plate_level=config.plate_level)
    problem = _resume_sidecar_problem(meta)
    if problem:
        raise ValueError(f"--resume: the sidecar {str(sidecar_path(path))!r} {problem}")
    iteration = meta.get("iteration", 0)
    history: list[dict[str, Any]] = []
    notes: list[str] = []
    hist = Path(path).parent / "history.json"
    if hist.is_file():
        try:
            saved = parse_json(hist.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"--resume: the run's history {str(hist)!r} is unreadable ({exc!r})") from None
        entries = saved.get("history", []) if isinstance(saved, dict) else None
        if not (isinstance(entries, list) and all(_is_evaluation(h) for h in entries)):
            raise ValueError(
                f"--resume: the run's history {str(hist)!r} is not one this trainer wrote (expected an object whose "
                "'history' lists evaluations, each with its 'iteration' count and its 'metric' number)"
            )
        history = [h for h in entries if h["iteration"] <= iteration]
    else:
        notes.append(f"no history.json beside {str(path)!r}: the evaluation history and the best metric start anew")
    metrics = read_rows(Path(path).parent / METRICS_FILE, "iteration", iteration)  # none: a run before the file
    optimizer = None
    opt_file = Path(path).with_name("optimizer.pt")
    if opt_file.is_file():
        packed = compressed_record(opt_file)
        if packed is not None:
            raise ValueError(
                f"--resume: the optimizer state {str(opt_file)!r} holds a compressed record ({packed}), which "
                "torch.save never writes: a file of another origin; remove it to start a fresh optimizer"
            )
        try:
            saved_opt = torch.load(opt_file, weights_only=True)
        except Exception as exc:  # a truncated or foreign file
            raise ValueError(f"--resume: the optimizer state {str(opt_file)!r} is unreadable ({exc})") from None
        # {"iteration", "optimizer"} since the iteration is recorded; a bare state before
        saved_at = saved_opt.get("iteration") if isinstance(saved_opt, dict) else None
        optimizer = saved_opt.get("optimizer", saved_opt) if isinstance(saved_opt, dict) else None
        if not _optimizer_fits(optimizer, net) or (saved_at is not None and int_problem("", saved_at, minimum=0)):
            raise ValueError(
                f"--resume: {str(opt_file)!r} is not the optimizer state of this network (its parameters "
                "differ in number or shape from the checkpoint's): a file of another run; remove it to start "
                "a fresh optimizer"
            )
        if saved_at is not None and int(saved_at) != iteration:
            optimizer = None
            notes.append(
                f"{str(opt_file)!r} is the optimizer state of iteration {saved_at} (last.pt's), not of the "
                f"checkpoint's iteration {iteration}: a fresh optimizer (Adam's moments start anew)"
            )
        names = [name for name, _ in net.named_parameters()]
        broken = None if optimizer is None else nonfinite_weights(optimizer_moments(optimizer, names))
        if broken:  # the state this resume would continue (a stale one is not read)
            raise ValueError(
                f"--resume: {str(opt_file)!r} holds an optimizer state that is not finite (NaN or inf) in {broken}: "
                "the run that wrote it was diverging; remove it to start a fresh optimizer"
            )
    else:
        notes.append(f"no optimizer.pt beside {str(path)!r}: a fresh optimizer (Adam's moments start anew)")
    best = Path(path).with_name("best.pt")
    if best.is_file() and sidecar_path(best).is_file():  # the run keeps it as its best network
        try:
            load_network(best, num_players=config.num_players, plate_level=config.plate_level)
        except ValueError as exc:
            raise ValueError(f"--resume: the best network beside it cannot be kept: {exc}") from None
    return Resume(net, meta, history, optimizer, metrics, notes)


def _resume_sidecar_problem(meta: dict[str, Any]) -> str:
    """What is wrong with the fields a resumed run reads from its checkpoint's sidecar ('' if
    nothing): the iteration, the training time so far and the list of earlier resumes."""
    resumed = meta.get("resumed", [])
    problem = (
        int_problem("its iteration", meta.get("iteration", 0), minimum=0)
        or int_problem("its selfplay_games", meta.get("selfplay_games", 0), minimum=0)
        or real_problem("its train_seconds", meta.get("train_seconds", 0.0), minimum=0)
    )
    if not problem and not (isinstance(resumed, list) and all(isinstance(r, dict) for r in resumed)):
        problem = f"its resumed must be a list of the earlier resumes (objects), got {resumed!r}"
    return f"is damaged: {problem}" if problem else ""


def _is_evaluation(entry: Any) -> bool:
    """An entry of ``history.json`` a resumed run can read: its iteration and metric."""
    return (
        isinstance(entry, dict)
        and not int_problem("", entry.get("iteration"), minimum=0)
        and not real_problem("", entry.get("metric"))
    )


def _optimizer_fits(state: Any, net: AZNet) -> bool:
    """Whether ``state`` is an optimizer state of ``net``'s parameters: one group of as many
    parameters, each moment of its parameter's shape (torch would load a foreign one and fail
    at the first update, or refuse it in a traceback)."""
    params = list(net.parameters())
    if not (
        isinstance(state, dict) and isinstance(state.get("param_groups"), list) and isinstance(state.get("state"), dict)
    ):
        return False
    ids = [i for group in state["param_groups"] if isinstance(group, dict) for i in group.get("params", [])]
    if len(ids) != len(params) or len(state["param_groups"]) != 1 or any(int_problem("", i, 0) for i in ids):
        return False
    shape = {i: p.shape for i, p in zip(ids, params)}
    for i, moments in state["state"].items():
        if i not in shape or not isinstance(moments, dict):
            return False
        for name, value in moments.items():
            if not isinstance(value, torch.Tensor) or (name != "step" and value.shape != shape[i]):
                return False
    return True


#: Sidecar fields that say how a network was first made; a resumed run keeps its checkpoint's.
_ORIGIN_KEYS = (
    "teacher",
    "teacher_sims",
    "pretrain_games",
    "pretrain_epochs",
    "pretrain_learning_rate",
    "init",
    "seed",
    "command",
)


class Trainer:
    """The training run of :func:`main` (module doc)."""

    def __init__(
        self,
        args: argparse.Namespace,
        config: GameConfig,
        out: Path,
        command: str,
        resume: Resume | None = None,
        init_net: AZNet | None = None,
        given: Collection[str] = (),
    ) -> None:
        self.args, self.config, self.out, self.command = args, config, out, command
        note = oversubscribed("--torch-threads", args.torch_threads, "threads")
        if note:
            print(note, file=sys.stderr)
        set_torch(threads=args.torch_threads, seed=args.seed)
        self.rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(1,)))
        self.net = AZNet(config.num_players, args.hidden, args.slide_hidden, args.heuristic_inputs)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=args.learning_rate, weight_decay=args.weight_decay)
        self.buffer = ReplayBuffer(args.buffer, value_size(config.num_players), args.heuristic_inputs)
        self.iteration = 0
        self.games_played = 0
        self.history: list[dict[str, Any]] = []
        self.best = -np.inf
        self.seconds = 0.0
        #: the iteration whose network this run last wrote to last.pt (None: none yet)
        self.last_saved: int | None = None
        #: what the run is doing before its first iteration, named by a Ctrl-C (None in the iterations)
        self.stage: str | None = None
        #: how the network was first made (a resumed run keeps its checkpoint's), and the resumes since
        self.origin: dict[str, Any] | None = None
        self.resumed: list[dict[str, Any]] = []
        if init_net is not None:
            initial_weights(self.net, init_net)
        if resume is not None:
            meta = resume.meta
            self.net.load_state_dict(resume.net.state_dict())
            self.iteration = int(meta.get("iteration", 0))
            self.games_played = int(meta.get("selfplay_games", 0))
            self.seconds = float(meta.get("train_seconds", 0.0))
            self.history = resume.history
            alike = [h["metric"] for h in self.history if h.get("measured") == self.measured()]
            self.best = max(alike, default=-np.inf)
            if self.history and not alike:
                print(
                    "note: --resume: the run's evaluations were measured another way (other --eval-games, "
                    "--eval-search-games or --eval-search-sims, or before 0.2 recorded them): the first evaluation "
                    "makes a new best.pt",
                    file=sys.stderr,
                )
            self.origin = {k: meta[k] for k in _ORIGIN_KEYS if k in meta}  # an older record stays as it was
            self.resumed = [*meta.get("resumed", []), {"command": command, "seed": args.seed}]
            if not copy_checkpoint(Path(args.resume).with_name("best.pt"), out):
                self.best = -np.inf  # no best network beside the checkpoint: the next evaluation makes one
            if resume.optimizer is not None:
                self.opt.load_state_dict(resume.optimizer)
                # The saved state carries the first run's settings; the ones given now apply.
                for group in self.opt.param_groups:
                    if "learning_rate" in given:
                        group["lr"] = args.learning_rate
                    if "weight_decay" in given:
                        group["weight_decay"] = args.weight_decay
            self.rng = np.random.default_rng(np.random.SeedSequence(args.seed, spawn_key=(1, self.iteration)))
        #: the scalars logged since the last row of progress.csv
        self.scalars: dict[str, float] = {}
        self.metrics = MetricsFile(out / METRICS_FILE, resume.metrics if resume is not None else None)
        self.tb = None
        try:
            from torch.utils.tensorboard import SummaryWriter

            # a resumed run replaces what the stopped one logged after its last checkpoint
            # (its iteration in progress), rather than plotting both at the same steps; the
            # checkpoint's own iteration logged at its step, which stays (kept: step < purge)
            purge = self.games_played + 1 if resume is not None else None
            self.tb = SummaryWriter(str(out / "tb"), purge_step=purge)
        except ImportError:
            pass
        self.pool = process_pool(args.workers) if args.workers > 1 else None
        #: the decisions of the iteration's policy-gradient games, until its update
        self.decisions: Decisions | None = None

    # ------------------------------------------------------------------- helpers
    def _map(self, fn: Any, jobs: list[dict[str, Any]]) -> list[Any]:
        if self.pool is None or len(jobs) == 1:
            return [fn(job) for job in jobs]
        return list(self.pool.map(fn, jobs))

    def _chunks(self, seeds: list[int]) -> list[list[int]]:
        n = min(self.args.workers, len(seeds))
        return [seeds[i::n] for i in range(n)]

    def _meta(self) -> dict[str, Any]:
        a = self.args
        return {
            "iteration": self.iteration,
            "selfplay_games": self.games_played,
            "train_seconds": round(self.seconds, 1),
            "max_turns": self.config.max_turns,
            "simulations": a.simulations,
            "max_considered": a.max_considered,
            "c_scale": a.c_scale,
            "rollout_weight": a.rollout_weight,
            "rollout_turns": a.rollout_turns,
            "margin_weight": a.margin_weight,
            "selfplay": a.selfplay,
            **(
                {"pg": {"temperature": a.pg_temperature, "epochs": a.pg_epochs, "clip": a.pg_clip}}
                if a.selfplay == "policy-gradient"
                else {}
            ),
            **self._origin(),
            "resumed": self.resumed,
        }

    def _origin(self) -> dict[str, Any]:
        """How the network was first made: this run's options, or a resumed checkpoint's."""
        if self.origin is not None:
            return self.origin
        a = self.args
        pretrained = bool(a.pretrain_games)
        return {
            "teacher": a.teacher,
            "teacher_sims": a.teacher_sims if a.teacher != "heuristic" else None,
            "pretrain_games": a.pretrain_games,
            "pretrain_epochs": a.pretrain_epochs if pretrained else None,
            "pretrain_learning_rate": a.pretrain_learning_rate if pretrained else None,
            "init": None if a.init is None else {"file": a.init.name, "sha256": file_sha256(a.init)},
            "seed": a.seed,
            "command": self.command,
        }

    def _save(self, name: str, extra: dict[str, Any] | None = None) -> None:
        save_network(
            self.net, self.out / name, plate_level=self.config.plate_level, extra={**self._meta(), **(extra or {})}
        )

    def _save_last(self) -> None:
        """``last.pt`` and the optimizer state, the pair a resume reads."""
        self._save("last.pt")
        self._save_optimizer()
        self.last_saved = self.iteration

    def _save_optimizer(self) -> None:
        state = {"iteration": self.iteration, "optimizer": self.opt.state_dict()}  # a resume checks the iteration
        write_atomically(self.out / "optimizer.pt", lambda tmp: torch.save(state, tmp))

    def log(self, tag: str, value: float) -> None:
        """Log a scalar: to TensorBoard (when installed) now, to progress.csv at the next
        :meth:`write_metrics`."""
        self.scalars[tag] = float(value)
        if self.tb is not None:
            self.tb.add_scalar(tag, value, self.games_played)

    def write_metrics(self) -> None:
        """A row of progress.csv: the scalars logged since the last row, at this iteration."""
        row = {"iteration": self.iteration, "games": self.games_played, "train_seconds": round(self.seconds, 1)}
        self.metrics.add({**row, **self.scalars})
        self.scalars = {}

    # ------------------------------------------------------------------- phases
    def measured(self) -> dict[str, int]:
        """How an evaluation measures its metric: two evaluations compare (the best network is
        kept) only when these are equal.  Solo: the network alone's mean over ``--eval-games``."""
        a = self.args
        if self.config.solo:
            return {"eval_games": a.eval_games}
        searched = {"eval_search_games": a.eval_search_games, "eval_search_sims": a.eval_search_sims}
        return {"eval_games": a.eval_games, **(searched if a.eval_search_games else {"eval_search_games": 0})}

    def pretrain(self) -> None:
        a = self.args
        seeds = np.random.SeedSequence(a.seed, spawn_key=(2,)).generate_state(a.pretrain_games, np.uint64).tolist()
        t0 = time.perf_counter()
        per_job = 25 if a.teacher == "heuristic" else 4
        jobs = [
            {
                "config": self.config,
                "teacher": a.teacher,
                "teacher_sims": a.teacher_sims,
                "seeds": part,
                "margin_weight": a.margin_weight,
                "heuristic_inputs": a.heuristic_inputs,
            }
            for part in [seeds[i : i + per_job] for i in range(0, len(seeds), per_job)]
        ]
        label = a.teacher if a.teacher == "heuristic" else f"{a.teacher} ({a.teacher_sims} sims)"
        bar = Progress(len(seeds), not a.no_progress, f"{label} games")
        parts = []
        try:
            if self.pool is None:
                for job in jobs:
                    parts.append(teacher_chunk(job))
                    bar.update(len(job["seeds"]))
            else:
                for job, part in zip(jobs, self.pool.map(teacher_chunk, jobs)):
                    parts.append(part)
                    bar.update(len(job["seeds"]))
        finally:
            bar.close()
        data = Samples.concat(parts)
        t1 = time.perf_counter()
        for g in self.opt.param_groups:
            g["lr"] = a.pretrain_learning_rate
        losses = fit_samples(self.net, self.opt, data, a.pretrain_epochs, a.batch_size, self.rng, a.value_weight)
        for g in self.opt.param_groups:
            g["lr"] = a.learning_rate
        # the replay buffer starts with (the last --buffer of) the teacher's positions, so the
        # first self-play iterations do not fit a few games' positions over and over
        self.buffer.add(data)
        print(
            f"pretraining: {a.pretrain_games} {label} games, {len(data):,} decisions in {t1 - t0:.0f} s; "
            f"{losses['steps']:.0f} steps in {time.perf_counter() - t1:.0f} s; "
            f"mean over the epochs: policy loss {losses['policy_loss']:.3f}, value loss {losses['value_loss']:.3f}",
            flush=True,
        )

    def selfplay(self) -> dict[str, Any]:
        a = self.args
        weights = {k: v.detach().numpy().copy() for k, v in self.net.state_dict().items()}
        seeds = np.random.SeedSequence(a.seed, spawn_key=(3, self.iteration)).generate_state(a.games, np.uint64)
        network = {
            "config": self.config,
            "hidden": tuple(a.hidden),
            "slide_hidden": a.slide_hidden,
            "heuristic_inputs": a.heuristic_inputs,
            "weights": weights,
        }
        pg = a.selfplay == "policy-gradient"
        play = (
            {"temperature": a.pg_temperature}
            if pg
            else {
                "simulations": a.simulations,
                "max_considered": a.max_considered,
                "c_scale": a.c_scale,
                "margin_weight": a.margin_weight,
                "rollout_weight": a.rollout_weight,
                "rollout_turns": a.rollout_turns,
            }
        )
        jobs = [{**network, **play, "seeds": part} for part in self._chunks(seeds.tolist())]
        results = self._map(pg_chunk if pg else selfplay_chunk, jobs)
        if pg:  # on-policy: the next update uses these decisions once
            self.decisions = Decisions.concat([r["samples"] for r in results])
        else:
            self.buffer.add(Samples.concat([r["samples"] for r in results]))
        self.games_played += sum(r["games"] for r in results)
        stats = {k: sum(r[k] for r in results) for k in SELFPLAY_STATS}
        if pg:
            stats["mean_score"] = float(np.mean([sc[0] for r in results for sc in r["scores"]]))
        return stats

    def evaluate(self) -> dict[str, Any]:
        """Play the evaluation games and keep the best network; :class:`TrainingDiverged` when
        the network's outputs on an evaluation position are not finite."""
        with refused_outputs(f"the evaluation at iteration {self.iteration}", "network"):
            return self._evaluate()

    def _evaluate(self) -> dict[str, Any]:
        a, cfg = self.args, self.config
        eval_cfg = GameConfig(num_players=cfg.num_players, plate_level=cfg.plate_level)
        t0 = time.perf_counter()
        searched = (
            f"{a.eval_search_games} with search ({a.simulations} sims)"
            if cfg.solo
            else (f"{a.eval_search_games} vs search ({a.eval_search_sims} sims)")
        )
        games = a.eval_games + a.eval_search_games
        with above_progress():  # on a terminal, above the self-play bar
            print(
                f"evaluating iteration {self.iteration}: {a.eval_games} games "
                + ("of the network alone" if cfg.solo else "vs heuristic")
                + (f", {searched}" if a.eval_search_games else ""),
                flush=True,
            )
        bar = Progress(games, not a.no_progress, "evaluation games")
        entry: dict[str, Any] = {
            "iteration": self.iteration,
            "games": self.games_played,
            "train_seconds": round(self.seconds, 1),
            "measured": self.measured(),
        }
        if cfg.solo:
            entry["net_score"] = evaluate_network(self.net, eval_cfg, None, a.eval_games, progress=bar.update)[
                "mean_score"
            ]
            if a.eval_search_games:
                entry["search_score"] = evaluate_network(
                    self.net,
                    eval_cfg,
                    None,
                    a.eval_search_games,
                    search=True,
                    simulations=a.simulations,
                    search_options={
                        "max_considered": a.max_considered,
                        "rollout_weight": a.rollout_weight,
                        "rollout_turns": a.rollout_turns,
                    },
                    progress=bar.update,
                )["mean_score"]
            entry["metric"] = entry["net_score"]
            text = f"network alone {entry['net_score']:.2f}" + (
                f", network + search ({a.simulations} sims) {entry['search_score']:.2f}"
                if "search_score" in entry
                else ""
            )
        else:
            heur = evaluate_network(
                self.net, eval_cfg, make_agent("heuristic", seed=a.seed), a.eval_games, progress=bar.update
            )
            entry["vs_heuristic"] = heur["win_rate"]
            entry["score_vs_heuristic"] = heur["mean_score"]  # the network's mean final score
            entry["metric"] = heur["win_rate"]
            text = (
                f"network alone vs heuristic {win_rate_text(heur['win_rate'], a.eval_games)}, "
                f"mean score {heur['mean_score']:.2f}"
            )
            if a.eval_search_games:
                srch = evaluate_network(
                    self.net,
                    eval_cfg,
                    search_opponent(a.eval_search_sims, a.seed),
                    a.eval_search_games,
                    progress=bar.update,
                )
                entry["vs_search"] = srch["win_rate"]
                entry["score_vs_search"] = srch["mean_score"]
                entry["search_sims"] = a.eval_search_sims
                n = a.eval_games + a.eval_search_games  # the win rate over all evaluation games
                entry["metric"] = (heur["win_rate"] * a.eval_games + srch["win_rate"] * a.eval_search_games) / n
                text += (
                    f"; vs search ({a.eval_search_sims} sims) {win_rate_text(srch['win_rate'], a.eval_search_games)}, "
                    f"mean score {srch['mean_score']:.2f}"
                )
        bar.close()
        entry["eval_seconds"] = round(time.perf_counter() - t0, 1)
        entry["title"] = f"Gumbel AlphaZero, {cfg.num_players} player(s), level {cfg.plate_level}"
        improved = entry["metric"] > self.best
        if improved:
            self.best = entry["metric"]
            self._save("best.pt", {"eval": {k: v for k, v in entry.items() if k not in ("title",)}})
        self.history.append(entry)
        for k in ("vs_heuristic", "score_vs_heuristic", "vs_search", "score_vs_search", "net_score", "search_score"):
            if k in entry:
                self.log(f"eval/{k}", entry[k])
        print(
            f"[eval @ iteration {self.iteration}, {self.games_played:,} games, {entry['eval_seconds']:.0f} s] {text}"
            + ("  (new best)" if improved else ""),
            flush=True,
        )
        return entry

    def write_history(self) -> None:
        text = json_text(
            {"command": self._origin()["command"], "resumed": self.resumed, "history": self.history}, indent=2
        )
        write_atomically(self.out / "history.json", lambda tmp: tmp.write_text(text + "\n", encoding="utf-8"))
        if self.history:
            plot_history(self.history, self.out / "learning_curve.png", self.config.solo)

    # ------------------------------------------------------------------- run
    def run(self) -> int:
        a = self.args
        start = time.perf_counter()
        try:
            if a.resume is None and (a.pretrain_games or a.init is not None):
                if a.pretrain_games:
                    self.stage = f"the imitation of {a.teacher} (its teacher games or the fitting)"
                    self.pretrain()
                self.stage = "the evaluation of the starting point"
                self.evaluate()  # the starting point of the learning curve
                self.stage = None
                self._save_last()  # fresh optimizer: no self-play step yet
                self.write_history()
                self.write_metrics()
            first = self.iteration  # a resumed run's iterations before this session
            # the run's games so far, then this session's (its --games may differ from the earlier sessions')
            left = (a.iterations - first) * a.games
            bar = Progress(self.games_played + left, not a.no_progress, "self-play games", initial=self.games_played)
            every_line = a.no_progress or bar.plain or not is_terminal(sys.stdout)  # no bar, or a log: a line each
            while self.iteration < a.iterations:
                t0 = time.perf_counter()
                with refused_outputs(f"the self-play of iteration {self.iteration + 1}", "network"):
                    sp = self.selfplay()
                t1 = time.perf_counter()
                losses = None
                if a.selfplay == "policy-gradient":
                    assert self.decisions is not None  # the iteration's games, just played
                    losses = pg_update(
                        self.net,
                        self.opt,
                        self.decisions,
                        temperature=a.pg_temperature,
                        epochs=a.pg_epochs,
                        batch=a.batch_size,
                        clip=a.pg_clip,
                        value_weight=a.value_weight,
                        rng=self.rng,
                        stage=f"the policy-gradient update of iteration {self.iteration + 1}",
                    )
                    self.decisions = None
                    self.log("selfplay/sampled_score", sp["mean_score"])
                    self.log("loss/entropy", losses["entropy"])
                elif len(self.buffer) >= a.batch_size and a.train_steps:
                    losses = train_steps(
                        self.net,
                        self.opt,
                        self.buffer,
                        a.train_steps,
                        a.batch_size,
                        self.rng,
                        a.value_weight,
                        stage=f"the update of iteration {self.iteration + 1}",
                    )
                self.iteration += 1
                self.seconds += time.perf_counter() - t0
                bar.update(a.games)
                dps = sp["decisions"] / max(t1 - t0, 1e-9)
                self.log("selfplay/decisions_per_s", dps)
                self.log("buffer/positions", len(self.buffer))
                if losses is not None:  # an iteration that trained nothing logs no loss
                    self.log("loss/policy", losses["policy_loss"])
                    self.log("loss/value", losses["value_loss"])
                if every_line or self.iteration % a.eval_every == 0:
                    trained = (
                        f"train {time.perf_counter() - t1:.0f} s, policy loss {losses['policy_loss']:.3f}, "
                        f"value loss {losses['value_loss']:.3f}"
                        if losses is not None
                        else f"no training (the buffer holds {len(self.buffer):,} positions, a batch {a.batch_size:,})"
                        if a.train_steps
                        else "no training (--train-steps 0)"
                    )
                    played = (
                        f"{sp['decisions']:,} sampled decisions (mean score {sp['mean_score']:.2f})"
                        if a.selfplay == "policy-gradient"
                        else f"{sp['decisions']:,} searched decisions"
                    )
                    print(
                        f"iteration {self.iteration}: {sp['games']} games, {played} "
                        f"in {t1 - t0:.0f} s ({dps:.0f}/s), {trained}",
                        flush=True,
                    )
                out_of_time = a.time_limit is not None and time.perf_counter() - start > 60 * a.time_limit
                if self.iteration % a.eval_every == 0 or self.iteration == a.iterations or out_of_time:
                    self.evaluate()
                    self._save_last()
                    self.write_history()
                self.write_metrics()
                if out_of_time:
                    print(
                        f"--time-limit of {a.time_limit} minutes reached after iteration {self.iteration}", flush=True
                    )
                    break
            bar.close()
        except BaseException as exc:  # Ctrl-C or a failure: the workers' jobs are abandoned, not awaited
            pool, self.pool = self.pool, None
            if pool is not None:
                stop_pool(pool)
            if isinstance(exc, BrokenProcessPool):
                raise worker_died(pool) from None
            raise
        finally:
            if self.pool is not None:
                self.pool.shutdown()
            if self.tb is not None:
                self.tb.close()
        session = self.iteration - first
        print(
            f"done: {session} iteration(s) in {time.perf_counter() - start:.0f} s"
            + (f" ({self.iteration} in all)" if first else "")
            + f", {self.games_played:,} self-play games; best network: {self.out / 'best.pt'}",
            flush=True,
        )
        return 0


if __name__ == "__main__":
    sys.exit(main())
