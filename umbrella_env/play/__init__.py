"""Play Umbrella against agents in the terminal.

    python -m umbrella_env.play [--players 1-4] [--level 1-4] [--opponents SPEC ...]
                                [--seat S] [--seed N] [--max-turns T]
                                [--board {all,mine}] [--layout {grid,lines}]

You take one seat (``--seat``, default 0); every other seat is played by an agent built
from a spec by :func:`umbrella_env.match.build_agent` (any agent ``evaluate.py`` takes, e.g.
``heuristic``, ``az-2p`` or a checkpoint; ``--help`` lists them all), one spec per other
seat (a single spec is used for all of them).
``--players 1`` is the solo game (docs/rules.md §8).  ``--players``, ``--level`` and
``--opponents``, left out, are asked for when stdin is a terminal (``quit`` at a question
leaves); every option left out takes its default otherwise.

Before each of your decisions the whole table is drawn (:func:`render.render_text`,
your seat marked ``[you]``) with the phase and who decides; ``--board mine`` draws only
your seat and the table, and ``--layout lines`` says the board one fact per line, in
reading order (for a screen reader).  Type a move by its readable
name (``slide B from top col2``, ``validate slot0 space3``, ``cover slot1``; case,
extra spaces and the words "from", "of", "with" do not matter) or by its action id, or a
command: ``help``, ``legal`` / ``moves``, ``board``, ``hint``, ``undo``, ``quit``.  Bad input is
explained in one line and the game goes on (also a line that is not text, or a move id
no action has); end of input, or a closed or unreadable input, abandons the game.  Output
that cannot be written (closed, a full disk) ends the command with exit status 1 and one
line on stderr.

"""

from umbrella_env.play.cli import build_parser, main, settle
from umbrella_env.play.moves import InputError, format_legal, parse_move
from umbrella_env.play.session import Console, Session, Settings, default_opponent, merit_band

__all__ = [
    "Console",
    "InputError",
    "Session",
    "Settings",
    "build_parser",
    "default_opponent",
    "format_legal",
    "main",
    "merit_band",
    "parse_move",
    "settle",
]
