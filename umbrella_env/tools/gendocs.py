"""Generate docs/actions.md and docs/observation.md from the constants the code uses.

    python -m umbrella_env.tools.gendocs          # rewrite the files
    python -m umbrella_env.tools.gendocs --check  # exit 1 if they are out of date

A test runs the check, so the docs cannot drift from the code.  The tables themselves are
made by :mod:`umbrella_env.envs.doctables` (the env docstrings use them too).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from umbrella_env.cli_args import HelpFormatter, command, source_tree
from umbrella_env.envs.doctables import actions_markdown, observation_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs"

GENERATED = {"actions.md": actions_markdown, "observation.md": observation_markdown}


@command
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m umbrella_env.tools.gendocs",
        description=__doc__,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--check", action="store_true", help="only check that the files are up to date")
    args = parser.parse_args(argv)
    if source_tree() is None:
        parser.error("the generated pages are docs/ of a clone of the repository; this umbrella_env is installed")
    stale = []
    for name, make in GENERATED.items():
        path = DOCS / name
        text = make()
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print(f"out of date: {', '.join(stale)}; run python -m umbrella_env.tools.gendocs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
