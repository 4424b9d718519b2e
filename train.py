#!/usr/bin/env python
"""Train an agent for Umbrella: ``python train.py --help``.

MaskablePPO by default (:mod:`umbrella_env.training.ppo`, installed as ``umbrella-train``);
``--algo alphazero`` runs the Gumbel AlphaZero trainer instead
(:mod:`umbrella_env.training.alphazero`, its own options: ``python train.py --algo alphazero --help``).
"""

import sys

ALGOS = ("ppo", "alphazero")


def split_algo(argv: list[str]) -> tuple[str, list[str]]:
    """The ``--algo`` value (default ppo) and the other arguments."""
    rest: list[str] = []
    algo = "ppo"
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--algo" and i + 1 < len(argv):
            algo, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--algo="):
            algo = arg.split("=", 1)[1]
        elif arg == "--algo":
            algo = ""
        else:
            rest.append(arg)
        i += 1
    return algo, rest


if __name__ == "__main__":
    algo, rest = split_algo(sys.argv[1:])
    if algo not in ALGOS:
        print(
            f"usage: python train.py [--algo {{{','.join(ALGOS)}}}] ...\n"
            f"train.py: error: --algo must be one of {', '.join(ALGOS)}, got {algo!r}",
            file=sys.stderr,
        )
        sys.exit(2)
    if algo == "alphazero":
        from umbrella_env.training.alphazero import main
    else:
        from umbrella_env.training.ppo import main
    sys.exit(main(rest))
