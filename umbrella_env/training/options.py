"""Command-line helpers shared by the trainers: which options a command line gives, and
presets (``--quick``) that fill in only the options it leaves out."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any


def given_options(build_parser: Callable[[], argparse.ArgumentParser], argv: Sequence[str]) -> set[str]:
    """The destinations of the options written on the command line ``argv``: a value equal
    to the default still counts as given (``--games 64`` is not "left out")."""
    probe = build_parser()
    for action in probe._actions:  # a default of SUPPRESS leaves an option out of the namespace
        action.default = argparse.SUPPRESS
    return set(vars(probe.parse_args(list(argv))))


def given_among(
    build_parser: Callable[[], argparse.ArgumentParser], argv: Sequence[str], dests: Collection[str]
) -> list[str]:
    """The options of ``dests`` written on the command line ``argv``, as sorted flags
    (``--eval-games``): the options a command refuses because it would ignore them."""
    return sorted(f"--{dest.replace('_', '-')}" for dest in given_options(build_parser, argv) & set(dests))


def apply_preset(args: argparse.Namespace, preset: Mapping[str, Any], given: Collection[str]) -> argparse.Namespace:
    """``args`` with every option of ``preset`` not in ``given`` (:func:`given_options`)
    set to the preset's value: the options given on the command line win."""
    for key, value in preset.items():
        if key not in given:
            setattr(args, key, value)
    return args
