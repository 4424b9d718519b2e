"""Measure the strength of the hand-written agents (not a test).

Solo: the mean final score of each agent over the same seeded deals.  2 players: for
each pair of agents, seeded deals each played twice with the seats swapped; the win
rate is :func:`umbrella_env.match.win_credits` (a shared victory or a truncated game
counts half a win).  Every "±" is one standard error (``evaluate.py`` gives 95% intervals).

    python -m umbrella_env.evaluation.ladder --solo-games 500 --agents random greedy heuristic
    python -m umbrella_env.evaluation.ladder --solo-games 100 --agents "search:simulations=100" --jobs 2
    python -m umbrella_env.evaluation.ladder --pair-games 100 --agents random greedy heuristic

An agent is a :func:`umbrella_env.match.build_agent` spec (``net:PATH.pt``,
``rllib:FOLDER`` and ``package.module:factory`` included), optionally followed by
``:key=value,key=value`` keyword arguments for its constructor (numbers, ``true``,
``false`` and ``none`` are parsed), e.g. ``search:simulations=200``,
``heuristic:look_ahead=false`` or ``net:runs/az/best.pt:deterministic=false``.  Before any
game, every agent is built for each kind of game it will play (solo with
``--solo-games``, 2 players with ``--pair-games``), so a spec that cannot be built, or a
checkpoint made for another player count or plate level, is refused with exit status 2.
Games are played by :func:`umbrella_env.match.play_out`, with the match runner's call
convention and legality check.  Game ``g`` uses the deal ``seed * 100000 + g`` (a game
key, below 2**64, which bounds ``--seed``) and resets every agent with a seed derived
from ``g``, so results do not depend on ``--jobs``.
"""

from __future__ import annotations

import argparse
import itertools
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.registry import AGENT_NAMES, AZ_NAMES
from umbrella_env.cli_args import (
    HelpFormatter,
    first_problem,
    game_options_problem,
    int_problem,
    program_name,
    seed_option,
)
from umbrella_env.core.config import GameConfig
from umbrella_env.core.engine import KEY_RANGE
from umbrella_env.core.single import SingleGame
from umbrella_env.match import (
    AgentError,
    AgentSpecError,
    DecisionTimes,
    build_agent,
    play_out,
    reset_agent,
    win_credits,
)
from umbrella_env.parallel import command_exits, process_pool

_WORDS = {"true": True, "false": False, "none": None}
#: One ``key=value`` option: an identifier, so a path holding ``=`` stays part of the name.
_OPTION = re.compile(r"^[A-Za-z_]\w*=[^=]*$")
#: Game ``g`` of a ladder run is dealt with the key ``seed * DEAL_STRIDE + g``.
DEAL_STRIDE = 100_000
#: Every game key is below this (:func:`umbrella_env.core.engine.check_keys`).
KEY_LIMIT = KEY_RANGE[1]  # the engine's game keys are below 2**64


def parse_spec(text: str) -> tuple[str, dict[str, Any]]:
    """``"search:simulations=100,seconds=0.5"`` -> ("search", {"simulations": 100, "seconds": 0.5});
    ``true``, ``false`` and ``none`` (any case) are True, False and None.

    The options are what follows the *last* ``:`` when every item there is ``key=value``,
    so a name holding a ``:`` of its own stays whole: ``"net:x.pt"`` -> ("net:x.pt", {}),
    ``"net:x.pt:deterministic=false"`` -> ("net:x.pt", {"deterministic": False}).  An option
    given twice, or a ``:`` with nothing after it, is an :class:`AgentSpecError`."""
    name, sep, rest = text.rpartition(":")
    if sep and not rest.strip() and name:
        raise AgentSpecError(f"agent {text!r}: nothing after ':' (give key=value options, or leave out the ':')")
    items = [item for item in rest.split(",") if item]
    if not sep or not all(_OPTION.match(item) for item in items):
        return text, {}
    kwargs: dict[str, Any] = {}
    for item in items:
        key, _, value = item.partition("=")
        if key in kwargs:
            raise AgentSpecError(f"agent {text!r}: option {key!r} given twice")
        if value.lower() in _WORDS:
            kwargs[key] = _WORDS[value.lower()]
            continue
        for cast in (int, float):
            try:
                kwargs[key] = cast(value)
                break
            except ValueError:
                continue
        else:
            kwargs[key] = value
    return name, kwargs


def build(text: str, config: GameConfig, seed: int | None = None) -> Any:
    """The agent of the ladder spec ``text`` for a game of ``config``, or
    :class:`umbrella_env.match.AgentSpecError`.

    The name and options go through :func:`umbrella_env.match.build_agent` (the shared spec
    rules and the check of a checkpoint against the game).
    """
    name, options = parse_spec(text)
    head, _, rest = name.partition(":")
    if rest and head.strip().lower() in AGENT_NAMES + AZ_NAMES:  # "search:simulations", not a factory
        raise AgentSpecError(f"agent {text!r}: the options after {head + ':'!r} must be key=value items")
    return build_agent(name, config, seed, options, label=text)


def play(
    config: GameConfig, agents: Sequence[Any], key: int, seed: int = 0, names: Sequence[str] | None = None
) -> tuple[SingleGame, list[float], list[int]]:
    """Play one game (seat ``i`` is ``agents[i]``, reset with seed ``seed * 1000 + i``);
    returns the final game, each seat's thinking time in seconds and its decisions.
    ``names`` (the specs) label the agents in an :class:`AgentError`, which also names the
    deal key and the agents' seed (:func:`play` replays the game)."""
    times = DecisionTimes([0.0] * len(agents), [0] * len(agents))
    try:
        for i, agent in enumerate(agents):
            reset_agent(agent, seed * 1000 + i, None if names is None else f"agent {names[i]!r}")
        game = play_out(agents, SingleGame.new(config, key), names=names, times=times)
    except AgentError as exc:
        raise AgentError(
            f"{exc}; in the ladder's game {seed}, deal key {key} (ladder.play(..., {key}, {seed}) replays it)"
        ) from (exc.__cause__ or exc)
    return game, times.seconds, times.decisions


# --------------------------------------------------------------------------- solo
@dataclass
class SoloResult:
    spec: str
    scores: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    bonus: list[int] = field(default_factory=list)
    all_tokens: list[bool] = field(default_factory=list)
    decisions: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        s = self.scores
        mean = statistics.fmean(s)
        sem = statistics.stdev(s) / len(s) ** 0.5 if len(s) > 1 else 0.0
        six = sum(self.all_tokens) / len(s)
        return (
            f"{self.spec:<26} games {len(s):4d}  mean {mean:6.2f} ± {sem:4.2f} s.e.  "
            f"median {statistics.median(s):4.1f}  "
            f"min {min(s):3d} max {max(s):3d}  ≥27 {sum(x >= 27 for x in s) / len(s):5.1%}  "
            f"all tokens {six:5.1%}  bonus {statistics.fmean(self.bonus):4.2f}  "
            f"{1000 * self.seconds / max(1, self.decisions):8.2f} ms/decision"
        )


def _solo_chunk(spec: str, level: int, seed: int, games: Sequence[int]) -> SoloResult:
    config = GameConfig(num_players=1, plate_level=level)
    agent = build(spec, config, seed)
    res = SoloResult(spec)
    for g in games:
        game, times, counts = play(config, [agent], key=seed * DEAL_STRIDE + g, seed=g, names=[spec])
        res.scores.append(game.scores()[0])
        res.tokens.append(game.tokens(0))
        res.all_tokens.append(game.all_tokens_placed())
        res.bonus.append(game.plate_bonus(0))
        res.seconds += times[0]
        res.decisions += counts[0]
    return res


def _chunks(n: int, jobs: int) -> list[list[int]]:
    return [list(range(j, n, jobs)) for j in range(min(jobs, n))]


def solo_ladder(
    specs: Sequence[str], games: int, level: int = 1, seed: int = 0, jobs: int = 1, log: Any = None
) -> list[SoloResult]:
    """Solo results of each agent over deals ``seed * DEAL_STRIDE + g``, g < ``games``."""
    results = []
    for spec in specs:
        if jobs > 1:
            with process_pool(jobs) as pool:
                parts = list(pool.map(_solo_chunk, *zip(*[(spec, level, seed, c) for c in _chunks(games, jobs)])))
        else:
            parts = [_solo_chunk(spec, level, seed, range(games))]
        res = SoloResult(spec)
        for part in parts:
            res.scores += part.scores
            res.tokens += part.tokens
            res.all_tokens += part.all_tokens
            res.bonus += part.bonus
            res.seconds += part.seconds
            res.decisions += part.decisions
        if log:
            print(res.line(), file=log, flush=True)
        results.append(res)
    return results


# --------------------------------------------------------------------------- 2 players
@dataclass
class PairResult:
    a: str
    b: str
    points: float = 0.0  # wins of a (shared victories and truncations count half)
    games: int = 0
    score_a: float = 0.0
    score_b: float = 0.0
    turns: int = 0
    seconds_a: float = 0.0
    decisions_a: int = 0

    def merge(self, other: PairResult) -> None:
        for name in ("points", "games", "score_a", "score_b", "turns", "seconds_a", "decisions_a"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def line(self) -> str:
        n = max(1, self.games)
        rate = self.points / n
        sem = (rate * (1 - rate) / n) ** 0.5
        return (
            f"{self.a:>26} vs {self.b:<26} win rate {rate:6.1%} ± {sem:4.1%} s.e. over {self.games} games; "
            f"mean score {self.score_a / n:5.2f} vs {self.score_b / n:5.2f}; {self.turns / n:5.1f} turns/game; "
            f"{1000 * self.seconds_a / max(1, self.decisions_a):.1f} ms/decision ({self.a})"
        )


def _pair_chunk(spec_a: str, spec_b: str, level: int, seed: int, games: Sequence[int]) -> PairResult:
    config = GameConfig(num_players=2, plate_level=level)
    a, b = build(spec_a, config, seed), build(spec_b, config, seed + 1)
    res = PairResult(spec_a, spec_b)
    for g in games:
        for seats, names in (((a, b), [spec_a, spec_b]), ((b, a), [spec_b, spec_a])):
            game, times, counts = play(config, list(seats), key=seed * DEAL_STRIDE + g, seed=g, names=names)
            i = seats.index(a)
            scores = game.scores()
            res.points += win_credits(game.ranks(), game.truncated)[i]
            res.games += 1
            res.score_a += scores[i]
            res.score_b += scores[1 - i]
            res.turns += game.turn
            res.seconds_a += times[i]
            res.decisions_a += counts[i]
    return res


def pair_match(spec_a: str, spec_b: str, games: int, level: int = 1, seed: int = 0, jobs: int = 1) -> PairResult:
    """``spec_a`` against ``spec_b`` over ``games`` deals, each with both seatings."""
    if jobs > 1:
        with process_pool(jobs) as pool:
            args = [(spec_a, spec_b, level, seed, c) for c in _chunks(games, jobs)]
            parts = list(pool.map(_pair_chunk, *zip(*args)))
    else:
        parts = [_pair_chunk(spec_a, spec_b, level, seed, range(games))]
    res = PairResult(spec_a, spec_b)
    for part in parts:
        res.merge(part)
    return res


@command_exits
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog=program_name("python -m umbrella_env.evaluation.ladder"),
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    ap.add_argument(
        "--agents",
        nargs="+",
        default=["random", "greedy", "heuristic"],
        metavar="AGENT",
        help="agent specs, with options as name:key=value,... (e.g. search:simulations=100)",
    )
    ap.add_argument("--level", type=int, default=1, help="plate level 1-4")
    ap.add_argument("--solo-games", type=int, default=0, help="solo deals per agent")
    ap.add_argument("--pair-games", type=int, default=0, help="2-player deals per pair (each with both seatings)")
    ap.add_argument("--seed", type=seed_option(), default=0, help="seed of the deals (its range: see above)")
    ap.add_argument("--workers", "--jobs", dest="jobs", type=int, default=1, help="worker processes")
    args = ap.parse_args(argv)
    problem = first_problem(
        [
            int_problem("--solo-games", args.solo_games, 0),
            int_problem("--pair-games", args.pair_games, 0),
            int_problem("--workers", args.jobs),
            game_options_problem(2, args.level),
        ]
    )
    if problem:
        ap.error(problem)
    if not (args.solo_games or args.pair_games):
        ap.error("give --solo-games and/or --pair-games")
    top_seed = (KEY_LIMIT - max(args.solo_games, args.pair_games)) // DEAL_STRIDE  # every deal key fits
    if args.seed > top_seed:
        ap.error(
            f"--seed must be in [0, {top_seed}] (game g is dealt with the key seed * {DEAL_STRIDE} + g, "
            f"below 2**64), got {args.seed}"
        )
    if args.pair_games and len(args.agents) < 2:
        ap.error(f"--pair-games needs at least 2 agents in --agents, got {len(args.agents)}")
    players = ([1] if args.solo_games else []) + ([2] if args.pair_games else [])
    for spec in args.agents:  # every agent built for each game it will play: a bad one is bad input
        for p in players:
            try:
                build(spec, GameConfig(num_players=p, plate_level=args.level))
            except (ValueError, TypeError) as exc:
                ap.error(f"--agents {spec!r}: {str(exc).removeprefix(f'agent {spec!r}: ')}")
    try:  # an agent that fails in a game: one line naming it and the game, as evaluate.py says it
        if args.solo_games:
            print(f"solo, level {args.level}, {args.solo_games} seeded deals per agent", flush=True)
            solo_ladder(args.agents, args.solo_games, args.level, seed=args.seed, jobs=args.jobs, log=sys.stdout)
        if args.pair_games:
            print(f"2 players, level {args.level}, {args.pair_games} deals x 2 seatings per pair", flush=True)
            for x, y in itertools.combinations(args.agents, 2):
                t0 = time.perf_counter()
                res = pair_match(x, y, args.pair_games, args.level, seed=args.seed, jobs=args.jobs)
                print(f"{res.line()}  [{time.perf_counter() - t0:.0f} s]", flush=True)
    except AgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
