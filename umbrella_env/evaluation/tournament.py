"""Round-robin tournaments and solo evaluations of umbrella-env agents.

    python evaluate.py --agents random greedy heuristic runs/ppo/model.zip \\
        --players 2 --level 1 --games 40 --seed 0 [--workers N] [--out DIR] [--max-turns T]

An agent is named by a spec string: a name of :func:`agents.make_agent` (``random``,
``greedy``, ``heuristic``, ``search``), a trained checkpoint (``.zip`` written by
``train.py``, or ``.onnx`` exported from one), or ``package.module:factory`` (a callable
returning an agent, for agents that are not registered); see
:func:`umbrella_env.match.build_agent`.  ``label=spec`` gives an agent a display name; a
spec given twice is labelled ``spec#2``, and checkpoints of the same name in different
folders by their folders (``runs/a/best.zip`` and ``runs/b/best.zip``: ``a/best``, ``b/best``).

**Tables.**  With P >= 2 players and at least P agents, every combination of P distinct
agents is a table.  With fewer agents than seats, the tables are every multiset of P
agents that seats each agent at least once (2 agents at 4 seats: AAAB, AABB, ABBB), so
the schedule stays symmetric between agents; an agent holding several seats plays each
one as a separate seat.  Solo (``--players 1``): each agent plays its games alone.

**Games and seats.**  A table plays ``--games N`` games, rounded up to a multiple of P!
(2, 6 or 24 games: :func:`seatings`): N/P *deals*, each played once per rotation of the
seats, so every agent of the table sits in every seat equally often **on the same deals**
(the duplicate format of card games: the luck of the deal cancels out between the agents
of a table).  At 3-4 players rotations alone keep who sits after whom (who passes tiles
to whom), which favours the agent seated after a weaker one by several points, so the
deals of a table go through its (P-1)! cyclic orders in turn: over P! games the table
plays every seating once.  In solo every agent plays the same N deals.

**Seeds.**  Deal ``d`` of the tournament is dealt from ``deal_key(seed, d)`` and game
``i`` seeds its agents from ``game_seed(seed, i)`` (``agent.reset`` gets one seed per
seat), both derived with ``numpy.random.SeedSequence`` from the base seed and the index
alone, so results do not depend on the number of workers or on the order in which games
finish.  Workers re-create agents from their spec strings (once per process and seat)
and reset them before every game: an agent's play must depend only on its reset seed.

**Statistics** (:func:`umbrella_env.evaluation.stats.summarise`). Per agent and seat
played: win rate (:func:`umbrella_env.match.win_credits`: a win shared by k seats counts
1/k, a truncated game is a draw) with its 95% Wilson interval; mean score with a 95%
Student-t interval (at 3-4 players both over deals, whose every seating shares the deal's
luck: :func:`~umbrella_env.evaluation.stats.by_deal`); an OpenSkill Plackett-Luce rating
(mu, sigma, ordinal = mu - 3 sigma) updated game by game from the ranks, averaged over
several seeded orderings of the games (:func:`openskill_ratings`); a Bradley-Terry rating
on the Elo scale with a bootstrapped 95% interval; and a head-to-head table: the rate at
which the row agent finished ahead of the column agent in the games both played (ties
count 1/2; at 2 players this is the win rate). Solo: the score distribution, mean score
with its interval, the rulebook's merit bands, and the head-to-head rate of scoring more
on the same deal.

Writes ``report.md``, PNG plots, ``summary.json`` and ``games.jsonl`` to ``--out``
(default ``runs/eval-<time>-<pid>``).  Bad input exits with status 2 and a message.
Needs the ``eval`` extra (openskill, matplotlib, tqdm; rich is used when installed).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import re
import shlex
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents import AGENT_NAMES
from agents.registry import AZ_NAMES, expand_home, net_shipped_name
from umbrella_env.cli_args import command_name, first_problem, game_options_problem, int_problem, program_name
from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig
from umbrella_env.core.engine import draw_key
from umbrella_env.evaluation.provenance import checkpoint_hashes
from umbrella_env.evaluation.ray_backend import play_on_ray
from umbrella_env.match import (
    NET_PREFIX,
    NO_OPTIONS,
    OPTIONS_LIKE,
    RLLIB_PREFIX,
    SPEC_FACTORY,
    AgentError,
    AgentSpecError,
    build_agent,
    is_checkpoint,
    main_factory,
    play_game,
    session_factory,
    valid_choices,
)
from umbrella_env.parallel import Progress, process_pool
from umbrella_env.ray_cluster import RayUnavailable

#: The evaluation command as a usage line or a replay command names it: the script typed
#: (program_name), else the clone's script, or the installed command outside a clone.
PROG = command_name("evaluate.py", "umbrella-evaluate")
SCRIPTS = ("umbrella-evaluate", "evaluate.py")

__all__ = [
    "AgentError",
    "EvaluationError",
    "GameRecord",
    "TournamentResult",
    "create_agent",
    "deal_key",
    "forget_agents",
    "game_seed",
    "parse_specs",
    "plan_tables",
    "play_specs",
    "run_tournament",
    "validate",
]


class EvaluationError(ValueError):
    """Bad tournament input (unknown agent, impossible player count, ...); the CLI exits 2."""


# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class GameRecord:
    """One finished game.

    ``seats[s]`` is the tournament index of the agent in seat ``s`` and ``agents[s]`` its
    label; ``scores`` and ``ranks`` are by seat (rank 0 is best, equal ranks share).
    ``seed`` seeded the agents and ``key`` dealt the game:
    ``play_specs(specs, config, record.seed, key=record.key)`` replays it.
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
    records: list[GameRecord] = field(default_factory=list, repr=False)
    elapsed: float = 0.0
    #: The files the agents loaded and their SHA-256, taken before the games
    #: (:func:`umbrella_env.evaluation.provenance.checkpoint_hashes`).
    checkpoints: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:  # the dataclass's listed every game (2 MB for 10,000 games in a notebook cell)
        return (
            f"TournamentResult({len(self.labels)} agents: {', '.join(self.labels)}; {self.num_players} player(s), "
            f"level {self.plate_level}; {len(self.records):,} games, seed {self.seed}, {self.elapsed:.1f} s)"
        )

    @property
    def solo(self) -> bool:
        return self.num_players == 1

    def command(self) -> str:
        """The CLI command that replays this tournament (workers do not change results)."""
        args = ["--agents", *self.agent_args, "--players", str(self.num_players), "--level", str(self.plate_level)]
        args += ["--games", str(self.games_per_table), "--seed", str(self.seed), "--max-turns", str(self.max_turns)]
        return f"{program_name(PROG, SCRIPTS)} {shlex.join(args)}"


# --------------------------------------------------------------------------- seeds
def deal_key(base_seed: int, deal: int) -> int:
    """The 63-bit key dealing deal ``deal`` of a tournament seeded ``base_seed``."""
    return draw_key(np.random.default_rng(np.random.SeedSequence(base_seed, spawn_key=(0, deal))))


def game_seed(base_seed: int, index: int) -> int:
    """The seed of game ``index``'s agents in a tournament seeded ``base_seed``."""
    return int(np.random.SeedSequence(base_seed, spawn_key=(1, index)).generate_state(1, np.uint64)[0]) >> 1


# --------------------------------------------------------------------------- agents
_SPEC_LABEL = re.compile(r"^([A-Za-z0-9_.\-]+)=(.+)$")
#: ``label=spec`` with some label (no '/': a path may contain '=')
_LABEL_LIKE = re.compile(r"^[^=/]+=.+$")


def _default_label(spec: str, folders: int = 0) -> str:
    """A checkpoint's file stem (``-net`` added for ``net:``), after its last ``folders``
    folder names (``runs/a/best.zip`` with 1 is ``a/best``), a factory's name, or the agent
    name; a checkpoint whose stem would read as a shipped agent's name keeps its file name
    (``net:agents/models/az-2p.pt`` is ``net:az-2p.pt``, not the shipped ``az-2p-net``)."""
    if is_checkpoint(spec):
        net = spec.startswith(NET_PREFIX)
        path = Path(spec.removeprefix(NET_PREFIX).removeprefix(RLLIB_PREFIX))
        label = path.stem + ("-net" if net else "")
        if label in AGENT_NAMES or label in AZ_NAMES:
            label = (NET_PREFIX if net else "") + path.name
        kept = path.parent.parts[max(0, len(path.parent.parts) - folders) :] if folders else ()
        return Path(*kept, label).as_posix()
    return spec.rsplit(":", 1)[1] if SPEC_FACTORY.match(spec) else spec


def parse_specs(specs: Sequence[str]) -> tuple[list[str], list[str]]:
    """(specs, labels): ``label=spec`` split, checkpoints of the same name told apart by their
    folders, a spec given twice numbered ``label#2``, ..."""
    out_specs: list[str] = []
    labels: list[str] = []
    chosen: list[bool] = []  # the label was given (label=spec)
    for raw in specs:
        m = _SPEC_LABEL.match(raw)
        labelled = m is not None and not Path(raw).exists()
        spec = expand_home(m.group(2) if m is not None and labelled else raw)
        if spec.strip().lower() in AGENT_NAMES + AZ_NAMES:  # HEURISTIC is heuristic: one agent, numbered #2
            spec = spec.strip().lower()
        elif net_shipped_name(spec) is not None:
            spec = f"{NET_PREFIX}{net_shipped_name(spec)}"  # net:AZ-2P is net:az-2p
        if OPTIONS_LIKE.match(spec) and not Path(spec).exists():
            raise EvaluationError(f"agent {raw!r}: evaluate {NO_OPTIONS}")
        if not m and _LABEL_LIKE.match(raw) and not Path(raw).exists():
            raise EvaluationError(f"agent {raw!r}: the label before '=' may use only letters, digits, '_', '.' and '-'")
        label = m.group(1) if m is not None and labelled else _default_label(spec)
        out_specs.append(spec)
        labels.append(label)
        chosen.append(labelled)
    for i, label in enumerate(labels):  # a label the user chose names one agent only
        other = next((j for j, x in enumerate(labels) if x == label and j != i), None)
        if chosen[i] and other is not None:
            first, second = sorted((i, other))
            raise EvaluationError(
                f"agents {first + 1} ({specs[first]!r}) and {second + 1} ({specs[second]!r}) both go by {label!r}: "
                "give each agent its own label"
            )
    # Checkpoints of different runs (runs/a/best.zip, runs/b/best.zip) are told apart by
    # their folders ("a/best", "b/best"); the same spec given twice is numbered below.
    for folders in range(1, 1 + max((len(Path(x).parts) for x in out_specs), default=0)):
        clash = [
            i for i, label in enumerate(labels)
            if not chosen[i] and is_checkpoint(out_specs[i])
            and any(labels[j] == label and out_specs[j] != out_specs[i] for j in range(len(labels)))
        ]  # fmt: skip
        if not clash:
            break
        for i in clash:
            labels[i] = _default_label(out_specs[i], folders)
    seen: Counter[str] = Counter()
    for i, label in enumerate(labels):
        seen[label] += 1
        if seen[label] > 1:
            labels[i] = f"{label}#{seen[label]}"
    return out_specs, labels


#: The agents of this thread (a worker process has one), by (spec, seat, players, level):
#: built once, reset every game.  Per thread, since an agent is not thread-safe (its stream is
#: reseeded every game): tournaments run from two threads each play their own agents.
_LOCAL = threading.local()


def thread_agents() -> dict[tuple[str, int, int, int], Any]:
    """The agents this thread built for its tournament games (see :data:`_LOCAL`)."""
    agents: dict[tuple[str, int, int, int], Any] | None = getattr(_LOCAL, "agents", None)
    if agents is None:
        agents = _LOCAL.agents = {}
    return agents


def forget_agents() -> None:
    """Drop the agents this thread built (the next tournament builds its own: a checkpoint
    replaced since is loaded again)."""
    thread_agents().clear()


def _agent_for(spec: str, seat: int, config: GameConfig) -> Any:
    agents = thread_agents()
    key = (spec, seat, config.num_players, config.plate_level)
    agent = agents.get(key)
    if agent is None:
        agent = agents[key] = create_agent(spec, config)
    return agent


def create_agent(spec: str, config: GameConfig, seed: int | None = None) -> Any:
    """:func:`umbrella_env.match.build_agent`, with a bad spec as :class:`EvaluationError`."""
    try:
        return build_agent(spec, config, seed)
    except AgentSpecError as exc:
        raise EvaluationError(str(exc)) from None


# --------------------------------------------------------------------------- one game
def play_specs(
    specs_by_seat: Sequence[str], config: GameConfig, seed: int, *, key: int | None = None, cache: bool = False
) -> GameRecord:
    """One game by :func:`umbrella_env.match.play_game`, the agent of seat ``s`` built from
    ``specs_by_seat[s]``: anew for each call, or with ``cache`` once per thread and seat and
    reset every game (a tournament's workers; :func:`forget_agents` drops them), so that a
    factory redefined or a checkpoint replaced between two calls is the one that plays.
    Without ``cache`` each call loads a checkpoint again (a ``.zip``: about 0.5 s): for many
    games use :func:`run_tournament`, or ``cache=True``.

    The record's ``seats`` are ``0..P-1`` and ``agents`` the specs; :func:`run_tournament`
    fills in tournament indices and labels.
    """
    if not isinstance(config, GameConfig):
        raise EvaluationError(
            f"config must be a GameConfig (umbrella_env.core.config), got {type(config).__name__} {config!r}"
        )
    problem = int_problem("seed", seed, minimum=0)
    if problem:
        raise EvaluationError(problem)
    if isinstance(specs_by_seat, (str, os.PathLike)):
        raise EvaluationError(f"specs_by_seat must be a list of spec strings, one per seat, got {specs_by_seat!r}")
    P = config.num_players
    if len(specs_by_seat) != P:
        raise EvaluationError(f"{P}-player game needs {P} agent specs, got {len(specs_by_seat)}")
    agents = [
        _agent_for(spec, s, config) if cache else create_agent(spec, config) for s, spec in enumerate(specs_by_seat)
    ]
    res = play_game(agents, config, seed, key=key, names=specs_by_seat)
    return GameRecord(
        index=0,
        table=0,
        seats=tuple(range(P)),
        agents=tuple(specs_by_seat),
        scores=res.scores,
        ranks=res.ranks,
        turns=res.turns,
        truncated=res.truncated,
        seed=res.seed,
        key=res.key,
    )


# --------------------------------------------------------------------------- schedule
def plan_tables(num_agents: int, num_players: int) -> list[tuple[int, ...]]:
    """The tables of a tournament, as sorted tuples of agent indices (see module doc)."""
    if num_players == 1:
        return [(i,) for i in range(num_agents)]
    if num_agents >= num_players:
        return list(itertools.combinations(range(num_agents), num_players))
    return [
        t for t in itertools.combinations_with_replacement(range(num_agents), num_players) if len(set(t)) == num_agents
    ]


@dataclass(frozen=True)
class _Task:
    index: int
    table: int
    seats: tuple[int, ...]
    seed: int
    key: int


def seatings(num_players: int) -> int:
    """The games of a table over which its agents sit in every seating once: P! (1 in solo),
    P rotations of each of the (P-1)! cyclic orders; a table's games are a multiple of it."""
    return math.factorial(num_players)


def _cyclic_orders(table: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The (P-1)! cyclic orders of a table: its first agent, then every order of the others."""
    return [(table[0], *rest) for rest in itertools.permutations(table[1:])]


def _schedule(result: TournamentResult) -> list[_Task]:
    P, G = result.num_players, result.games_per_table
    deals_per_table = G // P
    tasks = []
    for t, table in enumerate(result.tables):
        orders = _cyclic_orders(table)
        for g in range(G):
            deal, rotation = divmod(g, P)
            if result.solo:
                deal_index = g  # every agent plays the same deals
            else:
                deal_index = t * deals_per_table + deal
            order = orders[deal % len(orders)]
            seats = tuple(order[(s + rotation) % P] for s in range(P))
            index = t * G + g
            tasks.append(_Task(index, t, seats, game_seed(result.seed, index), deal_key(result.seed, deal_index)))
    return tasks


def _play_chunk(tasks: list[_Task], specs: list[str], labels: list[str], config: GameConfig) -> list[GameRecord]:
    out = []
    for task in tasks:
        rec = play_specs([specs[a] for a in task.seats], config, task.seed, key=task.key, cache=True)
        out.append(
            dataclasses.replace(
                rec, index=task.index, table=task.table, seats=task.seats, agents=tuple(labels[a] for a in task.seats)
            )
        )
    return out


# --------------------------------------------------------------------------- tournament
def validate(
    agent_specs: Sequence[str],
    num_players: int,
    plate_level: int,
    games: int,
    max_turns: int,
    seed: int = 0,
    workers: int | None = None,
) -> None:
    """Raise :class:`EvaluationError` for an impossible tournament (before any agent is built)."""
    problem = game_options_problem(num_players, plate_level, max_turns)
    if problem is not None:
        raise EvaluationError(problem)
    problem = first_problem(
        [
            int_problem("--games", games),
            # the tournament is replayed from its seed: no None (fresh entropy), no 1.5 taken for 1
            int_problem("--seed", seed, minimum=0),
            None if workers is None else int_problem("--workers", workers),
        ]
    )
    if problem:
        raise EvaluationError(problem)
    if isinstance(agent_specs, (str, os.PathLike)):  # a string is a sequence: 'random' was agents 'r', 'a', ...
        raise EvaluationError(
            f"agent_specs must be a list of spec strings, got the single spec {os.fspath(agent_specs)!r}: "
            f"give [{os.fspath(agent_specs)!r}]"
        )
    if not agent_specs:
        raise EvaluationError(f"no agents given; {valid_choices()}")
    for i, spec in enumerate(agent_specs, start=1):
        if not isinstance(spec, (str, os.PathLike)):
            raise EvaluationError(
                f"agent {i}: agents are given by spec strings (a name, a checkpoint path or 'module:factory'), "
                f"got {type(spec).__name__} {spec!r}; for an agent defined in this session give "
                "'__main__:factory' (with workers=1), or save it in a module (docs/agents.md)"
            )
    if num_players >= 2 and len(agent_specs) < 2:
        raise EvaluationError(
            f"a {num_players}-player tournament needs at least 2 agents, got {len(agent_specs)} "
            f"({', '.join(agent_specs)}); to evaluate one agent alone use --players 1"
        )
    tables = len(plan_tables(len(agent_specs), num_players))
    if games * tables > MAX_GAMES:
        raise EvaluationError(
            f"--games {games} x {tables} table(s) is more than {MAX_GAMES:,} games; give --games of at most "
            f"{MAX_GAMES // tables:,} (or fewer agents), and run larger evaluations in parts with other --seed values"
        )


#: The most games one tournament plays (its schedule is built before the first game).
MAX_GAMES = 1_000_000
#: Where the games of a tournament are played: a local process pool, or Ray tasks.
BACKENDS = ("process", "ray")


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
    backend: str = "process",
    address: str | None = None,
) -> TournamentResult:
    """Play a round-robin tournament (or, for ``num_players=1``, solo games) of the agents.

    ``games`` is per table, rounded up to a multiple of :func:`seatings` (``num_players``!,
    so that every seating is played equally often); ``workers``
    processes play them (default 1: the games are played in this process).  More workers
    start a process pool, which imports the calling script again: call it from under
    ``if __name__ == "__main__":`` (``evaluate.py`` uses every CPU by default).  Every
    agent is built once here first, so a bad spec raises :class:`EvaluationError` before
    any game starts.  ``backend="ray"`` plays the games as Ray tasks instead, on the
    cluster at ``address`` or on a local Ray (:mod:`umbrella_env.evaluation.ray_backend`;
    ``workers`` must then be None: the cluster's CPUs decide): the same records for the same seed.
    """
    validate(agent_specs, num_players, plate_level, games, max_turns, seed, workers)
    if backend not in BACKENDS:
        raise EvaluationError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if workers is not None and backend == "ray":
        raise EvaluationError(
            "--workers sizes the local process pool; with --backend ray the cluster's CPUs decide: leave it out"
        )
    if address is not None and backend != "ray":
        raise EvaluationError("--address is the Ray cluster of --backend ray; add --backend ray or leave it out")
    agent_specs = [os.fspath(s) for s in agent_specs]  # a path-like spec is its text, in the result too
    specs, labels = parse_specs(agent_specs)
    if backend == "ray":  # a Ray task's __main__ is Ray's worker, never the caller's script or session
        main = next((s for s in specs if main_factory(s)), None)
        if main is not None:
            raise EvaluationError(
                f"agent {main!r} is defined in __main__, which Ray tasks cannot import: save the factory in a "
                "module (my_agents.py) and give 'my_agents:factory', or use the process backend (docs/agents.md)"
            )
    session = next((s for s in specs if session_factory(s)), None)
    if session is not None and (workers or 1) > 1:
        raise EvaluationError(
            f"agent {session!r} is defined in this interactive session (a notebook, python -c), which worker "
            "processes cannot import: use workers=1, or save the factory in a module (my_agents.py) and give "
            "'my_agents:factory' (docs/agents.md)"
        )
    config = GameConfig(num_players=num_players, plate_level=plate_level, max_turns=max_turns)
    forget_agents()  # a checkpoint replaced since the last tournament is loaded again
    for spec in dict.fromkeys(specs):
        _agent_for(spec, 0, config)
    workers = max(1, int(workers or 1))
    unit = seatings(num_players)
    per_table = -(-games // unit) * unit
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
        checkpoints=checkpoint_hashes(specs, labels),
    )
    tasks = _schedule(result)
    bar = Progress(len(tasks), progress, f"{len(result.tables)} table(s)")
    t0 = time.perf_counter()
    records: list[GameRecord] = []
    try:
        if backend == "ray":
            try:
                records += play_on_ray(_play_chunk, tasks, specs, labels, config, address, bar.update, forget_agents)
            except RayUnavailable as exc:
                raise EvaluationError(str(exc)) from None
        elif workers == 1:
            for task in tasks:
                records += _play_chunk([task], specs, labels, config)
                bar.update(1)
        else:
            chunk = max(1, min(32, len(tasks) // (workers * 8)))
            chunks = [tasks[i : i + chunk] for i in range(0, len(tasks), chunk)]
            # a failed game or Ctrl-C leaves the block at once (the pool is stopped, not drained)
            with process_pool(min(workers, len(chunks))) as pool:
                futures = [pool.submit(_play_chunk, c, specs, labels, config) for c in chunks]
                for fut in as_completed(futures):
                    done = fut.result()
                    records += done
                    bar.update(len(done))
    finally:
        bar.close()
        forget_agents()  # the agents built here (models, caches) are not kept after the tournament
    result.records = sorted(records, key=lambda r: r.index)
    result.elapsed = time.perf_counter() - t0
    return result
