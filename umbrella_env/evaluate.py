"""Round-robin tournaments and solo evaluations of umbrella-env agents.

    python -m umbrella_env.evaluate --agents random greedy heuristic runs/ppo/model.zip \\
        --players 2 --level 1 --games 40 --seed 0 [--workers N] [--out DIR] [--max-turns T]

An agent is named by a spec string: a name of :func:`agents.make_agent` (``random``,
``greedy``, ``heuristic``, ``search``), a path to a ``.zip`` checkpoint written by
``umbrella_env.train``, or ``package.module:factory`` (a callable returning an agent, for
agents that are not registered).  ``label=spec`` gives an agent a display name; a spec
given twice is labelled ``spec#2``.

**Tables.**  With P >= 2 players and at least P agents, every combination of P distinct
agents is a table.  With fewer agents than seats, the tables are every multiset of P
agents that seats each agent at least once (2 agents at 4 seats: AAAB, AABB, ABBB), so
the schedule stays symmetric between agents; an agent holding several seats plays each
one as a separate seat.  Solo (``--players 1``): each agent plays its games alone.

**Games and seats.**  A table plays ``--games N`` games, rounded up to a multiple of P:
N/P *deals*, each played once per rotation of the seats, so every agent of the table
sits in every seat equally often **on the same deals** (the duplicate format of card
games: the luck of the deal cancels out between the agents of a table).  Rotations do
not balance who passes tiles to whom at 3-4 players; a table keeps its cyclic order.
In solo every agent plays the same N deals.

**Seeds.**  Deal ``d`` of the tournament is dealt from ``deal_key(seed, d)`` and game
``i`` seeds its agents from ``game_seed(seed, i)`` (``agent.reset`` gets one seed per
seat), both derived with ``numpy.random.SeedSequence`` from the base seed and the index
alone, so results do not depend on the number of workers or on the order in which games
finish.  Workers re-create agents from their spec strings (once per process and seat)
and reset them before every game: an agent's play must depend only on its reset seed.

**Statistics** (:func:`summarise`).  Per agent and seat played: win rate (a win shared
by k seats counts 1/k) with its 95% Wilson interval; mean score with a 95% normal
interval; an OpenSkill Plackett-Luce rating (mu, sigma, ordinal = mu - 3 sigma) updated
game by game from the ranks, averaged over several seeded orderings of the games
(:func:`openskill_ratings`); and a head-to-head table: the rate at which the row agent finished ahead of
the column agent in the games both played (ties count 1/2; at 2 players this is the
win rate).  Solo: the score distribution, mean score with its interval, the rulebook's
merit bands, and the head-to-head rate of scoring more on the same deal.

Writes ``report.md``, PNG plots, ``summary.json`` and ``games.jsonl`` to ``--out``
(default ``runs/eval-<timestamp>``).  Bad input exits with status 2 and a message.
Needs the ``eval`` extra (openskill, matplotlib, tqdm; rich is used when installed).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import inspect
import itertools
import json
import math
import os
import re
import shlex
import sys
import time
from collections import Counter
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig
from umbrella_env.core.engine import draw_key
from umbrella_env.core.single import SingleGame
from umbrella_env.parallel import Progress, process_pool

#: Agent names of the registry, quoted in error messages.
KNOWN_AGENTS: tuple[str, ...] = ("random", "greedy", "heuristic", "search")

#: The rulebook's solo merit table (RULES.md §8): (lowest score, highest score, verdict).
MERIT_BANDS: tuple[tuple[float, float, str], ...] = (
    (-math.inf, 14, "try again"),
    (15, 18, "a start"),
    (19, 23, "not bad"),
    (24, 26, "well played"),
    (27, 30, "impressive"),
    (31, math.inf, "big respect"),
)

Z95 = 1.959963984540054  # two-sided 95% quantile of the standard normal


class EvaluationError(ValueError):
    """Bad tournament input (unknown agent, impossible player count, ...); the CLI exits 2."""


class AgentError(RuntimeError):
    """An agent misbehaved during a game (an illegal action, an exception in ``act``)."""


# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class GameRecord:
    """One finished game.

    ``seats[s]`` is the tournament index of the agent in seat ``s`` and ``agents[s]`` its
    label; ``scores`` and ``ranks`` are by seat (rank 0 is best, equal ranks share).
    ``seed`` seeded the agents and ``key`` dealt the game:
    ``play_game(specs, config, record.seed, key=record.key)`` replays it.
    """

    index: int
    table: int
    seats: tuple[int, ...]
    agents: tuple[str, ...]
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    turns: int
    truncated: bool
    seed: int
    key: int


@dataclass
class TournamentResult:
    """Everything :func:`run_tournament` played; :func:`summarise` turns it into tables."""

    specs: list[str]
    labels: list[str]
    agent_args: list[str]
    num_players: int
    plate_level: int
    max_turns: int
    games_per_table: int
    seed: int
    workers: int
    tables: list[tuple[int, ...]]
    records: list[GameRecord] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def solo(self) -> bool:
        return self.num_players == 1

    def command(self) -> str:
        """The CLI command that replays this tournament (workers do not change results)."""
        args = ["--agents", *self.agent_args, "--players", str(self.num_players), "--level", str(self.plate_level)]
        args += ["--games", str(self.games_per_table), "--seed", str(self.seed), "--max-turns", str(self.max_turns)]
        return "python -m umbrella_env.evaluate " + shlex.join(args)


# --------------------------------------------------------------------------- seeds
def deal_key(base_seed: int, deal: int) -> int:
    """The 63-bit key dealing deal ``deal`` of a tournament seeded ``base_seed``."""
    return draw_key(np.random.default_rng(np.random.SeedSequence(base_seed, spawn_key=(0, deal))))


def game_seed(base_seed: int, index: int) -> int:
    """The seed of game ``index``'s agents in a tournament seeded ``base_seed``."""
    return int(np.random.SeedSequence(base_seed, spawn_key=(1, index)).generate_state(1, np.uint64)[0] >> 1)


# --------------------------------------------------------------------------- agents
_SPEC_LABEL = re.compile(r"^([A-Za-z0-9_.\-]+)=(.+)$")
_SPEC_FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def _default_label(spec: str) -> str:
    if spec.lower().endswith(".zip"):
        return Path(spec).stem
    return spec.rsplit(":", 1)[1] if _SPEC_FACTORY.match(spec) else spec


def parse_specs(specs: Sequence[str]) -> tuple[list[str], list[str]]:
    """(specs, labels): ``label=spec`` split, repeated labels numbered ``label#2``, ..."""
    out_specs: list[str] = []
    labels: list[str] = []
    for raw in specs:
        m = _SPEC_LABEL.match(raw)
        spec, label = (m.group(2), m.group(1)) if m and not Path(raw).exists() else (raw, _default_label(raw))
        out_specs.append(spec)
        labels.append(label)
    seen: Counter[str] = Counter()
    for i, label in enumerate(labels):
        seen[label] += 1
        if seen[label] > 1:
            labels[i] = f"{label}#{seen[label]}"
    return out_specs, labels


def _valid_choices() -> str:
    return (
        f"valid agents: {', '.join(KNOWN_AGENTS)}, a path to a .zip checkpoint written by umbrella_env.train, "
        "or package.module:factory"
    )


def _registry() -> Callable[..., Any]:
    """``agents.make_agent`` (from ``agents.registry`` while the package does not export it)."""
    try:
        from agents import make_agent
    except ImportError:
        from agents.registry import make_agent
    return make_agent


def create_agent(spec: str, config: GameConfig, seed: int | None = None) -> Any:
    """A new agent from its spec string, or :class:`EvaluationError` saying what is wrong.

    Checkpoints are checked against the game's player count and plate level.
    """
    if _SPEC_FACTORY.match(spec):
        module_name, attr = spec.split(":")
        try:
            factory: Callable[..., Any] = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise EvaluationError(f"agent {spec!r}: cannot import {attr} from {module_name}: {exc}") from None
        try:
            takes_seed = "seed" in inspect.signature(factory).parameters
        except (TypeError, ValueError):
            takes_seed = False
        agent = factory(seed=seed) if takes_seed else factory()
    else:
        try:
            make_agent = _registry()
        except ImportError as exc:
            raise EvaluationError(
                f"agent {spec!r}: agents.make_agent is not available ({exc})\n{_valid_choices()}"
            ) from None
        kwargs: dict[str, Any] = {}
        if spec.lower().endswith(".zip"):
            kwargs = {"num_players": config.num_players, "plate_level": config.plate_level}
        try:
            agent = make_agent(spec, seed=seed, **kwargs)
        except (ValueError, OSError) as exc:
            message = f"agent {spec!r}: {exc}"
            if not all(name in message for name in KNOWN_AGENTS):
                message += f"\n{_valid_choices()}"
            raise EvaluationError(message) from None
    for attr in ("act", "reset"):
        if not callable(getattr(agent, attr, None)):
            raise EvaluationError(f"agent {spec!r} has no {attr}() method (see agents/base.py)")
    return agent


#: Agents of this process, by (spec, seat, players, level): built once, reset every game.
_AGENTS: dict[tuple[str, int, int, int], Any] = {}


def _agent_for(spec: str, seat: int, config: GameConfig) -> Any:
    key = (spec, seat, config.num_players, config.plate_level)
    agent = _AGENTS.get(key)
    if agent is None:
        agent = _AGENTS[key] = create_agent(spec, config)
    return agent


# --------------------------------------------------------------------------- one game
def play_game(
    specs_by_seat: Sequence[str], config: GameConfig, seed: int, *, key: int | None = None
) -> GameRecord:
    """Play one game on :class:`SingleGame`; the agent of seat ``s`` is ``specs_by_seat[s]``.

    ``seed`` seeds the agents (one derived seed per seat, passed to ``reset``) and, unless
    ``key`` is given, the deal.  Each decision gives the actor its own observation, the
    legal mask, and a clone of the game if the agent ``needs_game`` (else ``None``).
    The record's ``seats`` are ``0..P-1`` and ``agents`` the specs; :func:`run_tournament`
    fills in tournament indices and labels.
    """
    P = config.num_players
    if len(specs_by_seat) != P:
        raise EvaluationError(f"{P}-player game needs {P} agent specs, got {len(specs_by_seat)}")
    rng = np.random.default_rng(seed)
    agent_seeds = rng.integers(0, 2**63, size=P)
    if key is None:
        key = draw_key(rng)
    agents = [_agent_for(spec, s, config) for s, spec in enumerate(specs_by_seat)]
    for agent, s in zip(agents, agent_seeds):
        agent.reset(int(s))
    game = SingleGame.new(config, key)
    while not game.done:
        actor = game.actor
        agent = agents[actor]
        mask = game.legal_mask()
        view = game.clone() if getattr(agent, "needs_game", False) else None
        try:
            action = agent.act(game.observe(actor), mask, view)
        except Exception as exc:
            who = f"agent {specs_by_seat[actor]!r} (seat {actor})"
            raise AgentError(f"{who} raised {exc!r} at turn {game.turn}") from exc
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)) or not (
            0 <= action < mask.size and mask[action]
        ):
            raise AgentError(
                f"agent {specs_by_seat[actor]!r} (seat {actor}) chose {action!r}, not a legal action, "
                f"at turn {game.turn} ({int(mask.sum())} legal)"
            )
        game.step(int(action))
    return GameRecord(
        index=0,
        table=0,
        seats=tuple(range(P)),
        agents=tuple(specs_by_seat),
        scores=tuple(int(x) for x in game.scores()),
        ranks=tuple(int(x) for x in game.ranks()),
        turns=int(game.turn),
        truncated=bool(game.truncated),
        seed=int(seed),
        key=int(key),
    )


# --------------------------------------------------------------------------- schedule
def plan_tables(num_agents: int, num_players: int) -> list[tuple[int, ...]]:
    """The tables of a tournament, as sorted tuples of agent indices (see module doc)."""
    if num_players == 1:
        return [(i,) for i in range(num_agents)]
    if num_agents >= num_players:
        return list(itertools.combinations(range(num_agents), num_players))
    return [
        t
        for t in itertools.combinations_with_replacement(range(num_agents), num_players)
        if len(set(t)) == num_agents
    ]


@dataclass(frozen=True)
class _Task:
    index: int
    table: int
    seats: tuple[int, ...]
    seed: int
    key: int


def _schedule(result: TournamentResult) -> list[_Task]:
    P, G = result.num_players, result.games_per_table
    deals_per_table = G // P
    tasks = []
    for t, table in enumerate(result.tables):
        for g in range(G):
            deal, rotation = divmod(g, P)
            if result.solo:
                deal_index = g  # every agent plays the same deals
            else:
                deal_index = t * deals_per_table + deal
            seats = tuple(table[(s + rotation) % P] for s in range(P))
            index = t * G + g
            tasks.append(_Task(index, t, seats, game_seed(result.seed, index), deal_key(result.seed, deal_index)))
    return tasks


def _play_chunk(tasks: list[_Task], specs: list[str], labels: list[str], config: GameConfig) -> list[GameRecord]:
    out = []
    for task in tasks:
        rec = play_game([specs[a] for a in task.seats], config, task.seed, key=task.key)
        out.append(
            dataclasses.replace(
                rec, index=task.index, table=task.table, seats=task.seats, agents=tuple(labels[a] for a in task.seats)
            )
        )
    return out


# --------------------------------------------------------------------------- tournament
def validate(agent_specs: Sequence[str], num_players: int, plate_level: int, games: int, max_turns: int) -> None:
    """Raise :class:`EvaluationError` for an impossible tournament (before any agent is built)."""
    if isinstance(num_players, bool) or not isinstance(num_players, int) or not 1 <= num_players <= 4:
        raise EvaluationError(f"--players must be 1 (solo), 2, 3 or 4, got {num_players!r}")
    if isinstance(plate_level, bool) or not isinstance(plate_level, int) or not 1 <= plate_level <= 4:
        raise EvaluationError(f"--level (plate level) must be 1, 2, 3 or 4, got {plate_level!r}")
    if not isinstance(games, int) or games < 1:
        raise EvaluationError(f"--games must be a positive number of games per table, got {games!r}")
    if not isinstance(max_turns, int) or max_turns < 1:
        raise EvaluationError(f"--max-turns must be a positive int, got {max_turns!r}")
    if not agent_specs:
        raise EvaluationError(f"no agents given; {_valid_choices()}")
    if num_players >= 2 and len(agent_specs) < 2:
        raise EvaluationError(
            f"a {num_players}-player tournament needs at least 2 agents, got {len(agent_specs)} "
            f"({', '.join(agent_specs)}); to evaluate one agent alone use --players 1"
        )


def run_tournament(
    agent_specs: Sequence[str],
    num_players: int,
    plate_level: int = 1,
    games: int = 40,
    seed: int = 0,
    workers: int | None = None,
    *,
    max_turns: int = DEFAULT_MAX_TURNS,
    progress: bool = False,
) -> TournamentResult:
    """Play a round-robin tournament (or, for ``num_players=1``, solo games) of the agents.

    ``games`` is per table, rounded up to a multiple of ``num_players``; ``workers``
    processes play them (default ``os.cpu_count()``; 1 plays in this process).  Every
    agent is built once here first, so a bad spec raises :class:`EvaluationError` before
    any game starts.
    """
    validate(agent_specs, num_players, plate_level, games, max_turns)
    specs, labels = parse_specs(agent_specs)
    config = GameConfig(num_players=num_players, plate_level=plate_level, max_turns=max_turns)
    for spec in dict.fromkeys(specs):
        _agent_for(spec, 0, config)
    workers = max(1, int(workers or os.cpu_count() or 1))
    per_table = games if num_players == 1 else -(-games // num_players) * num_players
    result = TournamentResult(
        specs=specs,
        labels=labels,
        agent_args=list(agent_specs),
        num_players=num_players,
        plate_level=plate_level,
        max_turns=max_turns,
        games_per_table=per_table,
        seed=int(seed),
        workers=workers,
        tables=plan_tables(len(specs), num_players),
    )
    tasks = _schedule(result)
    bar = Progress(len(tasks), progress, f"{len(result.tables)} table(s)")
    t0 = time.perf_counter()
    records: list[GameRecord] = []
    try:
        if workers == 1:
            for task in tasks:
                records += _play_chunk([task], specs, labels, config)
                bar.update(1)
        else:
            chunk = max(1, min(32, len(tasks) // (workers * 8)))
            chunks = [tasks[i : i + chunk] for i in range(0, len(tasks), chunk)]
            with process_pool(min(workers, len(chunks))) as pool:
                futures = [pool.submit(_play_chunk, c, specs, labels, config) for c in chunks]
                for fut in as_completed(futures):
                    done = fut.result()
                    records += done
                    bar.update(len(done))
    finally:
        bar.close()
    result.records = sorted(records, key=lambda r: r.index)
    result.elapsed = time.perf_counter() - t0
    return result


# --------------------------------------------------------------------------- statistics
def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion (fractional successes allowed)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # Clamped to contain p exactly (rounding at p = 0 or 1).
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """(mean, low, high): normal-approximation interval of the mean (nan bounds below 2 values)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (math.nan, math.nan, math.nan)
    m = float(x.mean())
    if x.size < 2:
        return (m, math.nan, math.nan)
    half = z * float(x.std(ddof=1)) / math.sqrt(x.size)
    return (m, m - half, m + half)


def win_credits(ranks: Sequence[int]) -> list[float]:
    """Per seat: 1/k for each of the k seats of rank 0, else 0."""
    k = sum(1 for r in ranks if r == 0)
    return [1.0 / k if r == 0 else 0.0 for r in ranks]


def merit_band(score: float) -> str:
    for low, high, name in MERIT_BANDS:
        if low <= score <= high:
            return name
    raise AssertionError(score)


def _band_label(low: float, high: float) -> str:
    if low == -math.inf:
        return f"<{int(high) + 1}"
    if high == math.inf:
        return f"{int(low)}+"
    return f"{int(low)}-{int(high)}"


#: Orderings of the games averaged by :func:`openskill_ratings` (fewer past 400,000 updates).
RATING_ORDERS = 16


def openskill_ratings(result: TournamentResult) -> list[tuple[float, float]]:
    """(mu, sigma) per agent: OpenSkill Plackett-Luce, every game rated by its ranks.

    Sequential rating depends on the order of the games (the last ones weigh most: two
    equal agents can end 5 mu apart after 40 games), and a tournament's games have no
    natural order, so mu and sigma are means over ``RATING_ORDERS`` orderings: game 0 of
    every table, then game 1, ...; and seeded shuffles.  An agent holding several seats
    of one game takes the mean of its seats' updates.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    G = result.games_per_table
    records = sorted(result.records, key=lambda r: (r.index % G, r.table))
    k = max(1, min(RATING_ORDERS, 400_000 // max(1, len(records))))
    rng = np.random.default_rng(np.random.SeedSequence(result.seed, spawn_key=(2,)))
    orders = [np.arange(len(records))] + [rng.permutation(len(records)) for _ in range(k - 1)]
    totals = np.zeros((len(result.labels), 2))
    for order in orders:
        ratings = [model.rating() for _ in result.labels]
        for i in order:
            rec = records[i]
            new = model.rate([[ratings[a]] for a in rec.seats], ranks=list(rec.ranks))
            for a in set(rec.seats):
                mine = [team[0] for team, seat_agent in zip(new, rec.seats) if seat_agent == a]
                ratings[a] = mine[0] if len(mine) == 1 else model.rating(
                    mu=sum(r.mu for r in mine) / len(mine), sigma=sum(r.sigma for r in mine) / len(mine)
                )
        totals += [(r.mu, r.sigma) for r in ratings]
    return [(float(mu), float(sigma)) for mu, sigma in totals / len(orders)]


def _ahead(x: float, y: float) -> float:
    """1 if x > y, 1/2 if equal, else 0."""
    return 1.0 if x > y else 0.5 if x == y else 0.0


def summarise(result: TournamentResult) -> dict[str, Any]:
    """The report's numbers as a JSON-able dict (see the module doc for definitions)."""
    n = len(result.labels)
    P = result.num_players
    scores: list[list[int]] = [[] for _ in range(n)]
    wins = [0.0] * n
    truncated = [0] * n
    seat_counts = [[0] * P for _ in range(n)]
    h2h_sum = np.zeros((n, n))
    h2h_n = np.zeros((n, n), dtype=np.int64)
    seat_wins = [0.0] * P
    seat_scores: list[list[int]] = [[] for _ in range(P)]
    for rec in result.records:
        credits = win_credits(rec.ranks)
        for s, a in enumerate(rec.seats):
            scores[a].append(rec.scores[s])
            wins[a] += credits[s]
            truncated[a] += rec.truncated
            seat_counts[a][s] += 1
            seat_wins[s] += credits[s]
            seat_scores[s].append(rec.scores[s])
            for t, b in enumerate(rec.seats):
                if a != b:
                    h2h_n[a, b] += 1
                    h2h_sum[a, b] += _ahead(-rec.ranks[s], -rec.ranks[t])
    if result.solo:
        # Paired by deal: game g of every agent is the same deal.
        G = result.games_per_table
        by_table = {(rec.table, rec.index % G): rec.scores[0] for rec in result.records}
        for a, b in itertools.permutations(range(n), 2):
            for g in range(G):
                sa, sb = by_table[(a, g)], by_table[(b, g)]
                h2h_n[a, b] += 1
                h2h_sum[a, b] += _ahead(sa, sb)
    agents: list[dict[str, Any]] = []
    ratings = None if result.solo else openskill_ratings(result)
    for a in range(n):
        games = len(scores[a])
        mean, lo, hi = mean_interval(scores[a])
        entry: dict[str, Any] = {
            "label": result.labels[a],
            "spec": result.specs[a],
            "games": games,
            "mean_score": mean,
            "score_ci": [lo, hi],
            "score_sd": float(np.std(scores[a], ddof=1)) if games > 1 else math.nan,
            "truncated": truncated[a],
            "seat_games": seat_counts[a],
        }
        if result.solo:
            entry["median_score"] = float(np.median(scores[a])) if games else math.nan
            entry["min_score"] = int(min(scores[a])) if games else None
            entry["max_score"] = int(max(scores[a])) if games else None
            bands = Counter(merit_band(s) for s in scores[a])
            entry["merit_bands"] = {name: bands.get(name, 0) for _, _, name in MERIT_BANDS}
            entry["histogram"] = {str(k): v for k, v in sorted(Counter(scores[a]).items())}
        else:
            assert ratings is not None
            mu, sigma = ratings[a]
            entry["wins"] = wins[a]
            entry["win_rate"] = wins[a] / games if games else math.nan
            entry["win_ci"] = list(wilson_interval(wins[a], games))
            entry.update(mu=mu, sigma=sigma, ordinal=mu - 3 * sigma)
        agents.append(entry)
    turns = [r.turns for r in result.records]
    out: dict[str, Any] = {
        "mode": "solo" if result.solo else "multiplayer",
        "num_players": P,
        "plate_level": result.plate_level,
        "max_turns": result.max_turns,
        "seed": result.seed,
        "games_per_table": result.games_per_table,
        "tables": [[result.labels[a] for a in t] for t in result.tables],
        "games": len(result.records),
        "truncated_games": sum(r.truncated for r in result.records),
        "mean_turns": float(np.mean(turns)) if turns else math.nan,
        "elapsed_seconds": result.elapsed,
        "command": result.command(),
        "agents": agents,
        "head_to_head": {
            "labels": list(result.labels),
            "rate": [[float(h2h_sum[i, j] / h2h_n[i, j]) if h2h_n[i, j] else None for j in range(n)] for i in range(n)],
            "n": h2h_n.tolist(),
        },
    }
    if not result.solo:
        out["seats"] = [
            {
                "seat": s,
                "games": len(seat_scores[s]),
                "win_rate": seat_wins[s] / len(seat_scores[s]) if seat_scores[s] else math.nan,
                "mean_score": float(np.mean(seat_scores[s])) if seat_scores[s] else math.nan,
            }
            for s in range(P)
        ]
    return out


# --------------------------------------------------------------------------- report
def _f(x: float | None, digits: int = 2) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.1f}%"


def _ranked(summary: dict[str, Any]) -> list[dict[str, Any]]:
    key = "mean_score" if summary["mode"] == "solo" else "ordinal"
    return sorted(summary["agents"], key=lambda e: -e[key] if not math.isnan(e[key]) else math.inf)


def standings_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the standings table, best agent first."""
    rows = []
    if summary["mode"] == "solo":
        header = ["agent", "games", "mean score", "95% CI", "sd", "median", "min", "max", "truncated"]
        for e in _ranked(summary):
            lo, hi = e["score_ci"]
            rows.append([
                e["label"], str(e["games"]), _f(e["mean_score"]), f"[{_f(lo)}, {_f(hi)}]", _f(e["score_sd"]),
                _f(e["median_score"], 1), str(e["min_score"]), str(e["max_score"]), str(e["truncated"]),
            ])  # fmt: skip
        return header, rows
    header = ["agent", "games", "win rate", "95% CI", "mean score ± 95% CI", "mu", "sigma", "ordinal"]
    for e in _ranked(summary):
        lo, hi = e["win_ci"]
        slo, shi = e["score_ci"]
        half = (shi - slo) / 2 if not math.isnan(slo) else math.nan
        rows.append([
            e["label"], str(e["games"]), _pct(e["win_rate"]), f"[{_pct(lo)}, {_pct(hi)}]",
            f"{_f(e['mean_score'])} ± {_f(half)}", _f(e["mu"]), _f(e["sigma"]), _f(e["ordinal"]),
        ])  # fmt: skip
    return header, rows


def head_to_head_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    h = summary["head_to_head"]
    labels = h["labels"]
    header = ["row vs column", *labels]
    rows = []
    for i, label in enumerate(labels):
        cells = []
        for j in range(len(labels)):
            rate, n = h["rate"][i][j], h["n"][i][j]
            cells.append("" if i == j else "–" if rate is None else f"{100 * rate:.0f}% ({n})")
        rows.append([label, *cells])
    return header, rows


def merit_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    header = ["agent", *[f"{name} ({_band_label(lo, hi)})" for lo, hi, name in MERIT_BANDS]]
    rows = []
    for e in _ranked(summary):
        g = max(1, e["games"])
        rows.append([e["label"], *[f"{c} ({100 * c / g:.0f}%)" for c in e["merit_bands"].values()]])
    return header, rows


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    esc = [[c.replace("|", "\\|") for c in row] for row in [header, *rows]]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return "\n".join(lines)


def _text_histogram(counts: dict[str, int], width: int = 40) -> str:
    top = max(counts.values(), default=0) or 1
    name_w = max(len(k) for k in counts)
    return "\n".join(f"{k:>{name_w}} {'█' * round(width * v / top):<{width}} {v}" for k, v in counts.items())


def write_plots(summary: dict[str, Any], out: Path) -> list[Path]:
    """PNG plots (matplotlib, Agg backend); returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    ranked = _ranked(summary)
    labels = [e["label"] for e in ranked]
    if summary["mode"] == "solo":
        fig, ax = plt.subplots(figsize=(9, 4.8))
        all_scores = [int(k) for e in ranked for k in e["histogram"]]
        lo_s, hi_s = min([0, *all_scores]), max([32, *all_scores])
        shades = ["#f2f2f2", "#e0e0e0"]
        for i, (low, high, name) in enumerate(MERIT_BANDS):
            a, b = max(low, lo_s) - 0.5, min(high, hi_s) + 0.5
            ax.axvspan(a, b, color=shades[i % 2], zorder=0)
            ax.text((a + b) / 2, 1.0, name, transform=ax.get_xaxis_transform(), ha="center", va="bottom", fontsize=8)
        bins = np.arange(lo_s - 0.5, hi_s + 1.5)
        for e in ranked:
            values = [int(k) for k, v in e["histogram"].items() for _ in range(v)]
            label = f"{e['label']} (mean {e['mean_score']:.1f})"
            ax.hist(values, bins=bins, histtype="step", linewidth=1.8, label=label)
        ax.set_xlabel("solo score")
        ax.set_ylabel("games")
        ax.set_xlim(lo_s - 0.5, hi_s + 0.5)
        ax.legend(loc="upper right", fontsize=8)
        fig.tight_layout()
        paths.append(out / "scores.png")
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)

        fig, ax = plt.subplots(figsize=(9, 4))
        names = [f"{name}\n{_band_label(lo, hi)}" for lo, hi, name in MERIT_BANDS]
        width = 0.8 / max(1, len(ranked))
        for i, e in enumerate(ranked):
            share = [100 * c / max(1, e["games"]) for c in e["merit_bands"].values()]
            ax.bar(np.arange(len(names)) + (i - (len(ranked) - 1) / 2) * width, share, width, label=e["label"])
        ax.set_xticks(np.arange(len(names)), names, fontsize=8)
        ax.set_ylabel("% of games")
        ax.set_title("Merit bands (RULES.md §8)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        paths.append(out / "merit.png")
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
        return paths

    y = np.arange(len(ranked))[::-1]
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.5 * len(ranked)))
    rate = np.array([e["win_rate"] for e in ranked])
    lo = np.array([e["win_ci"][0] for e in ranked])
    hi = np.array([e["win_ci"][1] for e in ranked])
    ax.barh(y, 100 * rate, xerr=100 * np.vstack([rate - lo, hi - rate]), capsize=4, color="#4c72b0")
    equal = 100 / summary["num_players"]
    ax.axvline(equal, color="grey", linestyle="--", linewidth=1)
    ax.set_yticks(y, labels)
    ax.set_xlabel("win rate % (95% Wilson interval)")
    ax.set_title(f"{summary['num_players']} players: win rates (dashed: equal strength, {equal:.0f}%)", fontsize=10)
    ax.set_xlim(0, 100)
    fig.tight_layout()
    paths.append(out / "winrates.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.5 * len(ranked)))
    mu = np.array([e["mu"] for e in ranked])
    sigma = np.array([e["sigma"] for e in ranked])
    ax.barh(y, mu, xerr=3 * sigma, capsize=4, color="#55a868")
    ax.set_yticks(y, labels)
    ax.set_xlabel("mu ± 3 sigma")
    ax.set_title("OpenSkill Plackett-Luce ratings (left whisker: ordinal = mu - 3 sigma)", fontsize=10)
    fig.tight_layout()
    paths.append(out / "ratings.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


def _format_report(summary: dict[str, Any], plots: Iterable[Path], argv: Sequence[str] | None) -> str:
    P = summary["num_players"]
    mode = "solo" if P == 1 else f"{P} players"
    lines = [
        f"# Umbrella evaluation: {mode}, plate level {summary['plate_level']}",
        "",
        "Replay with (results do not depend on `--workers`):",
        "",
        "```bash",
        summary["command"],
        "```",
        "",
    ]
    if argv is not None:
        lines += [f"Invoked as: `python -m umbrella_env.evaluate {shlex.join(argv)}`", ""]
    lines += [
        f"- seed {summary['seed']}; {len(summary['tables'])} {'agent' if P == 1 else 'table'}(s) × "
        f"{summary['games_per_table']} games = "
        f"{summary['games']} games, {summary['elapsed_seconds']:.1f} s",
        f"- turns per game: mean {_f(summary['mean_turns'], 1)}; truncated at {summary['max_turns']} turns: "
        f"{summary['truncated_games']}",
        f"- written {datetime.now().isoformat(timespec='seconds')}",
        "",
        "## Standings",
        "",
        _markdown_table(*standings_rows(summary)),
        "",
    ]
    if summary["mode"] == "solo":
        lines += [
            "Mean score with a 95% normal-approximation interval; every agent played the same deals.",
            "",
            "## Merit bands (RULES.md §8)",
            "",
            _markdown_table(*merit_rows(summary)),
            "",
        ]
        for e in _ranked(summary):
            lines += [f"**{e['label']}**", "", "```", _text_histogram(e["merit_bands"]), "```", ""]
        lines += [
            "## Head to head (same deals)",
            "",
            "Share of deals on which the row agent scored more than the column agent (ties count ½), (deals).",
            "",
            _markdown_table(*head_to_head_rows(summary)),
            "",
        ]
    else:
        lines += [
            f"Win rate per seat played (a win shared by k counts 1/k; equal strength is {100 / P:.0f}%), "
            "95% Wilson interval; OpenSkill Plackett-Luce rating from each game's ranks (mean over "
            f"{RATING_ORDERS} seeded orderings of the games), ordinal = mu − 3 sigma (the sort key).",
            "",
            "## Head to head",
            "",
            "Rate at which the row agent finished ahead of the column agent in the games both played "
            "(ties count ½), (seat pairs).",
            "",
            _markdown_table(*head_to_head_rows(summary)),
            "",
            "## Seats",
            "",
            "Every agent sat in every seat of its tables equally often:",
            "",
            _markdown_table(
                ["seat", "games", "win rate", "mean score"],
                [[str(s["seat"]), str(s["games"]), _pct(s["win_rate"]), _f(s["mean_score"])] for s in summary["seats"]],
            ),
            "",
            "## Tables",
            "",
            ", ".join("(" + " · ".join(t) + ")" for t in summary["tables"]),
            "",
        ]
    lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots] + [""]
    return "\n".join(lines)


def write_report(
    result: TournamentResult,
    out: str | Path,
    summary: dict[str, Any] | None = None,
    argv: Sequence[str] | None = None,
) -> Path:
    """Write report.md, the PNG plots, summary.json and games.jsonl into ``out``; returns report.md."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = summary if summary is not None else summarise(result)
    plots = write_plots(summary, out)
    report = out / "report.md"
    report.write_text(_format_report(summary, plots, argv), encoding="utf-8")
    (out / "summary.json").write_text(json.dumps(summary, indent=2, allow_nan=True) + "\n", encoding="utf-8")
    with open(out / "games.jsonl", "w", encoding="utf-8") as fh:
        for rec in result.records:
            fh.write(json.dumps(dataclasses.asdict(rec)) + "\n")
    return report


def print_summary(summary: dict[str, Any], file: Any = None) -> None:
    """The standings (and merit bands or head-to-head) on the terminal: rich if installed."""
    file = file if file is not None else sys.stdout
    tables = [("Standings", standings_rows(summary))]
    if summary["mode"] == "solo":
        tables.append(("Merit bands", merit_rows(summary)))
    tables.append(("Head to head (row vs column)", head_to_head_rows(summary)))
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        for title, (header, rows) in tables:
            widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
            print(f"\n{title}", file=file)
            for row in [header, *rows]:
                print("  ".join(c.ljust(w) for c, w in zip(row, widths)), file=file)
        return
    console = Console(file=file)
    if not console.is_terminal:
        console.width = max(console.width, 160)
    for title, (header, rows) in tables:
        table = Table(title=title)
        for i, h in enumerate(header):
            table.add_column(h, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*row)
        console.print(table)


# --------------------------------------------------------------------------- CLI
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m umbrella_env.evaluate",
        description="Round-robin tournament (2-4 players) or solo evaluation of umbrella-env agents.",
    )
    p.add_argument(
        "--agents", nargs="+", required=True, metavar="AGENT",
        help=f"agents: {', '.join(KNOWN_AGENTS)}, a .zip checkpoint, package.module:factory; label=spec renames",
    )  # fmt: skip
    p.add_argument("--players", type=int, default=2, help="1 (solo), 2, 3 or 4 (default 2)")
    p.add_argument("--level", type=int, default=1, help="score-plate level 1-4 (default 1)")
    p.add_argument("--games", type=int, default=40, help="games per table, rounded up to a multiple of --players")
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    p.add_argument("--workers", type=int, default=None, help="processes (default: os.cpu_count())")
    p.add_argument("--out", type=Path, default=None, help="output folder (default runs/eval-<timestamp>)")
    p.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS, help=f"truncation (default {DEFAULT_MAX_TURNS})")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI; returns the exit status (2 for bad input, with a message on stderr)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage and the problem
        return exc.code if isinstance(exc.code, int) else 2
    missing = [m for m in ("openskill", "matplotlib") if importlib.util.find_spec(m) is None]
    if missing:
        print(
            f"error: umbrella_env.evaluate needs {' and '.join(missing)}: "
            "pip install -c constraints.txt -e '.[eval]'",
            file=sys.stderr,
        )
        return 2
    if args.workers is not None and args.workers < 1:
        print(f"error: --workers must be at least 1, got {args.workers}", file=sys.stderr)
        return 2
    try:
        result = run_tournament(
            args.agents, args.players, args.level, args.games, args.seed, args.workers,
            max_turns=args.max_turns, progress=not args.no_progress,
        )  # fmt: skip
    except EvaluationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except AgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    out = args.out if args.out is not None else Path("runs") / f"eval-{datetime.now():%Y%m%d-%H%M%S}"
    summary = summarise(result)
    report = write_report(result, out, summary, argv)
    if args.games != result.games_per_table:
        print(f"note: --games {args.games} rounded up to {result.games_per_table} per table (a multiple of --players)")
    print_summary(summary)
    print(f"{summary['games']} games in {result.elapsed:.1f} s; report: {report}")
    return 0


if __name__ == "__main__":
    # Through the imported module, so worker processes unpickle the same classes.
    from umbrella_env.evaluate import main as _main

    sys.exit(_main())
