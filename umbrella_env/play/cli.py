"""The ``python -m umbrella_env.play`` / ``umbrella-play`` command: options (asked for on
a terminal when left out), then one :class:`~umbrella_env.play.session.Session`.

:func:`main` takes its arguments and both streams as parameters so tests can drive it.
"""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from agents import AGENT_NAMES
from agents.registry import AZ_NAMES
from umbrella_env.cli_args import command, game_options_problem, program_name, seed_option, silence
from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig
from umbrella_env.core.render import LAYOUTS
from umbrella_env.match import SPECS_HELP, AgentError, AgentSpecError, build_agent
from umbrella_env.play.session import Console, OutputError, Session, Settings, default_opponent

DEFAULT_PLAYERS = 2
DEFAULT_LEVEL = 1


class _Exit(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that writes to the given stream and raises instead of exiting."""

    def __init__(self, out: TextIO, **kwargs: Any) -> None:
        self._out = out
        super().__init__(**kwargs)

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:
            self._out.write(message)

    def exit(self, status: int = 0, message: str | None = None) -> None:  # type: ignore[override]
        if message:
            self._out.write(message)
        raise _Exit(status)


def build_parser(out: TextIO) -> _Parser:
    p = _Parser(
        out,
        prog=program_name("python -m umbrella_env.play", ("umbrella-play",)),
        description="Play Umbrella against agents in the terminal.",
        epilog="--players, --level and --opponents, left out, are asked for when stdin is a terminal "
        "(the others take their defaults).",
    )
    p.add_argument("--players", type=int, choices=range(1, 5), help="1 = solo, 2-4 players (default 2)")
    p.add_argument("--level", type=int, choices=range(1, 5), help="score-plate level 1-4 (default 1)")
    p.add_argument(
        "--opponents",
        nargs="+",
        metavar="SPEC",
        help=f"one agent per other seat, in seat order (one spec = all of them): {SPECS_HELP} "
        "(checkpoints of this configuration; default greedy)",
    )
    p.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    p.add_argument(
        "--seed", type=seed_option(), help="seed of the deal and the agents (default: a random one, printed)"
    )
    p.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS, help=f"turn limit (default {DEFAULT_MAX_TURNS})")
    p.add_argument(
        "--board",
        choices=("all", "mine"),
        default="all",
        help="before each of your decisions draw every seat's board (all, default) or only yours and the "
        "table (mine: shorter at 3-4 players, and for a screen reader); 'board all' draws every seat's",
    )
    p.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="grid",
        help="draw the board as a picture in text (grid, default) or one fact per line, in reading order, "
        "without columns (lines: for a screen reader)",
    )
    return p


#: Words that leave an option prompt as the end of input does ("No game started.").
_QUIT_WORDS = frozenset({"quit", "exit", "q"})


def _ask_choice(io: Console, prompt: str, default: int, allowed: range = range(1, 5)) -> int | None:
    while True:
        line = io.ask(f"{prompt} [{default}]: ")
        if line is None:
            return None
        text = line.strip()
        if not text:
            return default
        if text.lower() in _QUIT_WORDS:
            return None
        if text.isdecimal() and int(text) in allowed:
            return int(text)
        io.say(f"  please type a number from {allowed.start} to {allowed.stop - 1}, or press Enter for {default}")


def playable_names(config: GameConfig) -> list[str]:
    """The built-in agents that can play ``config`` here: the shipped networks each play one
    configuration (and need torch), so the others are not offered."""
    names = list(AGENT_NAMES)
    for name in AZ_NAMES:
        try:
            build_agent(name, config, seed=0)
        except (AgentSpecError, ValueError, ImportError):
            continue
        names.append(name)
    return names


def _ask_opponent(io: Console, seat: int, default: str, config: GameConfig) -> str | None:
    names = ", ".join(playable_names(config))
    while True:
        line = io.ask(f"Opponent for seat {seat} ({names} or a .zip/.pt/.onnx checkpoint) [{default}]: ")
        if line is None:
            return None
        if line.strip().lower() in _QUIT_WORDS:
            return None
        spec = line.strip() or default
        try:
            build_agent(spec, config, seed=0)
        except AgentSpecError as e:
            io.say(f"  cannot build an agent: {e}")
            continue
        return spec


def settle(args: argparse.Namespace, io: Console) -> Settings | None:
    """Complete the options (asking on a terminal); None if input ended while asking.

    Raises ValueError (an :class:`AgentSpecError` for a bad opponent) for inconsistent options."""
    interactive = io.tty
    players, level, opponents = args.players, args.level, args.opponents
    if players is None:
        players = _ask_choice(io, "Players (1 = solo, 2-4)", DEFAULT_PLAYERS) if interactive else DEFAULT_PLAYERS
        if players is None:
            return None
    if level is None:
        level = _ask_choice(io, "Plate level (1-4)", DEFAULT_LEVEL) if interactive else DEFAULT_LEVEL
        if level is None:
            return None
    if not 0 <= args.seat < players:
        raise ValueError(f"--seat must be a seat of the game, 0-{players - 1}; got {args.seat}")
    problem = game_options_problem(players, level, args.max_turns)
    if problem is not None:
        raise ValueError(problem)
    config = GameConfig(num_players=players, plate_level=level, max_turns=args.max_turns)
    others = [p for p in range(players) if p != args.seat]
    if opponents is None:
        default = default_opponent() if others else "random"
        opponents = []
        for p in others:
            spec = _ask_opponent(io, p, default, config) if interactive else default
            if spec is None:
                return None
            opponents.append(spec)
    elif not others:
        raise ValueError("--opponents: the solo game has no opponents")
    elif len(opponents) == 1:
        opponents = opponents * len(others)
    elif len(opponents) != len(others):
        raise ValueError(
            f"--opponents: expected one spec for each of the {len(others)} other seat(s) {others} "
            f"(or one spec for all), got {len(opponents)}"
        )
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    return Settings(players, level, list(opponents), args.seat, seed, args.max_turns, args.board, args.layout)


@command
def main(
    argv: Sequence[str] | None = None, stdin: TextIO | None = sys.stdin, stdout: TextIO | None = sys.stdout
) -> int:
    """Run the command; returns the exit status (0 also after 'quit' or end of input, 1 when
    the output cannot be written or the game stops on an error, 2 for bad options)."""
    io = Console(stdin, stdout)
    try:
        status = _run(argv, io)
        io.flush()
    except OutputError as e:
        return _output_failed(stdout, e)
    return status


def _run(argv: Sequence[str] | None, io: Console) -> int:
    if io.stdout is None:
        raise OutputError(None)
    try:
        args = build_parser(io.stdout).parse_args(argv)
    except _Exit as e:
        return e.status
    except OSError as e:  # --help or a usage message into a full or closed output
        raise OutputError(e) from e
    session: Session | None = None
    try:
        try:
            settings = settle(args, io)
            if settings is None:
                io.say("No game started.")
                return 0
            session = Session(settings, io)
        except AgentSpecError as e:
            io.say(f"error: cannot build an agent: {e}")
            return 2
        except ValueError as e:
            io.say(f"error: {e}")
            return 2
        return session.run()
    except KeyboardInterrupt:
        scores = "" if session is None else f" {session.scores_line()}"
        io.say(f"\nInterrupted: the game is abandoned.{scores}")
        return 130
    except AgentError as e:  # an opponent whose reset fails before the game (its moves are forgiven)
        io.say(f"error: the game stopped: {e}")
        return 1


def _output_failed(stdout: TextIO | None, error: OutputError) -> int:
    """Exit status 1 when the output cannot be written, without a traceback: a line on
    stderr (none when the reader of a pipe went away, as for ``| head``), and no complaint
    from Python when it flushes stdout at exit."""
    if not isinstance(error.cause, BrokenPipeError):
        try:
            if sys.stderr is not None:
                sys.stderr.write(f"umbrella-play: error: cannot write the output: {error}\n")
        except (OSError, ValueError):
            pass
    if stdout is not None and stdout is sys.stdout:
        try:
            silence(sys.stdout)
        except OSError:
            pass
    return 1


if __name__ == "__main__":
    sys.exit(main())
