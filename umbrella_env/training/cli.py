"""``train.py`` and ``umbrella-train``: ``--algo ppo`` (default, MaskablePPO,
:mod:`umbrella_env.training.ppo`) or ``--algo alphazero`` (Gumbel AlphaZero,
:mod:`umbrella_env.training.alphazero`); every other option goes to that trainer
(``--algo alphazero --help`` lists its own)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from umbrella_env.cli_args import command, import_command, program_name
from umbrella_env.training.options import TRAIN_COMMAND

ALGOS = ("ppo", "alphazero")


def split_algo(argv: Sequence[str]) -> tuple[str, list[str]]:
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


@command
def main(argv: Sequence[str] | None = None) -> int:
    algo, rest = split_algo(sys.argv[1:] if argv is None else list(argv))
    prog = program_name(*TRAIN_COMMAND)
    if algo not in ALGOS:
        print(
            f"usage: {prog} [--algo {{{','.join(ALGOS)}}}] ...\n"
            f"{prog}: error: --algo must be one of {', '.join(ALGOS)}, got {algo!r}",
            file=sys.stderr,
        )
        return 2
    # only the trainer asked for: --algo alphazero needs torch, not sb3-contrib
    trainer = import_command(f"umbrella_env.training.{algo}", prog)
    if trainer is None:  # its extra is missing: said in one line
        return 2
    # a killed run keeps its checkpoints and says so, as on Ctrl-C (cli_args.command)
    if algo == "alphazero":
        return trainer(rest, prog=f"{prog} --algo alphazero")
    return trainer(rest)


if __name__ == "__main__":
    sys.exit(main())
