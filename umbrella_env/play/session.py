"""One game between you and the agents in the terminal: :class:`Session` draws the table
before each of your decisions, reads your moves through a :class:`Console` and plays the
game with the shared match runner (:func:`umbrella_env.match.play_out`): you are one of
its agents, the others are built from their specs by :func:`umbrella_env.match.build_agent`.
"""

from __future__ import annotations

import codecs
import os
import sys
from dataclasses import dataclass
from typing import Any, TextIO

import numpy as np

from umbrella_env.cli_args import is_terminal, notebook_kernel
from umbrella_env.core import actions as A
from umbrella_env.core import facts as F
from umbrella_env.core.config import GameConfig
from umbrella_env.core.engine import draw_key
from umbrella_env.core.facts import MERIT_BANDS
from umbrella_env.core.facts import merit_band as _band
from umbrella_env.core.render import render_text
from umbrella_env.core.single import SingleGame
from umbrella_env.match import (
    AgentError,
    AgentSpecError,
    StopMatch,
    agent_action,
    band_label,
    build_agent,
    play_out,
    reset_agent,
    turn_label,
)
from umbrella_env.play.moves import InputError, format_legal, parse_move

#: The agent 'hint' asks: the strongest of the instant ones (the README's results).
HINT_AGENT = "heuristic"
#: The opponent when none is given: a fair first game.
DEFAULT_OPPONENT = "greedy"

COMMANDS: dict[str, str] = {
    "help": "help",
    "h": "help",
    "?": "help",
    "legal": "legal",
    "moves": "legal",
    "l": "legal",
    "board": "board",
    "b": "board",
    "board all": "board all",
    "b all": "board all",
    "hint": "hint",
    "undo": "undo",
    "quit": "quit",
    "exit": "quit",
    "q": "quit",
}
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
      (k counts seats from you: side+0 is your left zone, personal+0 your own),
      or as the board names them: side N, personal N (seat N's)
  validate slot<k> space<s>              validate slot0 space3
  swap-stage r<row>c<col> r<row>c<col>   swap-stage r0c0 r0c1   (either order; or: pass)
  swap-zone r<row>c<col> with <colour> of <side>   (or: pass)
  give white | give black                the face the receiver sees (2 players)
  cover slot<k>                          the slot a tile you receive covers
Colours B G R Y (or blue, green, red, yellow).  Sides are those of your own stage.
Case and extra spaces do not matter; 'from', 'of' and 'with' may be left out.
Commands: legal (or moves) lists the legal moves; board draws the table again
(board all: every seat's, with --board mine); hint asks the heuristic agent; undo
takes back your last move (and the others' moves after it: they play again and may
answer differently, so such a game no longer replays from its seed), unless it uncovered
a hidden tile, which you have seen then; help shows this; quit ends the game.
With one legal move, Enter plays it."""


def default_opponent() -> str:
    """The opponent when none is given: the greedy agent."""
    return DEFAULT_OPPONENT


def _display_name(spec: str) -> str:
    return os.path.basename(spec) if spec.lower().endswith((".zip", ".onnx")) else spec


class _Leave(StopMatch):
    """The player quit or input ended: the game is abandoned."""


@dataclass
class _Decision:
    """The game at one of your decisions, and the others' moves shown above it."""

    game: SingleGame
    moves: list[str]


class _Undo(StopMatch):
    """The player took back a move: the game goes back to their previous decision."""

    def __init__(self, decision: _Decision) -> None:
        super().__init__("undo")
        self.decision = decision


class _Human:
    """The player's seat as an agent of the match runner: asks the console for a move."""

    needs_game = False
    name = "you"

    def __init__(self, session: Session) -> None:
        self.session = session

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: Any = None) -> int:
        action = self.session.human_decision()
        if action is None:
            raise _Leave
        return action


class _Forgiving:
    """An opponent whose failure must not end the player's game: a broken or illegal answer
    is reported and replaced by the first legal move."""

    needs_game = True  # the runner's clone is handed on to the agent when it wants one

    def __init__(self, agent: Any, session: Session, seat: int) -> None:
        self.agent, self.session, self.seat = agent, session, seat
        self.name = session.names.get(seat, getattr(agent, "name", type(agent).__name__))  # the runner's errors

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: Any = None) -> int:
        legal = np.flatnonzero(action_mask)
        view = game if getattr(self.agent, "needs_game", True) else None
        try:
            a = self.agent.act(observation, action_mask, view)
            integer = isinstance(a, (int, np.integer)) and not isinstance(a, bool)
            problem = (
                f"returned {a!r} ({type(a).__name__}): an action is an int id in [0, {A.NUM_ACTIONS})"
                if not integer
                else None
                if a in legal
                else f"chose {a}, which is not legal"
            )
        except (Exception, SystemExit) as e:  # a broken agent must not end the player's game
            problem = f"failed ({type(e).__name__}: {e})"
        if problem is not None:
            a = int(legal[0])
            self.session.io.say(f"{self.session.who(self.seat)} {problem}; playing {A.ACTION_STRINGS[a]!r} instead")
        return int(a)


@dataclass
class Settings:
    players: int
    level: int
    opponents: list[str]  # one spec per seat other than yours, in seat order
    seat: int
    seed: int
    max_turns: int
    #: "all" draws every seat's block before each of your decisions, "mine" only yours
    #: (and the table); the command "board all" draws every seat's
    board: str = "all"
    #: how the board is drawn: "grid" or "lines" (render_text's layouts)
    layout: str = "grid"


class OutputError(StopMatch):
    """The output cannot be written (closed, full, or its reader went away): the game stops."""

    def __init__(self, cause: BaseException | None) -> None:
        super().__init__("the output is closed" if cause is None else str(cause))
        self.cause = cause


def _line_editing() -> bool:
    """Whether ``input()`` edits lines (arrow keys, history): Python's ``readline`` module,
    which Windows' Python lacks (its console edits lines itself)."""
    try:
        import readline  # noqa: F401  # imported for its effect on input()
    except ImportError:
        return False
    return True


class Console:
    """Lines out, lines in; typed lines are echoed when input is not a terminal.

    Input that ends, is closed (Python's ``sys.stdin`` is None then) or cannot be read
    is the end of input; a line that is not text in the input's encoding is refused and
    asked again.  Output that cannot be written raises :class:`OutputError`.  On a
    terminal (the process's own stdin and stdout) lines are read by ``input()`` with
    ``readline``: the arrow keys move in the line and recall earlier ones, where they typed
    escape codes into it.  In a notebook (an IPython kernel, reading the process's
    ``sys.stdin``) lines are read by ``input()`` too, which asks the notebook for them: the
    process's stdin has none, and the game ended at once as at the end of input.
    """

    def __init__(self, stdin: TextIO | None, stdout: TextIO | None) -> None:
        self.stdin = stdin
        self.stdout = stdout
        notebook = stdin is sys.stdin and notebook_kernel()
        self.tty = is_terminal(stdin) or notebook  # the notebook shows what was typed: no echo
        self.editing = notebook or (
            self.tty and stdin is sys.stdin and stdout is sys.stdout and is_terminal(stdout) and _line_editing()
        )

    def say(self, text: str = "") -> None:
        self._write(text + "\n")

    def flush(self) -> None:
        self._write("", flush=True)

    def _write(self, text: str, flush: bool = False) -> None:
        if self.stdout is None:  # Python's sys.stdout when the process started with it closed
            raise OutputError(None)
        try:
            if text:
                self.stdout.write(text)
            if flush:
                self.stdout.flush()
        except (OSError, ValueError) as exc:  # full, gone (BrokenPipeError), closed, or unencodable
            raise OutputError(exc) from exc

    def ask(self, prompt: str) -> str | None:
        """One line of input (without its newline), or None at end of input."""
        while True:
            if not self.editing:  # input() writes the prompt itself
                self._write(prompt, flush=True)
            try:
                line = self._edited_line(prompt) if self.editing else self._readline()
            except _Unreadable as exc:
                if not self.tty:
                    self.say(exc.shown)
                self.say(f"  could not read that line (not {exc.encoding}); type it again")
                continue
            except (OSError, ValueError) as exc:  # e.g. a terminal hung up, a closed stream
                self.say()
                self.say(f"  could not read the input ({exc}): taking it as ended")
                return None
            if not line:
                self._write("\n")
                return None
            if not self.tty:
                self._write(line if line.endswith("\n") else line + "\n")
            return line.rstrip("\r\n")

    def _edited_line(self, prompt: str) -> str:
        """A line typed on the terminal, edited with ``readline`` (with its newline; '' at
        the end of input)."""
        try:
            return input(prompt) + "\n"
        except (EOFError, NotImplementedError):  # a notebook run without a frontend (nbconvert,
            return ""  # papermill): IPython's StdinNotImplementedError, the end of input
        except UnicodeDecodeError:
            raise _Unreadable("", codecs.lookup(getattr(sys.stdin, "encoding", None) or "utf-8").name.upper()) from None

    def _readline(self) -> str:
        """The next line, with its newline ('' at end of input); :class:`_Unreadable` for a
        line that is not text.  A binary stream under the text one is read line by line and
        decoded here, so that a bad line is skipped whole and the lines after it still read."""
        if self.stdin is None:  # Python's sys.stdin when the process started with it closed
            return ""
        encoding = getattr(self.stdin, "encoding", None) or "utf-8"
        name = codecs.lookup(encoding).name.upper()
        raw = getattr(self.stdin, "buffer", None)
        if raw is None:
            try:
                return self.stdin.readline()
            except UnicodeDecodeError:
                raise _Unreadable("", name) from None
        line = raw.readline()
        try:
            return line.decode(encoding)
        except UnicodeDecodeError:
            raise _Unreadable(line.decode(encoding, "backslashreplace").rstrip("\r\n"), name) from None


class _Unreadable(Exception):
    """A line of input that is not text in the input's encoding."""

    def __init__(self, shown: str, encoding: str) -> None:
        super().__init__(shown)
        self.shown, self.encoding = shown, encoding


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
            agent = build_agent(spec, config, seed=agent_seed)
            reset_agent(agent, agent_seed, f"agent {spec!r}")  # build_agent checked it has reset()
            self.agents[p] = agent
            self.names[p] = _display_name(spec)
        self.hint_seed = int(rng.integers(2**62))
        self.hinter: Any = None
        #: the others' moves since your last decision (:meth:`announce`)
        self.pending: list[str] = []
        #: each of your decisions so far, the current one last ('undo')
        self.decisions: list[_Decision] = []

    # ------------------------------------------------------------------ naming
    def who(self, seat: int) -> str:
        return "you" if self.s.players == 1 and seat == self.s.seat else f"seat {seat} ({self.names[seat]})"

    # ------------------------------------------------------------------ loop
    def run(self) -> int:
        self.io.say(self.intro())
        seats = [
            _Human(self) if p == self.s.seat else _Forgiving(self.agents[p], self, p) for p in range(self.s.players)
        ]
        while True:
            try:
                play_out(seats, self.game, on_move=self.announce)
                break
            except _Leave:
                return 0
            except _Undo as back:  # play on from the restored decision, its moves shown again
                self.game, self.pending = back.decision.game, list(back.decision.moves)
        self.flush_moves("The last moves:")
        self.io.say(self.final_report())
        return 0

    def agent_decision(self) -> None:
        """Play one decision of the agent whose turn it is (as :meth:`run` does)."""
        g = self.game
        seat = g.actor
        action = agent_action(_Forgiving(self.agents[seat], self, seat), g)
        self.announce(g, seat, action)
        g.step(action)

    def announce(self, game: SingleGame, seat: int, action: int) -> None:
        """Your own move at once; the others' are kept for the block under the board at your
        next decision (printed as they came, they scrolled away above the board)."""
        line = f"{self.who(seat)}: {A.ACTION_STRINGS[action]}"
        if seat == self.s.seat:
            self.io.say(line)
        else:
            self.pending.append(line + self._zone_of(seat, action))

    def _zone_of(self, seat: int, action: int) -> str:
        """The zone a slide or a fallback took its umbrella from, as the board names it: the
        move names it from the mover (a side of its stage, ``side+k``, ``personal+k``)."""
        kind, fields = A.decode(action)
        if kind not in (A.PHASE_SLIDE, A.PHASE_FALLBACK) or self.s.players == 1:
            return ""
        P = self.s.players
        zone = F.seat_zones(P, seat)[fields[0]] if kind == A.PHASE_SLIDE else F.egocentric_zone(P, seat, fields[0])
        key, index = F.zone_keys(P)[zone]
        personal = "its personal zone" if index == seat else f"seat {index}'s personal zone"  # a fallback's
        names = {"central": "the central zone", "side": f"side zone {index}", "personal": personal}
        return f"  (from {names[key]})"

    def flush_moves(self, heading: str) -> None:
        """The others' moves kept since your last decision, under ``heading``."""
        if self.pending:
            self.io.say(heading)
            for line in self.pending:
                self.io.say(f"  {line}")
            self.pending.clear()

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
            what = f"choose the face of the tile seat {F.receiver(g.current, self.s.players)} receives"
        if phase == "cover":
            what = (
                "your validated tile comes back white face up and every slot is full: choose the slot it covers"
                if self.s.players == 1
                else f"seat {g.current} passes you a tile and every slot is full: choose the slot it covers"
            )
        n = len(g.legal_actions())
        seat = "" if self.s.players == 1 else f" (seat {g.actor})"
        how = "press Enter to play it" if n == 1 else "'legal' lists them"
        return (
            f"--- {turn_label(g)}, your decision{seat}, phase {phase}: {what}.\n"
            f"    {n} legal move(s); {how}, 'help' explains.{self.round_note()}"
        )

    def round_note(self) -> str:
        """The end of the game coming (the final round, §5.1) and an extra turn earned (§7.4)."""
        d = self.game.to_dict()
        notes = []
        trigger = d.get("end_triggered_by")
        if trigger is not None:
            by = "you" if trigger == self.s.seat else self.who(trigger)
            notes.append(f"FINAL ROUND: {by} triggered the end; every other player takes one more turn, then it ends.")
        if d.get("extra_turn"):
            who = self.who(self.game.current)
            notes.append(f"{who[:1].upper()}{who[1:]} earned an extra turn, taken after this one.")
        return "".join(f"\n    {note}" for note in notes)

    def board(self, everyone: bool = False) -> str:
        """The table as :func:`render_text` draws it: every seat's block, or with ``--board
        mine`` only yours (unless ``everyone``)."""
        seats = None if everyone or self.s.board == "all" else [self.s.seat]
        return render_text(self.game.to_dict(), seat=self.s.seat, seats=seats, layout=self.s.layout).rstrip("\n")

    def human_decision(self) -> int | None:
        """Read lines until a legal move is typed (its id) or the player leaves (None)."""
        g = self.game
        self.decisions.append(_Decision(g.clone(), list(self.pending)))
        self.io.say()
        self.io.say(self.board())
        self.flush_moves("Since your last decision:")
        self.io.say(self.status())
        prompt = f"[{turn_label(g)}, {A.PHASES[g.phase]}] your move> "
        while True:
            line = self.io.ask(prompt)
            if line is None:
                self.io.say(f"End of input: the game is abandoned at {turn_label(g)}. {self.scores_line()}")
                return None
            text = line.strip()
            if not text:
                legal = g.legal_actions()
                if len(legal) == 1:  # the only move, as the status line offers
                    return legal[0]
                self.io.say(
                    f"  Enter plays a move only when it is the only one; type one of the {len(legal)} (or 'legal')"
                )
                continue
            command = COMMANDS.get(" ".join(text.lower().split()))
            if command == "quit":
                self.io.say(f"You quit at {turn_label(g)}. {self.scores_line()}")
                return None
            if command == "help":
                self.io.say(HELP_TEXT)
            elif command == "legal":
                self.io.say(format_legal(g))
            elif command in ("board", "board all"):
                self.io.say(self.board(everyone=command == "board all"))
                self.io.say(self.status())
            elif command == "hint":
                self.io.say(self.hint())
            elif command == "undo":
                problem = self.undo_problem()
                if problem:
                    self.io.say(f"  {problem}")
                    continue
                self.decisions.pop()  # this decision
                back = self.decisions.pop()  # the previous one, pushed again when it is asked
                phase = A.PHASES[back.game.phase]
                after = "" if self.s.players == 1 else " and what followed it"
                self.io.say(f"  took back your move at {turn_label(back.game)} ({phase}){after}")
                raise _Undo(back)
            else:
                try:
                    a = parse_move(text, g)
                except InputError as e:
                    self.io.say(f"  {e}")
                    continue
                return a

    def undo_problem(self) -> str:
        """Why your last move cannot be taken back ('' when it can): there is none yet, or
        it (or a move after it) uncovered a hidden tile no one had seen, which would let you
        take a move back after seeing what it revealed."""
        if len(self.decisions) < 2:
            return "nothing to take back: this is your first decision"
        before = {code >> 1 for *_, code in self.decisions[-2].game.unseen_tiles()}
        now = {code >> 1 for *_, code in self.game.unseen_tiles()}
        shown = sorted(before - now)
        if shown:
            tiles = ", ".join(f"tile {t}" for t in shown)
            return f"cannot take back your last move: since it, a hidden tile came to light ({tiles}) and you saw it"
        return ""

    def hint(self) -> str:
        if self.hinter is None:
            try:
                self.hinter = build_agent(HINT_AGENT, self.game.config, seed=self.hint_seed)
            except AgentSpecError as e:
                return f"  no hint available: {e}"
        try:
            a = agent_action(self.hinter, self.game)
        except AgentError as e:  # same policy as for opponents
            cause = e.__cause__ or e
            return f"  no hint available: the {HINT_AGENT} agent failed ({type(cause).__name__}: {cause})"
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
    """(name, score range) of a solo score's merit band (docs/rules.md §8)."""
    name = _band(score)
    low, high, _ = next(band for band in MERIT_BANDS if band[2] == name)
    span = band_label(low, high)
    return name, {"<15": "under 15", "31+": "31 or more"}.get(span, span)
