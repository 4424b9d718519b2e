"""Behaviour cloning: start a MaskablePPO policy from a teacher agent's games.

``python train.py --pretrain heuristic`` plays ``--pretrain-games`` games in
which the teacher takes the learner's seat (opponents drawn from the opponent pool as in
training; ``self`` is the teacher itself), records every learner decision (observation,
mask, teacher action) and the learner's discounted return under the training reward,
then fits the policy by maximum likelihood of the teacher's actions (masked) and the
value head to those returns.  PPO then continues from there.

Games are played over processes (``workers``); every game has its own seed, so the data
set does not depend on the number of workers.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from umbrella_env.core import actions as A
from umbrella_env.core.config import GameConfig
from umbrella_env.core.jsonio import parse_json
from umbrella_env.core.observation import OBS_SIZE
from umbrella_env.core.single import SingleGame
from umbrella_env.envs.common import end_rewards, score_edge
from umbrella_env.match import build_agent, play_out, session_factory, win_credits
from umbrella_env.parallel import Progress, process_pool
from umbrella_env.training.divergence import CLONING, check_losses, check_weights, refused_outputs


@dataclass
class Demonstrations:
    obs: np.ndarray  # float32 [n, 899]
    masks: np.ndarray  # bool [n, 968]
    actions: np.ndarray  # int64 [n]
    returns: np.ndarray  # float32 [n], discounted return of the learner from that decision
    games: int
    wins: float  # teacher's wins (shared wins count 1/k) over the games; solo: 0
    mean_score: float
    source: dict[str, Any] = field(default_factory=dict)  # teacher, players, level, opponents, games, seed

    def __len__(self) -> int:
        return int(self.actions.size)

    def save(self, path: Any) -> None:
        """Write the decisions to the ``.npz`` file ``path``, as named (NumPy would add
        ``.npz`` to a name without it; masks bit-packed)."""
        with open(path, "wb") as file:
            self._savez(file)

    def _savez(self, file: Any) -> None:
        np.savez_compressed(
            file,
            obs=self.obs,
            masks=np.packbits(self.masks, axis=1),
            actions=self.actions,
            returns=self.returns,
            games=self.games,
            wins=self.wins,
            mean_score=self.mean_score,
            num_actions=self.masks.shape[1],
            source=json.dumps(self.source),
        )

    @classmethod
    def load(cls, path: Any) -> Demonstrations:
        """The decisions :meth:`save` wrote to ``path``, or a ``ValueError`` (``KeyError`` for
        a missing array) when the file does not hold decisions of this umbrella-env: every
        array's type and shape, the actions legal under their masks, finite numbers."""
        with np.load(path) as f:
            n = _scalar(f, "num_actions", int)
            if n != A.NUM_ACTIONS:
                raise ValueError(f"its decisions have {n} actions; this umbrella-env has {A.NUM_ACTIONS}")
            obs, packed, actions, returns = f["obs"], f["masks"], f["actions"], f["returns"]
            arrays = {
                "obs": (obs, np.float32, (OBS_SIZE,)),
                "masks": (packed, np.uint8, ((n + 7) // 8,)),
                "actions": (actions, np.integer, ()),
                "returns": (returns, np.floating, ()),
            }
            for name, (array, kind, width) in arrays.items():
                if not (np.issubdtype(array.dtype, kind) and array.ndim == 1 + len(width) and array.shape[1:] == width):
                    shape = "(" + ", ".join(["n", *map(str, width)]) + ("" if width else ",") + ")"
                    raise ValueError(
                        f"array {name!r} is {array.dtype} {array.shape}; expected {np.dtype(kind).name} {shape} "
                        "for n decisions"
                    )
            counts = {name: array.shape[0] for name, (array, _, _) in arrays.items()}
            rows = counts["actions"]
            if rows == 0 or len(set(counts.values())) > 1:
                raise ValueError(f"its arrays must hold one row per decision, at least one: {counts}")
            masks = np.unpackbits(packed, axis=1)[:, :n].astype(bool)
            if ((actions < 0) | (actions >= n)).any() or not masks[np.arange(rows), np.clip(actions, 0, n - 1)].all():
                raise ValueError("an action is not one of the legal actions of its mask")
            if not (np.isfinite(obs).all() and np.isfinite(returns).all()):
                raise ValueError("observations or returns that are not finite (NaN or inf)")
            source = parse_json(str(f["source"])) if "source" in f.files else {}
            if not isinstance(source, dict):
                raise ValueError(f"its 'source' is not a JSON object but {type(source).__name__}")
            return cls(
                obs=obs,
                masks=masks,
                actions=actions,
                returns=returns,
                games=_scalar(f, "games", int),
                wins=_scalar(f, "wins", float),
                mean_score=_scalar(f, "mean_score", float),
                source=source,
            )

    def check_source(self, expected: dict[str, Any], path: Any) -> None:
        """Refuse a cache made for another teacher, configuration or seed, naming the difference."""
        wrong = [
            f"{k}={self.source.get(k)!r} (this run: {v!r})" for k, v in expected.items() if self.source.get(k) != v
        ]
        if wrong:
            raise ValueError(
                f"{path} holds other teacher games: "
                + ", ".join(wrong)
                + "; delete it or give another --pretrain-cache"
            )


def _scalar(archive: Any, name: str, kind: type) -> Any:
    """The finite number ``name`` of an ``.npz`` archive as ``kind``, or a ``ValueError``."""
    value = archive[name]
    if value.shape != () or not np.issubdtype(value.dtype, np.number) or not np.isfinite(value):
        raise ValueError(f"{name!r} is not a finite number but {value.dtype} {value.shape}")
    return kind(value)


class _Recorder:
    """The teacher's decisions of one game (``on_move`` of the match runner) and their
    rewards: the change of the teacher's score edge until its next decision (or the end),
    times ``weight``; the first one also counts the opponents' opening moves."""

    def __init__(
        self,
        seat: int,
        weight: float,
        game: SingleGame,
        obs: list[np.ndarray],
        masks: list[np.ndarray],
        actions: list[int],
    ) -> None:
        self.seat, self.weight = seat, weight
        self.obs, self.masks, self.actions = obs, masks, actions
        self.edge = float(score_edge(game.scores(), seat))
        self.rewards: list[float] = []
        self.decisions = 0

    def _close_pending(self, game: SingleGame) -> None:
        if self.decisions > len(self.rewards):
            new_edge = float(score_edge(game.scores(), self.seat))
            self.rewards.append(self.weight * (new_edge - self.edge))
            self.edge = new_edge

    def __call__(self, game: SingleGame, actor: int, action: int) -> None:
        if actor != self.seat:
            return
        self._close_pending(game)
        self.obs.append(game.observe(self.seat))
        self.masks.append(game.legal_mask().astype(bool))
        self.actions.append(action)
        self.decisions += 1

    def finish(self, game: SingleGame) -> list[float]:
        self._close_pending(game)
        return self.rewards


def _play_chunk(job: tuple[GameConfig, str, list[str], list[int], float, float]) -> dict[str, Any]:
    config, teacher_name, opponents, seeds, shaping, gamma = job
    obs: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    returns: list[float] = []
    wins = 0.0
    total_score = 0.0
    solo = config.num_players == 1
    weight = 1.0 if solo else shaping  # solo: the score itself is the reward
    for seed in seeds:
        rng = np.random.default_rng(seed)
        teacher = build_agent(teacher_name, config, seed=int(rng.integers(2**31)))
        spec = opponents[int(rng.integers(len(opponents)))]
        opp = teacher if spec == "self" else build_agent(spec, config, seed=int(rng.integers(2**31)))
        game = SingleGame.new(config, int(rng.integers(2**63)))
        seat = int(rng.integers(config.num_players))
        agents = [opp] * config.num_players
        agents[seat] = teacher
        recorder = _Recorder(seat, weight, game, obs, masks, actions)
        play_out(agents, game, on_move=recorder)
        rewards = recorder.finish(game)
        scores = game.scores()
        total_score += scores[seat]
        if not solo and rewards:
            ranks = game.ranks()
            rewards[-1] += float(end_rewards(scores, ranks, game.terminated, "win")[seat])
            wins += win_credits(ranks, game.truncated)[seat]
        g = 0.0
        out = []
        for r in reversed(rewards):
            g = r + gamma * g
            out.append(g)
        returns.extend(reversed(out))
    return {
        "obs": np.array(obs, dtype=np.float32),
        "masks": np.array(masks, dtype=bool),
        "actions": np.array(actions, dtype=np.int64),
        "returns": np.array(returns, dtype=np.float32),
        "wins": wins,
        "score": total_score,
    }


def source(
    config: GameConfig, teacher: str, opponents: list[str], games: int, seed: int, shaping: float, gamma: float
) -> dict[str, Any]:
    """What a set of teacher games was made from (checked when a cache is reused)."""
    return {
        "teacher": teacher,
        "players": config.num_players,
        "level": config.plate_level,
        "opponents": list(opponents),
        "games": games,
        "seed": seed,
        "shaping": shaping,
        "gamma": gamma,
    }


def collect(
    config: GameConfig,
    teacher: str,
    opponents: list[str],
    games: int,
    seed: int,
    shaping: float,
    gamma: float,
    workers: int = 2,
    progress: bool = True,
) -> Demonstrations:
    """Play ``games`` teacher games (see the module doc) and return the learner's decisions."""
    build_agent(teacher, config)  # fail early on an unknown name (any spec the commands take)
    opponents = list(opponents) or ["random"]
    session = next((s for s in [teacher, *opponents] if session_factory(s)), None)
    if session is not None and workers > 1:
        raise ValueError(
            f"agent {session!r} is defined in this interactive session, which worker processes cannot import: "
            "use one worker (--workers 1), or save the factory in a module and give 'module:factory'"
        )
    for o in opponents:
        if o != "self":
            build_agent(o, config)
    seeds = np.random.SeedSequence(seed).generate_state(games, dtype=np.uint64).tolist()
    chunk = 25
    jobs = [(config, teacher, opponents, seeds[i : i + chunk], shaping, gamma) for i in range(0, games, chunk)]
    parts: list[dict[str, Any]] = []
    bar = Progress(games, progress, f"{teacher} games")
    t0 = time.perf_counter()
    try:
        if workers > 1:
            with process_pool(min(workers, len(jobs))) as pool:
                for job, part in zip(jobs, pool.map(_play_chunk, jobs)):
                    parts.append(part)
                    bar.update(len(job[3]))
        else:
            for job in jobs:
                parts.append(_play_chunk(job))
                bar.update(len(job[3]))
    finally:
        bar.close()
    parts = [p for p in parts if p["actions"].size]
    demos = Demonstrations(
        obs=np.concatenate([p["obs"] for p in parts]),
        masks=np.concatenate([p["masks"] for p in parts]),
        actions=np.concatenate([p["actions"] for p in parts]),
        returns=np.concatenate([p["returns"] for p in parts]),
        games=games,
        wins=sum(p["wins"] for p in parts),
        mean_score=sum(p["score"] for p in parts) / games,
        source=source(config, teacher, opponents, games, seed, shaping, gamma),
    )
    print(
        f"{teacher}: {games:,} games, {len(demos):,} decisions in {time.perf_counter() - t0:.0f} s"
        + ("" if config.num_players == 1 else f", teacher win rate {demos.wins / games:.3f}")
        + f", mean score {demos.mean_score:.2f}",
        flush=True,
    )
    return demos


def pretrain(
    model: Any,
    demos: Demonstrations,
    epochs: int,
    batch_size: int = 256,
    seed: int = 0,
    value_weight: float = 0.5,
    learning_rate: float = 1e-3,
) -> list[dict[str, float]]:
    """Fit ``model.policy`` to the demonstrations; returns per-epoch loss and held-out accuracy
    (:class:`~umbrella_env.training.divergence.TrainingDiverged` when the loss, the policy's
    outputs or its weights stop being finite)."""
    import torch

    policy = model.policy
    rng = np.random.default_rng(seed)
    n = len(demos)
    order = rng.permutation(n)
    held = order[: max(1, n // 20)]
    train = order[held.size :]
    t = {
        "obs": torch.as_tensor(demos.obs),
        "masks": torch.as_tensor(demos.masks),
        "actions": torch.as_tensor(demos.actions),
        "returns": torch.as_tensor(demos.returns),
    }
    history = []
    policy.set_training_mode(True)
    opt = torch.optim.Adam(policy.parameters(), lr=learning_rate, eps=1e-5)  # SB3's Adam settings
    for epoch in range(epochs):
        rng.shuffle(train)
        total = 0.0
        for i in range(0, train.size, batch_size):
            idx = torch.as_tensor(train[i : i + batch_size])
            with refused_outputs(CLONING):  # the inputs are finite (checked on load): the weights exploded
                values, log_prob, _ = policy.evaluate_actions(
                    t["obs"][idx], t["actions"][idx], action_masks=t["masks"][idx].numpy()
                )
            loss = -log_prob.mean() + value_weight * torch.nn.functional.mse_loss(values.flatten(), t["returns"][idx])
            check_losses(CLONING, loss=float(loss.detach()))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            opt.step()
            total += float(loss.detach()) * idx.numel()
        check_weights(CLONING, policy.state_dict())
        with refused_outputs(CLONING):  # the last step's weights, through the policy's distribution
            fit = _accuracy(policy, t, train[: held.size * 4])
            acc = _accuracy(policy, t, held)
        history.append(
            {"epoch": epoch + 1, "loss": total / train.size, "train_accuracy": fit, "held_out_accuracy": acc}
        )
        print(
            f"[pretrain epoch {epoch + 1}/{epochs}] loss {total / train.size:.3f}, "
            f"accuracy {fit:.3f} (held out: {acc:.3f})",
            flush=True,
        )
    policy.set_training_mode(False)
    return history


def _accuracy(policy: Any, t: dict[str, Any], rows: np.ndarray) -> float:
    """Share of ``rows`` where the policy's most likely legal action is the teacher's."""
    import torch

    with torch.no_grad():
        idx = torch.as_tensor(rows)
        dist = policy.get_distribution(t["obs"][idx], action_masks=t["masks"][idx].numpy())
        pred = dist.distribution.probs.argmax(dim=1)
        return float((pred == t["actions"][idx]).float().mean())
