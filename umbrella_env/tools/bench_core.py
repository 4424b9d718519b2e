"""Benchmark of the batched rules engine (not a test).

Random legal play (uniform over the legal actions, finished games reset at once) on the
batched engine at several batch sizes, for solo, 2 and 4 players, compared in the same
run with the plain-Python reference engine playing the same way.  Prints steps/s (one
step = one decision of one game), the speed-up over the reference, and the bytes of
state per game.

    python -m umbrella_env.tools.bench_core [--seconds 3] [--batches 1 256 4096]

Target (issue #2): at least 500,000 steps/s at batch 4096 with 2 players on 2 cores.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

import numpy as np

from umbrella_env.cli_args import HelpFormatter, command, first_problem, int_problem, real_problem
from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.reference import ReferenceGame

#: The largest --batches: the core's (about 1.5 kB of memory per game in play, 4 players, so
#: 1.5 GB; 10**9 was NumPy's MemoryError after the reference's timing).
MAX_BATCH = E.MAX_BATCH


def bench_batched(config: GameConfig, batch: int, seconds: float, seed: int = 0) -> tuple[float, int]:
    """(steps/s, bytes of state per game) of random legal play on the batched engine."""
    rng = np.random.default_rng(seed)
    state = E.init(config, batch, seed=rng)
    steps = 0
    calls = 0
    t0 = time.perf_counter()
    while True:
        actions = E.random_legal_actions(state, rng)
        E.step_unchecked(state, actions)
        steps += batch
        calls += 1
        done = state.done
        if done.any():
            E.reset(state, np.flatnonzero(done), rng)
        if calls % 8 == 0 and time.perf_counter() - t0 >= seconds:
            break
    return steps / (time.perf_counter() - t0), state.nbytes // batch


def bench_reference(config: GameConfig, seconds: float, seed: int = 0) -> float:
    """Steps/s of random legal play on the reference engine."""
    rnd = random.Random(seed)
    game = ReferenceGame.new(config, seed=seed)
    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(64):
            if game.terminated or game.truncated:
                game = ReferenceGame.new(config, seed=rnd.randrange(2**31))
            game.step(rnd.choice(game.legal_actions()))
            steps += 1
    return steps / (time.perf_counter() - t0)


@command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m umbrella_env.tools.bench_core",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    parser.add_argument(
        "--batches", type=int, nargs="+", default=[1, 256, 4096], help=f"batch sizes, 1 to {MAX_BATCH:,} each"
    )
    parser.add_argument(
        "--players", type=int, nargs="+", default=[2, 4, 1], choices=[1, 2, 3, 4], help="player counts timed"
    )
    parser.add_argument("--level", type=int, default=1, choices=[1, 2, 3, 4], help="score-plate level")
    args = parser.parse_args(argv)
    problem = first_problem(
        [real_problem("--seconds", args.seconds, positive=True)]
        + [int_problem("--batches", b, 1, MAX_BATCH) for b in args.batches]
    )
    if problem:
        parser.error(problem)
    print(f"{'players':>7} {'batch':>6} {'steps/s':>12} {'x reference':>12} {'bytes/game':>11}")
    for players in args.players:
        config = GameConfig(num_players=players, plate_level=args.level)
        ref = bench_reference(config, args.seconds)
        label = "solo" if players == 1 else str(players)
        print(f"{label:>7} {'ref':>6} {ref:12,.0f} {1.0:12.2f} {'-':>11}", flush=True)
        for batch in args.batches:
            sps, nbytes = bench_batched(config, batch, args.seconds)
            print(f"{label:>7} {batch:>6} {sps:12,.0f} {sps / ref:12.1f} {nbytes:>11}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
