"""Play a batch of seeded games on the batched engine and summarise them.

    python -m umbrella_env.demo [--players 2] [--level 1] [--games 256] [--seed 0] [--policy random]

Prints the final position of the first game and summary statistics: how games ended,
their length, scores per seat, win shares per seat, and the engine's speed.
``--policy greedy`` prefers slides that complete a figure (otherwise random).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import UmbrellaError
from umbrella_env.core.render import render_text


def run(players: int, level: int, games: int, seed: int, policy: str) -> str:
    config = GameConfig(num_players=players, plate_level=level)
    rng = np.random.default_rng(seed)
    state = E.init(config, games, seed=rng)
    steps = 0
    t0 = time.perf_counter()
    next_report = t0 + 2.0
    while not state.done.all():
        if policy == "greedy":
            from umbrella_env.tools.differential import policy_actions

            actions = policy_actions(state, rng, greedy=1.0)
        else:
            actions = E.random_legal_actions(state, rng)
        steps += int((~state.done).sum())
        E.step(state, actions)
        if time.perf_counter() > next_report:
            print(f"  ... {int(state.done.sum())}/{games} games finished, {steps:,} steps", file=sys.stderr)
            next_report += 2.0
    elapsed = time.perf_counter() - t0
    scores = E.scores(state)
    ranks = E.ranks(state)
    turns = state.turn
    out = [
        f"Final position of game 0 (seed {seed}):",
        render_text(batch_io.to_dict(state, 0)),
        "",
        f"{games} {'solo' if players == 1 else f'{players}-player'} games at plate level {level}, "
        f"{policy} policy, seed {seed}",
        f"  ended by the rules: {int(state.terminated.sum())}   truncated at {config.max_turns} turns: "
        f"{int(state.truncated.sum())}",
        f"  turns per game: mean {turns.mean():.1f}, median {np.median(turns):.0f}, "
        f"min {turns.min()}, max {turns.max()}",
        f"  decisions: {steps:,} in {elapsed:.2f} s ({steps / elapsed:,.0f} steps/s)",
    ]
    for seat in range(players):
        s = scores[:, seat]
        line = f"  seat {seat}: score mean {s.mean():6.2f} (sd {s.std():5.2f}, min {s.min()}, max {s.max()})"
        if players > 1:
            winners = (ranks == 0).sum(axis=1)
            share = np.where(ranks[:, seat] == 0, 1.0 / winners, 0.0).mean()
            line += f", win share {share:6.1%}"
        out.append(line)
    if players == 1:
        bands = [(15, "try again"), (19, "a start"), (24, "not bad"), (27, "well played"), (31, "impressive")]
        s = scores[:, 0]
        counts = []
        lo = None
        for hi, name in bands:
            counts.append(f"{name} {int(((s < hi) if lo is None else ((s >= lo) & (s < hi))).sum())}")
            lo = hi
        counts.append(f"big respect {int((s >= 31).sum())}")
        out.append("  merit bands: " + ", ".join(counts))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2, help="1 (solo) to 4")
    parser.add_argument("--level", type=int, default=1, help="score-plate level 1 to 4")
    parser.add_argument("--games", type=int, default=256, help="games played side by side")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policy", choices=["random", "greedy"], default="random")
    args = parser.parse_args(argv)
    try:
        print(run(args.players, args.level, args.games, args.seed, args.policy))
    except UmbrellaError as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
