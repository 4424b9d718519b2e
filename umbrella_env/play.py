"""Play Umbrella against agents in the terminal.

    python -m umbrella_env.play [--players 1-4] [--level 1-4] [--opponents SPEC ...]
                                [--seat S] [--seed N] [--max-turns T]

You take one seat (``--seat``, default 0); every other seat is played by an agent built
with :func:`agents.make_agent` from a spec (``random``, ``greedy``, ``heuristic``,
``search`` or a ``.zip`` checkpoint), one spec per other seat (a single spec is used for
all of them).  ``--players 1`` is the solo game (RULES.md §8).  Options left out are asked
for when stdin is a terminal, and take their defaults otherwise.

Before each of your decisions the whole table is drawn (:func:`render.render_text`,
your seat marked ``[you]``) with the phase and who decides.  Type a move by its readable
name (``slide B from top col2``, ``validate slot0 space3``, ``cover slot1``; case,
extra spaces and the words "from", "of", "with" do not matter) or by its action id, or a
command: ``help``, ``legal`` / ``moves``, ``board``, ``hint``, ``quit``.  Bad input is
explained in one line and the game goes on; end of input abandons the game.

:func:`main` takes its arguments and both streams as parameters so tests can drive it.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import secrets
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence, TextIO

import numpy as np

from umbrella_env.core import actions as A
from umbrella_env.core.components import COLOURS
from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig
from umbrella_env.core.engine import draw_key
from umbrella_env.core.render import render_text
from umbrella_env.core.single import SingleGame

DEFAULT_PLAYERS = 2
DEFAULT_LEVEL = 1
HINT_AGENT = "greedy"

#: Solo merit table (RULES.md §8): (lowest score of the band, name).
MERIT_BANDS: tuple[tuple[int, str], ...] = (
    (31, "big respect"),
    (27, "impressive"),
    (24, "well played"),
    (19, "not bad"),
    (15, "a start"),
    (-(10**9), "try again"),
)

COMMANDS: dict[str, str] = {
    "help": "help",
    "h": "help",
    "?": "help",
    "legal": "legal",
    "moves": "legal",
    "l": "legal",
    "board": "board",
    "b": "board",
    "hint": "hint",
    "quit": "quit",
    "exit": "quit",
    "q": "quit",
}
_MOVE_VERBS = ("slide", "fallback", "validate", "swap-stage", "swap-zone", "give", "cover", "pass")

PHASE_PROMPTS: dict[str, str] = {
    "slide": "slide one umbrella into your stage",
    "fallback": "your four zones are empty: fallback slide, taking from any zone",
    "validate": "validate one complete figure (you must, one is scorable)",
    "swap_stage": "level-4 power: swap two adjacent umbrellas of your stage, or pass",
    "swap_zone": "level-4 power: swap a stage umbrella with one of a zone, or pass",
    "give_face": "choose the face of the tile your left neighbour receives",
    "cover": "you receive a tile and every slot is full: choose the slot it covers",
}

HELP_TEXT = """\
Type a move by its name or by its id (the number 'legal' shows in brackets):
  slide <colour> from <side> <line>      slide B from top col2
      top/bottom enter a column (col0-col3), left/right a row (row0-row3)
  fallback <colour> of <zone> from <side> <line>
      only when your four zones are empty; zones: central, side+k, personal+k
      (k counts seats from you: side+0 is your left zone, personal+0 your own)
  validate slot<k> space<s>              validate slot0 space3
  swap-stage r<row>c<col> r<row>c<col>   swap-stage r0c0 r0c1   (or: pass)
  swap-zone r<row>c<col> with <colour> of <side>   (or: pass)
  give white | give black                the face the receiver sees (2 players)
  cover slot<k>                          the slot a tile you receive covers
Colours B G R Y (or blue, green, red, yellow).  Sides are those of your own stage.
Case and extra spaces do not matter; 'from', 'of' and 'with' may be left out.
Commands: legal (or moves) lists the legal moves; board draws the table again;
hint asks the greedy agent; help shows this; quit ends the game."""

_COLOUR_WORDS = {"blue": "b", "green": "g", "red": "r", "yellow": "y"}
_FILLERS = frozenset({"from", "of", "with", "into", "in", "the"})


# --------------------------------------------------------------------------- parsing moves
def _loose_key(text: str) -> tuple[str, ...]:
    """Words of a move name, normalised so that near-spellings of a name compare equal."""
    t = text.strip().lower().replace(",", " ")
    t = re.sub(r"\bswap[\s_-]*(stage|zone)\b", r"swap-\1", t)
    t = re.sub(r"\b(col|row|slot|space)\s+(\d)\b", r"\1\2", t)
    t = re.sub(r"\b(side|personal)\s*\+\s*(\d)\b", r"\1+\2", t)
    return tuple(_COLOUR_WORDS.get(w, w) for w in t.split() if w not in _FILLERS)


_LOOSE_TO_ACTION: dict[tuple[str, ...], int] = {_loose_key(s): a for a, s in enumerate(A.ACTION_STRINGS)}
assert len(_LOOSE_TO_ACTION) == A.NUM_ACTIONS


class InputError(Exception):
    """A typed line that is not a legal move; the message is the one-line explanation."""


def parse_move(text: str, game: SingleGame) -> int:
    """The legal action id a typed line names; :class:`InputError` explains a refusal."""
    phase = A.PHASES[game.phase]
    legal = game.legal_actions()
    words = _loose_key(text)
    if not words:
        raise InputError("empty input; type a move, its id, or 'help'")
    if len(words) == 1 and words[0].lstrip("#").isdigit():
        a = int(words[0].lstrip("#"))
        if not 0 <= a < A.NUM_ACTIONS:
            raise InputError(f"there is no move number {a} (ids are 0-{A.NUM_ACTIONS - 1}); {_suggest(game, legal)}")
    elif words == ("pass",):
        passes = {"swap_stage": A.SWAP_STAGE_PASS, "swap_zone": A.SWAP_ZONE_PASS}
        if phase not in passes:
            raise InputError(f"there is no pass in the {phase} decision; {_suggest(game, legal)}")
        a = passes[phase]
    elif phase == "give_face" and words in (("white",), ("black",)):
        a = A.give_face_action(A.FACES.index(words[0]))
    elif words in _LOOSE_TO_ACTION:
        a = _LOOSE_TO_ACTION[words]
    elif words[0] in _MOVE_VERBS:
        raise InputError(f"unknown move {text.strip()!r}; {_suggest(game, legal, text)}")
    else:
        raise InputError(
            f"I don't understand {text.strip()!r}; type a move such as "
            f"{A.ACTION_STRINGS[legal[0]]!r}, its id, or 'help'"
        )
    if a not in legal:
        name = A.ACTION_STRINGS[a]
        raise InputError(f"{name!r} (id {a}) is not legal now: {_why_illegal(a, game)}; {_suggest(game, legal, name)}")
    return a


def _suggest(game: SingleGame, legal: list[int], text: str | None = None) -> str:
    """'did you mean ...' for the closest legal move name, else a pointer to 'legal'."""
    if text is not None:
        names = {" ".join(_loose_key(A.ACTION_STRINGS[a])): a for a in legal}
        close = difflib.get_close_matches(" ".join(_loose_key(text)), list(names), n=1, cutoff=0.6)
        if close:
            return f"did you mean {A.ACTION_STRINGS[names[close[0]]]!r}? ('legal' lists all {len(legal)})"
    return f"type 'legal' to list the {len(legal)} legal moves"


def _own_zones(d: dict[str, Any], seat: int) -> dict[str, str]:
    """Side of ``seat``'s stage -> umbrellas of the zone on that side."""
    z, p = d["zones"], d["num_players"]
    if p == 1:
        return {"top": z["top"], "bottom": z["personal"], "left": z["left"], "right": z["right"]}
    right = z["side"][(seat - 1) % p]
    return {"top": z["central"], "bottom": z["personal"][seat], "left": z["side"][seat], "right": right}


def _ego_zone(d: dict[str, Any], actor: int, zone: int) -> tuple[str, str | None]:
    """(label, umbrellas or None if absent) of egocentric fallback zone ``zone`` of ``actor``."""
    p = d["num_players"]
    if zone == 0:
        return "the central zone", d["zones"]["central"]
    k = (zone - 1) % 4
    if k >= p:
        return f"zone {A.ZONE_NAMES[zone]}", None
    seat = (actor + k) % p
    if zone <= 4:
        return f"side zone {seat}", d["zones"]["side"][seat]
    owner = "your" if seat == actor else f"seat {seat}'s"
    return f"{owner} personal zone", d["zones"]["personal"][seat]


def _why_illegal(a: int, game: SingleGame) -> str:
    phase = A.PHASES[game.phase]
    move_phase = A.phase_of_action(a)
    if move_phase != phase:
        return f"it is a {move_phase} move and this is the {phase} decision"
    d = game.to_dict()
    kind, f = A.decode(a)
    if kind == A.PHASE_SLIDE:
        side, colour = A.SIDES[f[0]], COLOURS[f[1]]
        return f"your {side} zone has no {colour} (it holds {_own_zones(d, game.actor)[side] or 'nothing'})"
    if kind == A.PHASE_FALLBACK:
        label, held = _ego_zone(d, game.actor, f[0])
        if held is None:
            return f"{label} does not exist with {d['num_players']} players"
        return f"{label} has no {COLOURS[f[1]]} (it holds {held or 'nothing'})"
    if kind == A.PHASE_VALIDATE:
        return f"slot {f[0]} shows no complete figure that space {f[1]} accepts, or the space is taken"
    if kind == A.PHASE_SWAP_STAGE:
        return "those two cells hold the same colour"
    if kind == A.PHASE_SWAP_ZONE:
        side, colour = A.SIDES[f[1]], COLOURS[f[2]]
        return f"your {side} zone has no {colour}, or the cell already holds {colour}"
    return "it is not among the legal choices"


# --------------------------------------------------------------------------- listing moves
def _columns(items: Sequence[str], indent: str = "  ", width: int = 78) -> list[str]:
    if not items:
        return []
    cell = max(map(len, items)) + 2
    per_line = max(1, (width - len(indent)) // cell)
    return [
        indent + "".join(x.ljust(cell) for x in items[i : i + per_line]).rstrip()
        for i in range(0, len(items), per_line)
    ]


def _fallback_lines(game: SingleGame, legal: list[int]) -> list[str]:
    """Fallback ids by zone and colour: each taken umbrella has 16 ids (side x line)."""
    lines = [
        "  (every umbrella can enter from top/bottom col0-3 or left/right row0-3; its 16 ids",
        "   run top col0-3, bottom col0-3, left row0-3, right row0-3)",
    ]
    by_zone: dict[int, list[int]] = {}
    for a in legal:
        zone, colour, _, _ = A.decode(a)[1]
        by_zone.setdefault(zone, []).append(a)
    p = game.config.num_players
    for zone, ids in by_zone.items():
        k = (zone - 1) % 4
        seat = (game.actor + k) % p
        owner = "central" if zone == 0 else f"side {seat}" if zone <= 4 else f"seat {seat}"
        label = f"  {A.ZONE_NAMES[zone]} ({owner})".ljust(23)
        colours = sorted({A.decode(a)[1][1] for a in ids})
        first = [A.fallback_action(zone, c, 0, 0) for c in colours]
        if len(ids) == 16 * len(colours):
            lines.append(label + "  ".join(f"{COLOURS[c]} [{a}-{a + 15}]" for c, a in zip(colours, first)))
        else:  # not produced by the rules (a legal zone colour allows every side and line)
            lines += _columns([f"[{a}] {A.ACTION_STRINGS[a]}" for a in ids])
    return lines


def _swap_zone_table(game: SingleGame, legal: set[int]) -> list[str]:
    """Swap-zone ids as a table: a row per stage cell, a column per (side, colour)."""
    stage = game.to_dict()["stages"][game.actor]
    head1 = " " * 10 + "".join(f"{side:<17}" for side in A.SIDES)
    head2 = " " * 10 + " ".join("".join(f"{c:>4}" for c in COLOURS) for _ in A.SIDES)
    lines = ["  (a row per cell of your stage, with its colour; '.' = not possible)", head1.rstrip(), head2]
    for cell in range(16):
        groups = []
        for side in range(4):
            ids = [A.swap_zone_action(cell, side, colour) for colour in range(4)]
            groups.append("".join(f"{a:>4}" if a in legal else "   ." for a in ids))
        lines.append(f"  r{cell // 4}c{cell % 4} {stage[cell // 4][cell % 4]}  " + " ".join(groups))
    lines.append(f"  [{A.SWAP_ZONE_PASS}] swap-zone pass")
    return lines


def format_legal(game: SingleGame) -> str:
    """The legal moves of the current decision, grouped compactly, each with its id."""
    legal = game.legal_actions()
    if not legal:
        return "no legal moves: the game is over"
    phase = A.PHASES[game.phase]
    first = legal[0]
    lines = [
        f"{len(legal)} legal move(s) in the {phase} decision, each with its id;",
        f"type a name such as '{A.ACTION_STRINGS[first]}', or an id such as {first}:",
    ]
    if phase == "slide":
        groups: dict[tuple[int, int], list[int]] = {}
        for a in legal:
            side, colour, _ = A.decode(a)[1]
            groups.setdefault((side, colour), []).append(a)
        for (side, colour), ids in groups.items():
            moves = "  ".join(f"[{a}] {A.ACTION_STRINGS[a].rsplit(' ', 1)[1]}" for a in ids)
            lines.append(f"  slide {COLOURS[colour]} from {A.SIDES[side]:<6}  {moves}")
    elif phase == "fallback":
        lines += _fallback_lines(game, legal)
    elif phase == "swap_zone":
        lines += _swap_zone_table(game, set(legal))
    else:
        lines += _columns([f"[{a}] {A.ACTION_STRINGS[a]}" for a in legal])
    return "\n".join(lines)


# --------------------------------------------------------------------------- agents
class AgentError(Exception):
    """An agent spec that cannot be built."""


def _registry() -> Callable[..., Any] | None:
    """``agents.make_agent``, or None when the agents package does not provide it."""
    try:
        from agents import make_agent  # type: ignore[attr-defined]
    except ImportError:
        try:  # while agents/__init__ does not export it yet
            from agents.registry import make_agent
        except ImportError:
            return None
    return make_agent  # type: ignore[no-any-return]


def build_agent(spec: str, seed: int | None) -> Any:
    """An agent from a spec, through ``agents.make_agent`` (``random`` works without it)."""
    make_agent = _registry()
    if make_agent is None:
        if spec == "random":
            from agents.base import RandomAgent

            return RandomAgent(seed=seed)
        raise AgentError(f"cannot build agent {spec!r}: agents.make_agent is not available (only 'random' is)")
    try:
        return make_agent(spec, seed=seed)
    except Exception as e:  # any refusal of a spec is reported, never a traceback
        message = str(e) if repr(spec) in str(e) else f"agent {spec!r}: {e}"
        raise AgentError(f"cannot build an agent: {message}") from None


def default_opponent() -> str:
    """'greedy' when make_agent provides it, else 'random'."""
    try:
        build_agent(HINT_AGENT, seed=0)
    except AgentError:
        return "random"
    return HINT_AGENT


def _display_name(spec: str) -> str:
    return os.path.basename(spec) if spec.endswith(".zip") else spec


def agent_move(agent: Any, game: SingleGame) -> int:
    """The agent's action for the deciding seat (it may read a clone of the game)."""
    view = game.clone() if getattr(agent, "needs_game", True) else None
    return int(agent.act(game.observe(game.actor), game.legal_mask(), view))


# --------------------------------------------------------------------------- the session
@dataclass
class Settings:
    players: int
    level: int
    opponents: list[str]  # one spec per seat other than yours, in seat order
    seat: int
    seed: int
    max_turns: int


class Console:
    """Lines out, lines in; typed lines are echoed when input is not a terminal."""

    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.tty = _isatty(stdin)

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")

    def ask(self, prompt: str) -> str | None:
        """One line of input (without its newline), or None at end of input."""
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            self.stdout.write("\n")
            return None
        if not self.tty:
            self.stdout.write(line if line.endswith("\n") else line + "\n")
        return line.rstrip("\r\n")


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class Session:
    """One game between you and the agents, driven line by line through a Console."""

    def __init__(self, settings: Settings, console: Console) -> None:
        self.s = settings
        self.io = console
        rng = np.random.default_rng(settings.seed)
        config = GameConfig(num_players=settings.players, plate_level=settings.level, max_turns=settings.max_turns)
        self.game = SingleGame.new(config, draw_key(rng))
        self.agents: dict[int, Any] = {}
        self.names: dict[int, str] = {settings.seat: "you"}
        others = [p for p in range(settings.players) if p != settings.seat]
        for p, spec in zip(others, settings.opponents):
            agent_seed = int(rng.integers(2**62))
            agent = build_agent(spec, seed=agent_seed)
            if hasattr(agent, "reset"):
                agent.reset(agent_seed)
            self.agents[p] = agent
            self.names[p] = _display_name(spec)
        self.hint_seed = int(rng.integers(2**62))
        self.hinter: Any = None

    # ------------------------------------------------------------------ naming
    def who(self, seat: int) -> str:
        return "you" if self.s.players == 1 and seat == self.s.seat else f"seat {seat} ({self.names[seat]})"

    # ------------------------------------------------------------------ loop
    def run(self) -> int:
        g = self.game
        self.io.say(self.intro())
        while not g.done:
            if g.actor == self.s.seat:
                if not self.human_decision():
                    return 0
            else:
                self.agent_decision()
        self.io.say(self.final_report())
        return 0

    def intro(self) -> str:
        s = self.s
        if s.players == 1:
            who = "Solo game"
        else:
            opp = ", ".join(f"seat {p}: {self.names[p]}" for p in sorted(self.agents))
            who = f"{s.players} players, you are seat {s.seat} ({opp})"
        return (
            f"Umbrella: {who}, plate level {s.level}.\n"
            f"Seed {s.seed} (replay with --seed {s.seed}), turn limit {s.max_turns}. "
            "Type 'help' for how to type moves, 'quit' to stop."
        )

    def status(self) -> str:
        g = self.game
        phase = A.PHASES[g.phase]
        what = PHASE_PROMPTS[phase]
        if phase == "give_face":
            what = f"choose the face of the tile seat {(g.current + 1) % self.s.players} receives"
        if phase == "cover":
            what = f"seat {g.current} passes you a tile and every slot is full: choose the slot it covers"
        n = len(g.legal_actions())
        seat = "" if self.s.players == 1 else f" (seat {g.actor})"
        return (
            f"--- turn {g.turn + 1}, your decision{seat}, phase {phase}: {what}.\n"
            f"    {n} legal move(s); 'legal' lists them, 'help' explains."
        )

    def board(self) -> str:
        return render_text(self.game.to_dict(), seat=self.s.seat).rstrip("\n")

    def human_decision(self) -> bool:
        """Read lines until a legal move is played (True) or the player leaves (False)."""
        g = self.game
        self.io.say()
        self.io.say(self.board())
        self.io.say(self.status())
        prompt = f"[turn {g.turn + 1}, {A.PHASES[g.phase]}] your move> "
        while True:
            line = self.io.ask(prompt)
            if line is None:
                self.io.say(f"End of input: the game is abandoned at turn {g.turn + 1}. {self.scores_line()}")
                return False
            text = line.strip()
            if not text:
                continue
            command = COMMANDS.get(text.lower())
            if command == "quit":
                self.io.say(f"You quit at turn {g.turn + 1}. {self.scores_line()}")
                return False
            if command == "help":
                self.io.say(HELP_TEXT)
            elif command == "legal":
                self.io.say(format_legal(g))
            elif command == "board":
                self.io.say(self.board())
                self.io.say(self.status())
            elif command == "hint":
                self.io.say(self.hint())
            else:
                try:
                    a = parse_move(text, g)
                except InputError as e:
                    self.io.say(f"  {e}")
                    continue
                self.io.say(f"{self.who(g.actor)}: {A.ACTION_STRINGS[a]}")
                g.step(a)
                return True

    def agent_decision(self) -> None:
        g = self.game
        seat = g.actor
        legal = g.legal_actions()
        try:
            a = agent_move(self.agents[seat], g)
            problem = None if a in legal else f"chose {a}, which is not legal"
        except Exception as e:  # a broken agent must not end the player's game with a traceback
            a, problem = -1, f"failed ({type(e).__name__}: {e})"
        if problem is not None:
            a = legal[0]
            self.io.say(f"{self.who(seat)} {problem}; playing {A.ACTION_STRINGS[a]!r} instead")
        self.io.say(f"{self.who(seat)}: {A.ACTION_STRINGS[a]}")
        g.step(a)

    def hint(self) -> str:
        if self.hinter is None:
            try:
                self.hinter = build_agent(HINT_AGENT, seed=self.hint_seed)
            except AgentError as e:
                return f"  no hint available: {e}"
        try:
            a = agent_move(self.hinter, self.game)
        except Exception as e:  # same policy as for opponents
            return f"  no hint available: the {HINT_AGENT} agent failed ({type(e).__name__}: {e})"
        return f"  hint ({HINT_AGENT}): {A.ACTION_STRINGS[a]} (id {a})"

    # ------------------------------------------------------------------ the end
    def scores_line(self) -> str:
        scores = self.game.scores()
        if self.s.players == 1:
            return f"Score so far: {scores[0]}."
        return "Scores so far: " + ", ".join(f"{self.who(p)} {v}" for p, v in enumerate(scores)) + "."

    def final_report(self) -> str:
        g = self.game
        d = g.to_dict()
        how = (
            f"ended by the rules after {g.turn} turn(s)"
            if g.terminated
            else f"stopped at the turn limit ({self.s.max_turns} turns): truncated, not a normal end"
        )
        out = ["", self.board(), "", f"=== Game over: {how} ==="]
        scores, ranks = g.scores(), g.ranks()
        if self.s.players == 1:
            tokens = sum(t is not None for t in d["plates"][0])
            band, span = merit_band(scores[0])
            out.append(f"Final score: {scores[0]} ({tokens} token(s) placed) -- merit: {band} ({span}).")
            return "\n".join(out)
        width = max(len(self.who(p)) for p in range(self.s.players))
        for p in sorted(range(self.s.players), key=lambda q: (ranks[q], q)):
            personal = len(d["zones"]["personal"][p])
            out.append(
                f"  {ranks[p] + 1}. {self.who(p):<{width}}  {scores[p]:>3} points  "
                f"(personal zone: {personal} umbrella(s))"
            )
        winners = [p for p in range(self.s.players) if ranks[p] == 0]
        if g.truncated:
            lead = " and ".join(self.who(p) for p in winners)
            out.append(f"No winner by the rules (the game was cut short); ahead on points: {lead}.")
        elif len(winners) == 1:
            w = winners[0]
            out.append("You win!" if w == self.s.seat else f"Winner: {self.who(w)}.")
        else:
            out.append("Shared victory: " + ", ".join(self.who(p) for p in winners) + ".")
        return "\n".join(out)


def merit_band(score: int) -> tuple[str, str]:
    """(name, score range) of a solo score's merit band (RULES.md §8)."""
    spans = {"try again": "under 15", "big respect": "31 or more"}
    for i, (low, name) in enumerate(MERIT_BANDS):
        if score >= low:
            high = MERIT_BANDS[i - 1][0] - 1 if i else None
            return name, spans.get(name, f"{low}-{high}")
    raise AssertionError("unreachable: the last band has no lower bound")


# --------------------------------------------------------------------------- command line
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
        prog="python -m umbrella_env.play",
        description="Play Umbrella against agents in the terminal.",
        epilog="Options left out are asked for when stdin is a terminal.",
    )
    p.add_argument("--players", type=int, choices=range(1, 5), help="1 = solo, 2-4 players (default 2)")
    p.add_argument("--level", type=int, choices=range(1, 5), help="score-plate level 1-4 (default 1)")
    p.add_argument(
        "--opponents",
        nargs="+",
        metavar="SPEC",
        help="one agent per other seat, in seat order (one spec = all of them): random, greedy, "
        "heuristic, search or a .zip checkpoint (default greedy if available, else random)",
    )
    p.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    p.add_argument("--seed", type=int, help="seed of the deal and the agents (default: a random one, printed)")
    p.add_argument(
        "--max-turns", type=int, default=DEFAULT_MAX_TURNS, help=f"turn limit (default {DEFAULT_MAX_TURNS})"
    )
    return p


def _ask_choice(io: Console, prompt: str, default: int, allowed: range = range(1, 5)) -> int | None:
    while True:
        line = io.ask(f"{prompt} [{default}]: ")
        if line is None:
            return None
        text = line.strip()
        if not text:
            return default
        if text.isdigit() and int(text) in allowed:
            return int(text)
        io.say(f"  please type a number from {allowed.start} to {allowed.stop - 1}, or press Enter for {default}")


def _ask_opponent(io: Console, seat: int, default: str) -> str | None:
    while True:
        line = io.ask(f"Opponent for seat {seat} (random, greedy, heuristic, search or a .zip file) [{default}]: ")
        if line is None:
            return None
        spec = line.strip() or default
        try:
            build_agent(spec, seed=0)
        except AgentError as e:
            io.say(f"  {e}")
            continue
        return spec


def settle(args: argparse.Namespace, io: Console) -> Settings | None:
    """Complete the options (asking on a terminal); None if input ended while asking.

    Raises :class:`AgentError` or ValueError for inconsistent options."""
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
    if args.max_turns < 1:
        raise ValueError(f"--max-turns must be positive, got {args.max_turns}")
    others = [p for p in range(players) if p != args.seat]
    if opponents is None:
        default = default_opponent() if others else "random"
        opponents = []
        for p in others:
            spec = _ask_opponent(io, p, default) if interactive else default
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
    return Settings(players, level, list(opponents), args.seat, seed, args.max_turns)


def main(argv: Sequence[str] | None = None, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int:
    """Run the command; returns the exit status (0 also after 'quit' or end of input)."""
    try:
        args = build_parser(stdout).parse_args(argv)
    except _Exit as e:
        return e.status
    io = Console(stdin, stdout)
    try:
        try:
            settings = settle(args, io)
            if settings is None:
                io.say("No game started.")
                return 0
            session = Session(settings, io)
        except (AgentError, ValueError) as e:
            io.say(f"error: {e}")
            return 2
        return session.run()
    except KeyboardInterrupt:
        io.say("\nInterrupted: the game is abandoned.")
        return 130
    finally:
        stdout.flush()

if __name__ == "__main__":
    sys.exit(main())
