"""Tune the heuristic agent's weights for solo games by coordinate search (not a test).

    python -m umbrella_env.evaluation.tune_heuristic --games 1000 --seed 20000 --workers 2

Starting from ``--start`` (the multiplayer weights by default), each round tries every
weight of :class:`agents.heuristic.HeuristicWeights` that matters in solo at a few other
values (``alpha``, ``gamma``: steps added; ``choice``: the other integers 1-4; the rest:
x 0.5, 0.75, 1.33, 2) and keeps a new value at once when it raises the mean score by more
than ``--min-gain``.  Every candidate plays the same deals (game ``g`` uses
``umbrella_env.match.play_game`` with seed ``--seed + g``), so two candidates differ by
their decisions, not their luck.  The search stops after ``--rounds`` rounds or a round
without a change, and prints the weights found.  A result is worth checking on other deals
(``--check-seed``), since a search over one set of deals fits those deals a little.

:data:`agents.heuristic.SOLO_WEIGHTS` came from this search at its defaults (1,000 deals,
seed 20000: 25.91 to 26.75 on those deals; ``--workers 1`` beside a one-core training run took
38 minutes), rounded, with ``figure[2]`` halved (0.8 to 0.4) after a check on 2,000 other
deals (README, "Results").  ``validation_bonus`` came later: a comparison of the values 0.5
to 8 on the same 1,000 deals found 4 (26.83 to 27.04 there; 2, the largest step this search
takes from 1, gave only +0.07), and this search from the result (``--start solo --rounds
2 --jobs 2``, 7.4 minutes) then kept every weight.  ``cover_lookahead`` came from a study of
the covers (docs/alphazero.md, "What limits the strength"): 1 (27.04 to 27.10 on the tuning
deals), and this search from the result (``--start solo --rounds 1 --jobs 2``, 9.8 minutes)
kept every weight, ``cover_lookahead`` included (0.5 to 2: 27.08 at most); both runs came
before the fix of a hidden tile the validations read (docs/alphazero.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from contextlib import nullcontext
from typing import Any, TextIO

from agents.heuristic import MULTIPLAYER_WEIGHTS, SOLO_WEIGHTS, HeuristicAgent, HeuristicWeights
from umbrella_env.cli_args import HelpFormatter, seed_option
from umbrella_env.core.config import GameConfig
from umbrella_env.match import play_game
from umbrella_env.parallel import command_exits, process_pool

#: The weights tried, in order (``gift`` and ``personal_*`` play no part in solo).
PARAMETERS = (
    "alpha",
    "gamma",
    "completion",
    "kappa",
    "validation_bonus",
    "cover_lookahead",
    "figure2",
    "figure3",
    "figure4",
    "dead_colour",
    "choice",
)
STARTS = {"multiplayer": MULTIPLAYER_WEIGHTS, "solo": SOLO_WEIGHTS}
#: Chunks of deals a candidate's games are split into on a pool (any number gives the same scores).
_PARTS = 8


def get(w: HeuristicWeights, name: str) -> float:
    return w.figure[int(name[-1])] if name.startswith("figure") else getattr(w, name)


def replace(w: HeuristicWeights, name: str, value: float) -> HeuristicWeights:
    if name.startswith("figure"):
        figure = list(w.figure)
        figure[int(name[-1])] = value
        return dataclasses.replace(w, figure=tuple(figure))
    changes: dict[str, Any] = {name: value}
    return dataclasses.replace(w, **changes)


def candidates(name: str, value: float) -> list[float]:
    """The other values of weight ``name`` tried from ``value``, rounded to 4 significant
    digits (0.45, not the 0.44999999999999996 of 0.65 - 0.2)."""
    if name == "choice":
        return [c for c in (1, 2, 3, 4) if c != value]
    if name == "gamma":
        tried = [min(1.0, max(0.0, value + d)) for d in (-0.2, -0.1, 0.05, 0.1) if -1e-9 <= value + d <= 1.0 + 1e-9]
    elif name == "alpha":
        tried = [min(1.0, max(0.0, value + d)) for d in (-0.2, -0.1, 0.1, 0.2)]
    elif value == 0:
        tried = [0.3, 1.0]
    else:
        tried = [value * m for m in (0.5, 0.75, 1.33, 2.0)]
    return [float(f"{v:.4g}") for v in tried]


def _scores(weights: HeuristicWeights, level: int, seeds: Sequence[int]) -> list[int]:
    config = GameConfig(num_players=1, plate_level=level)
    agent = HeuristicAgent(weights=weights)
    return [play_game([agent], config, seed=s).scores[0] for s in seeds]


def mean_score(pool: Executor | None, weights: HeuristicWeights, level: int, seed: int, games: int) -> float:
    """Mean solo score of ``weights`` over games ``seed + g``, g < ``games`` (on ``pool``'s
    workers when given)."""
    seeds = list(range(seed, seed + games))
    if pool is None:
        return statistics.fmean(_scores(weights, level, seeds))
    parts = [seeds[j::_PARTS] for j in range(_PARTS)]
    done = pool.map(_scores, [weights] * _PARTS, [level] * _PARTS, parts)
    return statistics.fmean(x for part in done for x in part)


def tune(
    pool: Executor | None,
    start: HeuristicWeights,
    level: int,
    seed: int,
    games: int,
    rounds: int,
    min_gain: float,
    log: TextIO = sys.stdout,
) -> tuple[HeuristicWeights, float]:
    """The coordinate search of the module doc; returns the weights and their mean score."""
    t0 = time.perf_counter()
    best_w = start
    best = mean_score(pool, best_w, level, seed, games)
    print(f"start: {best:.3f}", file=log, flush=True)
    for r in range(rounds):
        changed = False
        for name in PARAMETERS:
            for value in candidates(name, get(best_w, name)):
                w = replace(best_w, name, value)
                score = mean_score(pool, w, level, seed, games)
                keep = score > best + min_gain
                mark = "  kept" if keep else ""
                line = f"round {r + 1} {name}={value:.4g}: {score:.3f}{mark}  [{time.perf_counter() - t0:.0f} s]"
                print(line, file=log, flush=True)
                if keep:
                    best_w, best, changed = w, score, True
        if not changed:
            break
    return best_w, best


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def _gain(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}") from None
    if not (math.isfinite(value) and value >= 0):  # nan would keep nothing, -inf everything
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


@command_exits
def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m umbrella_env.evaluation.tune_heuristic",
        description=(__doc__ or "").split("\n")[0],
        formatter_class=HelpFormatter,
    )
    ap.add_argument("--games", type=_positive_int, default=1000, help="deals per candidate (default 1000)")
    ap.add_argument("--seed", type=seed_option(), default=20_000, help="first deal's seed, >= 0 (default 20000)")
    ap.add_argument("--level", type=int, choices=(1, 2, 3, 4), default=1, help="plate level (default 1)")
    ap.add_argument(
        "--start", choices=sorted(STARTS), default="multiplayer", help="starting weights (default multiplayer)"
    )
    ap.add_argument("--rounds", type=_positive_int, default=3, help="most rounds over the weights (default 3)")
    ap.add_argument(
        "--min-gain", type=_gain, default=0.1, help="mean-score gain that keeps a change, >= 0 (default 0.1)"
    )
    ap.add_argument(
        "--workers", "--jobs", dest="jobs", type=_positive_int, default=1, help="worker processes (default 1)"
    )
    ap.add_argument(
        "--check-seed",
        type=seed_option(),
        default=None,
        help="also compare start and result on --games other deals (>= 0)",
    )
    args = ap.parse_args(argv)
    start = STARTS[args.start]
    with process_pool(args.jobs) if args.jobs > 1 else nullcontext() as pool:
        weights, score = tune(pool, start, args.level, args.seed, args.games, args.rounds, args.min_gain)
        print(f"found: {weights} (mean {score:.3f} on the tuning deals)")
        if args.check_seed is not None:
            for label, w in (("start", start), ("found", weights)):
                check = mean_score(pool, w, args.level, args.check_seed, args.games)
                print(f"check (seed {args.check_seed}): {label} {check:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
