"""Micro-benchmark of the single-game engine (not a test).

Records games of uniformly random legal play (``random.choice(game.legal_actions())``,
``max_turns`` as in the default config), then replays the recorded actions and times,
per decision, in the same run:

* ``single step``         :meth:`SingleGame.step` alone;
* ``single s+o+m``        step + :meth:`~SingleGame.observe` (the actor) + :meth:`~SingleGame.legal_mask`,
                          the engine part of one env step;
* ``agent loop``          s+o+m plus the agent side of an env loop: a random choice among
                          ``np.flatnonzero(mask)`` (live play, not a replay);
* ``batched s+o+m``       the batched engine at batch 1 doing the same
                          (``step_unchecked`` + ``observation.observe`` + ``legal_action_mask``);
* ``new()``               :meth:`SingleGame.new`, the deal of a new game (paid once per
                          ``steps/game`` decisions of random play, not included above).

    python -m umbrella_env.tools.bench_single [--steps 100000] [--players 1 2 4] [--level 1] [--repeat 3]

Each figure is the best of ``--repeat`` runs.

Targets: s+o+m at most ~12 us in solo and ~20 us at 2-4 players.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np

from umbrella_env.cli_args import HelpFormatter, command, first_problem, int_problem
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core import observation as O
from umbrella_env.core.config import GameConfig
from umbrella_env.core.single import SingleGame

Episode = tuple[SingleGame, list[int]]


def record(config: GameConfig, steps: int, seed: int = 0) -> list[Episode]:
    """Random legal games (start position, actions) totalling at least ``steps`` decisions;
    the last game may be cut short."""
    rnd = random.Random(seed)
    episodes: list[Episode] = []
    total = 0
    while total < steps:
        game = SingleGame.new(config, key=rnd.randrange(2**63))
        start, actions = game.clone(), []
        while not game.done and total < steps:
            a = rnd.choice(game.legal_actions())
            game.step(a)
            actions.append(a)
            total += 1
        episodes.append((start, actions))
    return episodes


def _clone_cost(episodes: list[Episode]) -> float:
    t0 = time.perf_counter()
    for start, _ in episodes:
        start.clone()
    return time.perf_counter() - t0


def replay_single(episodes: list[Episode], observe: bool) -> float:
    """Seconds per decision of replaying the episodes (clone cost removed)."""
    n = sum(len(acts) for _, acts in episodes)
    t0 = time.perf_counter()
    if observe:
        for start, acts in episodes:
            g = start.clone()
            step, obs, mask = g.step, g.observe, g.legal_mask
            for a in acts:
                obs()
                mask()
                step(a)
    else:
        for start, acts in episodes:
            g = start.clone()
            step = g.step
            for a in acts:
                step(a)
    return (time.perf_counter() - t0 - _clone_cost(episodes)) / n


def agent_loop_single(config: GameConfig, steps: int, seed: int = 1) -> float:
    """Seconds per decision of live random play: mask, observe, choose, step (resets excluded)."""
    rnd = random.Random(seed)
    done = 0
    elapsed = 0.0
    while done < steps:
        g = SingleGame.new(config, key=rnd.randrange(2**63))
        n = 0
        t0 = time.perf_counter()
        while not g.done and done + n < steps:
            mask = g.legal_mask()
            g.observe()
            legal = np.flatnonzero(mask)
            g.step(int(legal[rnd.randrange(len(legal))]))
            n += 1
        elapsed += time.perf_counter() - t0
        done += n
    return elapsed / done


def replay_batched(episodes: list[Episode], config: GameConfig, steps: int) -> float:
    """Seconds per decision of the batched engine at batch 1 replaying (a prefix of) the episodes."""
    state = E.allocate(config, 1)
    n = 0
    elapsed = 0.0
    for start, acts in episodes:
        start.to_batch(state, 0)
        acts = acts[: steps - n]
        arrays = [np.array([a], np.int64) for a in acts]
        t0 = time.perf_counter()
        for a in arrays:
            O.observe(state)
            E.legal_action_mask(state)
            E.step_unchecked(state, a)
        elapsed += time.perf_counter() - t0
        n += len(acts)
        if n >= steps:
            break
    return elapsed / n


def check_replay(episodes: list[Episode], config: GameConfig, games: int = 3) -> None:
    """Sanity check: the batched replay reaches the same states as the single one."""

    state = E.allocate(config, 1)
    for start, acts in episodes[:games]:
        g = start.clone()
        start.to_batch(state, 0)
        for a in acts:
            g.step(a)
            E.step_unchecked(state, np.array([a]))
        assert g.to_dict() == batch_io.to_dict(state, 0)


def time_new(config: GameConfig, games: int = 2000) -> float:
    """Seconds per :meth:`SingleGame.new` (the deal of a new game)."""
    t0 = time.perf_counter()
    for key in range(games):
        SingleGame.new(config, key)
    return (time.perf_counter() - t0) / games


@command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m umbrella_env.tools.bench_single",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--steps", type=int, default=100_000, help="decisions timed per configuration")
    parser.add_argument("--batched-steps", type=int, default=20_000, help="decisions timed on the batched engine")
    parser.add_argument(
        "--players", type=int, nargs="+", default=[1, 2, 4], choices=[1, 2, 3, 4], help="player counts timed"
    )
    parser.add_argument("--level", type=int, default=1, choices=[1, 2, 3, 4], help="score-plate level")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (the best is shown)")
    args = parser.parse_args(argv)
    problem = first_problem(
        int_problem(flag, value)
        for flag, value in (("--steps", args.steps), ("--batched-steps", args.batched_steps), ("--repeat", args.repeat))
    )
    if problem:
        parser.error(problem)
    print("microseconds per decision (random legal play)")
    header = {"players": 7, "single step": 12, "single s+o+m": 13, "agent loop": 11, "batched s+o+m": 14}
    header.update({"speed-up": 9, "new()": 7, "steps/game": 11})
    print(" ".join(f"{h:>{w}}" for h, w in header.items()))
    for players in args.players:
        config = GameConfig(num_players=players, plate_level=args.level)
        episodes = record(config, args.steps)
        check_replay(episodes, config)
        replay_single(episodes[:20], observe=True)  # warm up (and build the lazy tables)
        # Best of --repeat runs: the machine may be shared.
        step = min(replay_single(episodes, observe=False) for _ in range(args.repeat))
        som = min(replay_single(episodes, observe=True) for _ in range(args.repeat))
        loop = min(agent_loop_single(config, args.steps) for _ in range(args.repeat))
        batched = min(replay_batched(episodes, config, args.batched_steps) for _ in range(args.repeat))
        new = min(time_new(config) for _ in range(args.repeat))
        per_game = args.steps / len(episodes)
        label = "solo" if players == 1 else str(players)
        print(
            f"{label:>7} {step * 1e6:12.2f} {som * 1e6:13.2f} {loop * 1e6:11.2f} {batched * 1e6:14.1f} "
            f"{batched / som:8.1f}x {new * 1e6:7.1f} {per_game:11.0f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
