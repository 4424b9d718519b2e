"""Self-play throughput of the Gumbel AlphaZero trainer (a command, not a test).

    python -m umbrella_env.training.bench_alphazero                  # 2 players, shipped network
    python -m umbrella_env.training.bench_alphazero --players 1 --simulations 32 --workers 2

Plays ``--games`` self-play games at once per worker exactly as the trainer does
(:func:`umbrella_env.training.alphazero.selfplay_chunk`: one search over all games in flight,
leaves batched into one forward pass per simulation step) and reports searched decisions
per second, network samples (leaf evaluations) per second, and where the time goes: the
engine (determinize, step, legal actions, observe), the network (forward passes), the
heuristic playouts at the leaves (``--rollout-weight`` > 0), the heuristic inputs of a
network that reads them (``--heuristic-inputs`` in training) and the search (the tree:
selection, sigma transform, backup; the rest).  With ``--workers N`` the
same games are split over N processes, each single-threaded, as ``--workers`` does in training.

The peer, measured in the same run: the same search with one game in flight (forward passes
of a batch of one leaf, what batching across games avoids), played for ``--peer-games``
games in this process; the ratio compares searched decisions/s per process.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

import numpy as np

from umbrella_env.cli_args import (
    HelpFormatter,
    first_problem,
    int_problem,
    missing_extra,
    path_option,
    real_problem,
    seed_option,
    set_torch,
)

try:  # the train extra's package only: an ImportError of this project's own code is a bug's
    import torch  # noqa: F401  (set_torch sets its threads and seed)
except ImportError as exc:  # pragma: no cover - exercised only without the train extra
    missing_extra(__name__, exc, "the self-play benchmark")

from agents.az.agent import SHIPPED_MODELS, model_file, shipped_path
from agents.az.net import DEFAULT_HIDDEN, AZNet, load_network
from umbrella_env.core.config import GameConfig
from umbrella_env.parallel import command_exits, process_pool
from umbrella_env.training.alphazero import SELFPLAY_MAX_TURNS, SELFPLAY_STATS, selfplay_chunk
from umbrella_env.training.options import check_game


def _ready(_: int) -> int:
    """A no-op job: the pool's processes started, with this module (and torch) imported."""
    return os.getpid()


@command_exits
def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m umbrella_env.training.bench_alphazero",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    p.add_argument("--players", type=int, default=2, help="1-4 (default 2)")
    p.add_argument("--level", type=int, default=1, help="plate level 1-4 (default 1)")
    p.add_argument("--games", type=int, default=32, help="games in flight per worker (default 32)")
    p.add_argument("--simulations", type=int, default=16, help="simulations per decision (default 16)")
    p.add_argument("--max-considered", type=int, default=16, help="root actions considered (default 16)")
    p.add_argument(
        "--rollout-weight", type=float, default=0.0, help="weight of heuristic playouts at the leaves, 0-1 (default 0)"
    )
    p.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    p.add_argument(
        "--checkpoint",
        type=path_option,
        default=None,
        help=f"a .pt network or a shipped model's name ({', '.join(SHIPPED_MODELS)}; "
        "default: the shipped model for --players 1 or 2, else an untrained one)",
    )
    p.add_argument("--seed", type=seed_option(), default=0, help="seed (default 0)")
    p.add_argument(
        "--peer-games",
        type=int,
        default=2,
        help="games played one at a time as the peer (default 2; 0 skips the peer)",
    )
    args = p.parse_args(argv)
    try:
        check_game(args.players, args.level)
    except ValueError as exc:
        p.error(str(exc))
    problem = first_problem(
        [
            int_problem("--games", args.games),
            int_problem("--simulations", args.simulations),
            int_problem("--workers", args.workers),
            int_problem("--max-considered", args.max_considered, 2),
            int_problem("--peer-games", args.peer_games, 0),
            real_problem("--rollout-weight", args.rollout_weight, minimum=0, maximum=1),
        ]
    )
    if problem:
        p.error(problem)
    set_torch(threads=1)
    name = {1: "az-solo", 2: "az-2p"}.get(args.players)
    if args.checkpoint:
        path: str | None = str(model_file(args.checkpoint))
    elif name in SHIPPED_MODELS and args.level == 1 and shipped_path(name).is_file():  # the shipped are level 1
        path = str(shipped_path(name))
    else:
        path = None
    try:
        if path is not None:
            net, _ = load_network(path, num_players=args.players, plate_level=args.level)
            label = path
        else:
            set_torch(seed=args.seed)
            net, label = AZNet(args.players, DEFAULT_HIDDEN), "an untrained network"
    except ValueError as exc:
        p.error(str(exc))
    weights = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    config = GameConfig(num_players=args.players, plate_level=args.level, max_turns=SELFPLAY_MAX_TURNS)
    seeds = np.random.SeedSequence(args.seed).generate_state(args.games * args.workers, np.uint64).tolist()
    jobs = [
        {
            "config": config,
            "hidden": net.hidden,
            "slide_hidden": net.slide_hidden,
            "heuristic_inputs": net.heuristic_inputs,
            "weights": weights,
            "seeds": seeds[w :: args.workers],
            "simulations": args.simulations,
            "max_considered": args.max_considered,
            "margin_weight": 0.5,
            "rollout_weight": args.rollout_weight,
        }
        for w in range(args.workers)
    ]
    print(
        f"{args.players} player(s), level {args.level}, {args.simulations} simulations, {args.games} games "
        f"in flight x {args.workers} worker(s), {label}",
        flush=True,
    )
    if args.workers == 1:
        t0 = time.perf_counter()
        results = [selfplay_chunk(jobs[0])]
        wall = time.perf_counter() - t0
    else:
        with process_pool(args.workers) as pool:
            # The trainer keeps one pool for the whole run: its start (processes, imports) is not timed.
            list(pool.map(_ready, range(args.workers)))
            t0 = time.perf_counter()
            results = list(pool.map(selfplay_chunk, jobs))
            wall = time.perf_counter() - t0
    total = {k: sum(r[k] for r in results) for k in SELFPLAY_STATS}
    busy = total["seconds"]
    search = busy - total["network_s"] - total["engine_s"] - total["rollout_s"] - total["inputs_s"]
    print(
        f"games: {total['games']}, searched decisions: {total['decisions']:,} (+{total['forced']:,} forced), "
        f"simulations: {total['simulations']:,}, network samples: {total['leaves']:,}"
    )
    print(
        f"wall time: {wall:.1f} s -> {total['decisions'] / wall:,.0f} searched decisions/s, "
        f"{total['leaves'] / wall:,.0f} network samples/s "
        f"(inside the forward passes: {total['leaves'] / max(total['network_s'], 1e-9):,.0f} samples/s)"
    )
    print(
        f"time share (all workers): engine {100 * total['engine_s'] / busy:.0f}%, "
        f"search {100 * search / busy:.0f}%, network {100 * total['network_s'] / busy:.0f}%, "
        f"playouts {100 * total['rollout_s'] / busy:.0f}%, heuristic inputs {100 * total['inputs_s'] / busy:.0f}%",
        flush=True,
    )
    if args.peer_games:
        # The same games' first ones, each searched alone: a forward pass per leaf.
        t0 = time.perf_counter()
        peer = [selfplay_chunk({**jobs[0], "seeds": [s]}) for s in seeds[: args.peer_games]]
        peer_wall = time.perf_counter() - t0
        peer_decisions = sum(r["decisions"] for r in peer)  # len(peer): at most the games timed above
        batched, alone = total["decisions"] / wall / args.workers, peer_decisions / peer_wall
        print(
            f"peer, one game in flight ({len(peer)} game(s), one process): {peer_decisions:,} searched "
            f"decisions in {peer_wall:.1f} s -> {alone:,.0f} searched decisions/s"
        )
        print(f"ratio batched / one game in flight, per process: {batched / alone:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
