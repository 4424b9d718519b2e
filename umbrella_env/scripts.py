"""Console-script entry points of the commands whose own module needs an optional extra:
when it is missing the module cannot even be imported, so the installed command starts
here and says so in one line (``umbrella-export``; ``umbrella-train`` dispatches the same
way in :mod:`umbrella_env.training.cli`).  This module sits with the commands, on top."""

from __future__ import annotations

from collections.abc import Sequence

from umbrella_env.cli_args import import_command


def export(argv: Sequence[str] | None = None) -> int:
    """``umbrella-export``: :mod:`umbrella_env.export`'s command, or one line and exit status
    2 when the train extra it needs is missing."""
    main = import_command("umbrella_env.export", "umbrella-export")
    return 2 if main is None else main(None if argv is None else list(argv))
