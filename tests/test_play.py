"""The terminal play command (umbrella_env.play), driven with scripted input."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from umbrella_env.core import actions as A
from umbrella_env.core import facts as F
from umbrella_env.core.config import GameConfig
from umbrella_env.core.single import SingleGame
from umbrella_env.play import (
    Console,
    InputError,
    Session,
    Settings,
    default_opponent,
    format_legal,
    main,
    merit_band,
    parse_move,
)
from umbrella_env.play.session import _Decision

REPO = Path(__file__).resolve().parents[1]
_ID = re.compile(r"\[(\d+)(?:-(\d+))?\]")


class ScriptedStdin:
    """Fixed lines, then end of input."""

    def __init__(self, lines: list[str], tty: bool = False) -> None:
        self._lines = [line + "\n" for line in lines]
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty

    def readline(self) -> str:
        return self._lines.pop(0) if self._lines else ""


class FirstLegalStdin:
    """A player who types ``legal`` and then the first id it lists, decision after decision."""

    def __init__(self, out: io.StringIO, limit: int = 2000) -> None:
        self.out = out
        self.limit = limit
        self.mark: int | None = None

    def isatty(self) -> bool:
        return False

    def readline(self) -> str:
        self.limit -= 1
        if self.limit < 0:
            return ""
        if self.mark is None:
            self.mark = len(self.out.getvalue())
            return "legal\n"
        listing = self.out.getvalue()[self.mark :]
        self.mark = None
        return _ID.search(listing).group(1) + "\n"


def run(argv: list[str], lines: list[str] | None = None) -> tuple[int, str]:
    out = io.StringIO()
    stdin = FirstLegalStdin(out) if lines is None else ScriptedStdin(lines)
    rc = main(argv, stdin=stdin, stdout=out)
    text = out.getvalue()
    assert "Traceback" not in text
    return rc, text


def session(players: int = 1, seed: int = 1, level: int = 1, opponents: list[str] | None = None) -> Session:
    """The session main() builds for these options (same deal, same agent seeds)."""
    opponents = ["random"] * (players - 1) if opponents is None else opponents
    settings = Settings(players, level, opponents, seat=0, seed=seed, max_turns=3000)
    return Session(settings, Console(ScriptedStdin([]), io.StringIO()))


# --------------------------------------------------------------------------- whole games
def test_solo_game_played_to_the_end():
    rc, out = run(["--players", "1", "--seed", "1"])
    assert rc == 0
    assert "Umbrella, solo, plate level 1" in out
    assert "you: slide " in out
    assert "=== Game over: ended by the rules" in out
    assert re.search(r"Final score: -?\d+ \(\d token\(s\) placed\) -- merit: ", out)


def test_two_player_game_against_random_prints_opponent_moves():
    rc, out = run(["--players", "2", "--opponents", "random", "--seed", "3", "--max-turns", "30"])
    assert rc == 0
    assert "seat 0 (you): slide " in out
    assert re.search(r"^  seat 1 \(random\): slide [BGRY] from (top|bottom|left|right) (col|row)\d  \(from ", out, re.M)
    assert "=== Game over:" in out
    assert re.search(r"^  1\. seat [01] \((you|random)\) +-?\d+ points", out, re.M)


def test_final_report_names_the_winner():
    s = session(players=3, seed=2)
    rng = np.random.default_rng(0)
    g = s.game
    while not g.done:
        g.step(int(rng.choice(g.legal_actions())))
    report = s.final_report()
    assert "=== Game over" in report
    assert report.count(" points  (personal zone: ") == 3
    ranks = g.ranks()
    winners = [p for p in range(3) if ranks[p] == 0]
    named = " and ".join(s.who(p) for p in winners)
    if g.truncated:
        expected = f"No winner by the rules (the game was cut short); ahead on points: {named}."
    elif len(winners) > 1:
        expected = "Shared victory: " + ", ".join(s.who(p) for p in winners) + "."
    else:
        expected = "You win!" if winners == [0] else f"Winner: seat {winners[0]} (random)."
    assert report.splitlines()[-1] == expected, (ranks, report)
    first = next(line for line in report.splitlines() if line.startswith("  1. "))
    assert first.startswith(f"  1. {s.who(winners[0])} ")  # listed by rank


@pytest.mark.parametrize(
    ("score", "band"),
    [(0, "try again"), (14, "try again"), (15, "a start"), (18, "a start"), (19, "not bad"), (23, "not bad"),
     (24, "well played"), (26, "well played"), (27, "impressive"), (30, "impressive"), (31, "big respect"),
     (40, "big respect")],
)  # fmt: skip
def test_solo_merit_bands(score, band):
    assert merit_band(score)[0] == band


# --------------------------------------------------------------------------- commands and bad input
def test_commands_and_bad_input_are_explained_and_the_game_goes_on():
    g = session(seed=1).game
    legal = g.legal_actions()
    illegal_slide = next(a for a in range(A.NUM_SLIDE) if a not in legal)
    lines = [
        "help",
        "legal",
        "moves",
        "board",
        "hint",
        "slide X from top col0",  # unknown move
        "validate slot0 space3",  # a move of another phase
        A.ACTION_STRINGS[illegal_slide],  # the right phase, not possible here
        "foo bar baz",  # garbage
        "99999",
        "",
        "  " + A.ACTION_STRINGS[legal[0]].upper().replace(" ", "   ") + "  ",
        "quit",
    ]
    rc, out = run(["--players", "1", "--seed", "1"], lines)
    assert rc == 0
    assert "Type a move by its name or by its id" in out  # help
    assert out.count("legal move(s) in the slide decision, each with its id;") == 2  # legal, moves
    assert out.count("Umbrella, solo, plate level 1") >= 3  # start, board, after the move
    assert re.search(r"hint \(heuristic\): .* \(id \d+\)", out)
    assert "not a move: 'x' is not a colour: B G R Y" in out
    assert (
        "'validate slot0 space3' (id 643) is not legal now: it is a validate move and this is the slide decision" in out
    )
    side = A.SIDES[A.decode(illegal_slide)[1][0]]
    assert f"(id {illegal_slide}) is not legal now: your {side} zone has no " in out
    assert "I don't understand 'foo bar baz'" in out
    assert "there is no move number 99999" in out
    assert f"you: {A.ACTION_STRINGS[legal[0]]}\n" in out  # case and spaces tolerated
    assert "You quit at turn " in out


def test_explanations_are_one_line():
    bad = ["slide Q from top col0", "cover slot1", "blah", "12345", "pass"]
    rc, out = run(["--players", "1", "--seed", "1"], [*bad, "quit"])
    lines = out.splitlines()
    for text in bad:
        i = next(i for i, line in enumerate(lines) if line.endswith(f"your move> {text}"))
        assert lines[i + 1].startswith("  ") and len(lines[i + 1]) < 200, lines[i + 1]
        assert lines[i + 2].startswith("[turn 1, slide] your move> ")


def test_parse_move_tolerates_case_spaces_fillers_and_colour_words():
    g = session(seed=1).game
    a = g.legal_actions()[0]
    name = A.ACTION_STRINGS[a]  # e.g. "slide B from top col0"
    _, (side, colour, line) = A.decode(a)
    long_colour = ("blue", "green", "red", "yellow")[colour]
    line_word = "col" if A.SIDES[side] in ("top", "bottom") else "row"
    for text in (
        name,
        name.lower(),
        f"  {name.upper()}  ",
        f"slide {long_colour} {A.SIDES[side]} {line_word} {line}",
        str(a),
    ):
        assert parse_move(text, g) == a
    with pytest.raises(InputError, match="there is no pass in the slide decision"):
        parse_move("pass", g)


def test_every_legal_move_is_listed_with_its_id():
    """In every phase met in random level-4 games, 'legal' shows exactly the legal ids."""
    rng = np.random.default_rng(5)
    seen: set[str] = set()
    for players in (2, 3):
        for key in range(12):
            g = SingleGame.new(GameConfig(num_players=players, plate_level=4), key)
            while not g.done and len(seen) < 7:
                phase = A.PHASES[g.phase]
                if phase not in seen:
                    seen.add(phase)
                    assert _listed_ids(format_legal(g)) == set(g.legal_actions()), phase
                    assert parse_move(str(g.legal_actions()[0]), g) == g.legal_actions()[0]
                g.step(int(rng.choice(g.legal_actions())))
    assert seen >= {"slide", "validate", "give_face", "cover", "swap_stage", "swap_zone"}


def test_fallback_moves_are_listed_by_zone():
    g = SingleGame.new(GameConfig(num_players=3), 5)
    d = g.to_dict()
    z = d["zones"]
    moved = z["central"] + z["side"][0] + z["side"][2] + z["personal"][0]  # seat 0's four zones
    z["central"] = z["side"][0] = z["side"][2] = z["personal"][0] = ""
    z["personal"][1] = "".join(sorted(z["personal"][1] + moved))
    d["phase"] = "fallback"
    d.pop("scores")
    g = SingleGame.from_dict(d)
    listing = format_legal(g)
    assert "personal+1 (seat 1)" in listing
    assert _listed_ids(listing) == set(g.legal_actions())
    assert parse_move("fallback b of side+1 from left row 2", g) == A.fallback_action(
        2, 0, A.LEFT, 2
    )  # zone 2 = side+1
    with pytest.raises(InputError, match="your personal zone has no B"):
        parse_move("fallback B of personal+0 from top col0", g)
    with pytest.raises(InputError, match="zone personal\\+3 does not exist with 3 players"):
        parse_move("fallback B of personal+3 from top col0", g)


def test_a_fallback_zone_takes_the_boards_name_too():
    """The board names zones absolutely (``side 3``, seat 1's ``personal``), the moves from the
    mover (``side+k``): "fallback Y of side 3 ..." was refused with a suggestion of another
    zone.  Seat 2 of 4 players, its zones empty."""
    g = SingleGame.new(GameConfig(num_players=4), 7)
    d = g.to_dict()
    z = d["zones"]
    seat = 2
    moved = z["central"] + z["side"][seat] + z["side"][seat - 1] + z["personal"][seat]
    z["central"] = z["side"][seat] = z["side"][seat - 1] = z["personal"][seat] = ""
    z["side"][3] = "".join(sorted(z["side"][3] + moved))
    d.update(phase="fallback", current_player=seat)
    d.pop("scores")
    g = SingleGame.from_dict(d)
    colour = z["side"][3][0]
    by_board = parse_move(f"fallback {colour} of side 3 from left row2", g)
    assert by_board == parse_move(f"fallback {colour} of side+1 from left row2", g)
    assert by_board == A.fallback_action(2, "BGRY".index(colour), A.LEFT, 2)  # zone id 2 = side+1
    own = z["personal"][1][0]
    assert parse_move(f"fallback {own} of personal 1 from top col0", g) == parse_move(
        f"fallback {own} of seat 1 from top col0", g
    )
    assert parse_move(f"fallback {own} of seat 1 from top col0", g) == A.fallback_action(
        8, "BGRY".index(own), A.TOP, 0
    )  # zone id 8 = personal+3, seat 1's from seat 2
    with pytest.raises(InputError, match="there is no side zone 4 with 4 players"):
        parse_move("fallback B of side 4 from top col0", g)


def test_the_others_moves_name_the_zone_as_the_board_does():
    """A fallback from another seat's personal zone was listed as "its personal zone"."""
    s = session(players=4, opponents=["random"] * 3)
    s.announce(s.game, 2, A.fallback_action(8, 0, A.TOP, 0))  # personal+3 from seat 2: seat 1's
    s.announce(s.game, 2, A.fallback_action(5, 0, A.TOP, 0))  # personal+0: its own
    s.announce(s.game, 1, A.fallback_action(2, 0, A.TOP, 0))  # side+1 from seat 1: side zone 2
    assert [line.split("  (from ")[1] for line in s.pending] == [
        "seat 1's personal zone)",
        "its personal zone)",
        "side zone 2)",
    ]


def _reach_where(found: Any, players: int, level: int) -> SingleGame:
    """A game of heuristic agents played (seeded) to its first decision where ``found(game)``."""
    from umbrella_env.core.engine import draw_key
    from umbrella_env.match import agent_action, build_agent

    config = GameConfig(num_players=players, plate_level=level)
    for seed in range(60):
        g = SingleGame.new(config, draw_key(np.random.default_rng(seed)))
        agents = [build_agent("heuristic", config, seed=seed * 4 + i) for i in range(players)]
        while not g.done and not found(g):
            g.step(agent_action(agents[g.actor], g))
        if not g.done:
            return g
    raise AssertionError("no such decision in 60 games")


def _reach(phase: str, players: int, level: int) -> SingleGame:
    """A game of heuristic agents played (seeded) to its first decision of ``phase``."""
    return _reach_where(lambda g: A.PHASES[g.phase] == phase, players, level)


def test_a_swap_stage_is_typed_in_either_order_and_a_bad_pair_is_named():
    """The swap of two cells has no order (§7.4): "swap-stage r0c1 r0c0" was refused, with a
    suggestion of another pair of cells."""
    g = _reach("swap_stage", 2, 4)
    a = next(x for x in g.legal_actions() if x != A.SWAP_STAGE_PASS)
    first, second = A.ACTION_STRINGS[a].split()[1:]
    assert parse_move(f"swap-stage {second} {first}", g) == parse_move(f"swap stage {first}, {second}", g) == a
    with pytest.raises(
        InputError, match="not a move: the move stops after 'r0c0'; a swap-stage move is written 'swap-"
    ):
        parse_move("swap-stage r0c0", g)  # it said "'r0c0' is not one of pass"
    for pair in ("r0c0 r2c2", "r1c1 r1c1"):
        with pytest.raises(InputError, match=f"not a move: {pair.replace(' ', ' and ')} are not two different, "):
            parse_move(f"swap-stage {pair}", g)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("slide purple from top col2", "'purple' is not a colour: B G R Y (or blue, green, red, yellow)"),
        ("slide B from top col9", "'col9' is not a line: col0-col3 (from top or bottom) or row0-row3"),
        ("slide B from top row2", "top and bottom take a column (col0-col3), left and right a row (row0-row3)"),
        ("validate slot0 space12", "'space12' is not one of space0-space9"),
        ("cover slot7", "'slot7' is not one of slot0-slot3"),
        ("slide B top", "the move stops after 'top'; a slide move is written 'slide <colour> from <side> <line>'"),
        # A line of a length no move has named no word (docs review, 2026-12-07):
        ("slide B frm top col2", "'frm' is not a side: top, bottom, left, right; a slide move is written"),
        ("slide B from top col2 now", "'now': a word after a whole move; a slide move is written"),
        ("validate slot1 space2 x y", "'x y': words after a whole move; a validate move is written"),
        ("slide B from", "the move stops after 'from'; a slide move is written"),  # said 'b' (diff review)
        ("swap-stage pass now", "'now': a word after a whole move; a swap-stage move is written"),
        ("swap-stage r0c0 r2c2 r1c1", "'r2c2' is not one of r0c1, r1c0; a swap-stage move is written"),
        ("swap-zone r0c0 with B of middle", "'middle' is not a side: top, bottom, left, right"),
    ],
)
def test_a_wrong_word_is_named_rather_than_replaced_by_a_similar_move(line, message):
    """A "did you mean" picked the legal move of the closest spelling, which changed what the
    player meant ('slide R from top col2' for purple, 'col3' for col9) without saying why."""
    g = SingleGame.new(GameConfig(num_players=2), 1)
    with pytest.raises(InputError) as info:
        parse_move(line, g)
    assert str(info.value).startswith(f"not a move: {message}") and "did you mean" not in str(info.value)


def test_an_illegal_validate_or_swap_zone_gets_its_one_reason():
    """The reasons were "X, or Y" where the program knows which ("slot 0 shows no complete
    figure that space 3 accepts, or the space is taken" for a red figure and a yellow space)."""
    g = _reach("validate", 2, 1)
    d = g.to_dict()
    plate = g.config.components.plates[1]
    legal = set(g.legal_actions())
    slot, space = A.decode(next(iter(legal)))[1]
    colour = next(c for c in "BGRY" if plate.accepts(space, "BGRY".index(c), slot))
    for other in range(10):
        a = A.validate_action(slot, other)
        if a in legal:
            continue
        with pytest.raises(InputError) as info:
            parse_move(A.ACTION_STRINGS[a], g)
        reason = str(info.value).split(": ", 1)[1].split(";")[0]
        token = d["plates"][g.actor][other]
        if token is not None:
            assert reason == f"space {other} is taken (a {token} token)"
        else:
            assert reason == f"slot {slot}'s figure is {colour} and space {other} takes " + (
                " or ".join(plate.spaces[other].split("/"))
                if not plate.spaces[other].startswith("W")
                else f"a figure from slot {plate.spaces[other][1:]}"
            )

    g = _reach("swap_zone", 2, 4)
    zones = dict(zip(A.SIDES, F.seat_zone_strings(g.to_dict(), g.actor)))
    stage = "".join(g.to_dict()["stages"][g.actor])
    side = next(s for s in A.SIDES if zones[s])
    colour = zones[side][0]
    cell = stage.index(colour) if colour in stage else None
    if cell is not None:
        with pytest.raises(InputError, match=f"cell r{cell // 4}c{cell % 4} already holds {colour};"):
            parse_move(f"swap-zone r{cell // 4}c{cell % 4} with {colour} of {side}", g)
    side, missing = next((s, c) for s in A.SIDES for c in "BGRY" if c not in zones[s])
    with pytest.raises(
        InputError, match=f"your {side} zone has no {missing} \\(it holds {zones[side] or 'nothing'}\\);"
    ):
        parse_move(f"swap-zone r0c0 with {missing} of {side}", g)


def _listed_ids(listing: str) -> set[int]:
    ids: set[int] = set()
    for line in listing.splitlines()[2:]:
        row = re.match(r"^  r\dc\d [BGRY]  (.*)$", line)  # the swap-zone table
        if row:
            ids.update(int(x) for x in re.findall(r"\d+", row.group(1)))
        for first, last in _ID.findall(line):
            ids.update(range(int(first), int(last or first) + 1))
    return ids


# --------------------------------------------------------------------------- leaving, options
def test_quit_exits_zero():
    rc, out = run(["--players", "2", "--seed", "0", "--opponents", "random"], ["quit"])
    assert rc == 0
    assert "You quit at turn 1. Scores so far: seat 0 (you) -4, seat 1 (random) -4." in out


@pytest.mark.parametrize(("players", "seed"), [(1, 1), (2, 3), (3, 5)])
def test_undo_takes_back_your_move_and_the_others_after_it(players: int, seed: int):
    s = session(players=players, seed=seed)
    start = s.game.to_dict()
    first = s.game.legal_actions()[0]  # seat 0 decides first
    out = io.StringIO()
    # move, then at the next decision take it back, move again, take it back twice
    # (the second time there is nothing before the first decision), then quit
    s.io = Console(ScriptedStdin([str(first), "undo", str(first), "undo", "undo", "quit"]), out)
    assert s.run() == 0
    text = out.getvalue()
    phase = A.PHASES[SingleGame.from_dict(start).phase]
    after = "" if players == 1 else " and what followed it"  # solo: no one else moved
    assert text.count(f"took back your move at turn 1 ({phase}){after}\n") == 2
    assert "nothing to take back: this is your first decision" in text
    assert s.game.to_dict() == start  # the game as it was at the first decision
    assert len(s.decisions) == 1 and "Traceback" not in text


def _a_reveal(players: int) -> tuple[SingleGame, SingleGame, int]:
    """(the game before a validation, after it, the tile it uncovered): random play until a
    validation uncovers a tile no one has seen."""
    rng = np.random.default_rng(0)
    for key in range(200):
        g = SingleGame.new(GameConfig(num_players=players), key)
        while not g.done:
            legal = g.legal_actions()
            if g.phase == A.PHASE_VALIDATE:
                slot = A.decode(legal[0])[1][0]
                below = [(d, c) for s_, k, d, c in g.unseen_tiles() if (s_, k) == (g.current, slot)]
                if below and max(below)[0] == g.stack_height(g.current, slot) - 2:  # just under the top
                    before = g.clone()
                    g.step(legal[0])
                    return before, g, max(below)[1] >> 1
            g.step(int(rng.choice(legal)))
    raise AssertionError("no validation uncovered a tile")


@pytest.mark.parametrize("players", [1, 2])
def test_undo_is_refused_once_a_hidden_tile_came_to_light(players: int):
    # undoing a validation that uncovered a never-seen tile would let you see it and take
    # the move back: refused, naming the tile; the game goes on unchanged
    before, after, tile = _a_reveal(players)
    assert tile not in {c >> 1 for *_, c in after.unseen_tiles()}
    s = session(players=players)
    out = io.StringIO()
    s.io = Console(ScriptedStdin(["undo", "quit"]), out)
    s.game = after
    s.decisions = [_Decision(before, [])]
    assert s.human_decision() is None  # quit
    text = out.getvalue()
    assert (
        f"cannot take back your last move: since it, a hidden tile came to light (tile {tile}) and you saw it" in text
    )
    assert s.game is after and len(s.decisions) == 2  # nothing restored


def test_undo_shows_the_others_moves_of_the_restored_decision_again():
    class TwoMovesThenUndo(FirstLegalStdin):
        """The first legal move at two decisions, then 'undo' at the third, then quit."""

        reads = 0

        def readline(self) -> str:
            self.reads += 1
            return {5: "undo\n", 6: "quit\n"}.get(self.reads) or super().readline()

    out = io.StringIO()
    assert (
        main(["--players", "2", "--seed", "3", "--opponents", "random"], stdin=TwoMovesThenUndo(out), stdout=out) == 0
    )
    blocks = out.getvalue().split("Since your last decision:")
    # the opponent's moves shown at the second decision, then again when the undo at the
    # third took the second move back
    assert len(blocks) == 4 and "took back your move" in blocks[2]
    assert blocks[1].split("\n")[1] == blocks[3].split("\n")[1] and "seat 1 (random):" in blocks[1]


def test_after_an_undo_the_game_goes_on_to_its_end():
    class UndoOnce(FirstLegalStdin):
        """The first-legal player, who types 'undo' at the start of their sixth decision."""

        reads = 0

        def readline(self) -> str:
            self.reads += 1
            return "undo\n" if self.reads == 11 else super().readline()

    for players in (1, 2):
        out = io.StringIO()
        argv = ["--players", str(players), "--seed", "1"]
        argv += [] if players == 1 else ["--opponents", "random", "--max-turns", "40"]
        rc = main(argv, stdin=UndoOnce(out), stdout=out)
        text = out.getvalue()
        assert rc == 0 and text.count("took back your move at turn") == 1 and "=== Game over:" in text
        assert "Traceback" not in text


def test_end_of_input_ends_the_game_gracefully():
    rc, out = run(["--players", "1", "--seed", "1"], [])
    assert rc == 0 and "End of input: the game is abandoned at turn 1." in out
    rc, out = run(["--players", "2", "--seed", "1", "--opponents", "random"], ["0", "legal"])
    assert rc == 0 and "End of input: the game is abandoned" in out


def test_you_can_take_another_seat():
    rc, out = run(["--players", "3", "--seat", "2", "--opponents", "random", "random", "--seed", "7"], ["quit"])
    assert rc == 0
    # the others' moves come under the board, right above your decision, with the zone each
    # slide took from as the board names it (the move names a side of the mover's own stage)
    block = re.search(r"^Since your last decision:\n((?:  .*\n)+)--- turn 3, your decision \(seat 2\)", out, re.M)
    assert block is not None
    moves = block.group(1).splitlines()
    assert [m.split(":")[0] for m in moves] == ["  seat 0 (random)", "  seat 1 (random)"]
    assert all(re.search(r"\(from (the central zone|side zone [0-2]|its personal zone)\)$", m) for m in moves)
    assert "=== seat 2  [you]" in out


def test_default_opponent_without_a_terminal():
    rc, out = run(["--seed", "0"], ["quit"])
    assert rc == 0
    assert f"2 players, you are seat 0 (seat 1: {default_opponent()}), plate level 1" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--players", "2", "--seat", "2"], "--seat must be a seat of the game, 0-1"),
        (["--players", "3", "--opponents", "random", "random", "random"], "expected one spec for each of the 2"),
        (["--players", "1", "--opponents", "random"], "the solo game has no opponents"),
        (["--players", "2", "--opponents", "nonsense"], "cannot build an agent: unknown agent 'nonsense'"),
        (["--players", "5"], "invalid choice: 5"),
        (["--level", "x"], "invalid int value: 'x'"),
        (["--max-turns", "0"], "--max-turns must be an int in [1, 2147483647], got 0"),
        (["--max-turns", "99999999999999"], "--max-turns must be an int in [1, 2147483647], got 99999999999999"),
    ],
)
def test_bad_options_exit_2_with_a_message(argv, message):
    rc, out = run(argv, ["quit"])
    assert rc == 2
    assert message in out


def test_help_option():
    rc, out = run(["--help"], [])
    assert rc == 0 and "--opponents SPEC [SPEC ...]" in out and "--max-turns" in out


def test_interactive_setup_on_a_terminal():
    out = io.StringIO()
    stdin = ScriptedStdin(["9", "3", "", "random", "", "quit"], tty=True)
    rc = main(["--seed", "4"], stdin=stdin, stdout=out)
    text = out.getvalue()
    assert rc == 0
    assert "please type a number from 1 to 4" in text
    assert f"3 players, you are seat 0 (seat 1: random, seat 2: {default_opponent()}), plate level 1" in text


def test_the_opponent_prompt_offers_only_agents_that_play_this_game():
    """At 2-4 players the prompt offered az-solo and az-solo-net, then refused them ("trained
    for num_players=1"); the shipped networks each play one configuration."""
    import importlib.util

    from umbrella_env.play.cli import playable_names

    networks = {"az-2p", "az-2p-net"} if importlib.util.find_spec("torch") else set()  # without torch: none
    two = playable_names(GameConfig(num_players=2))
    assert {"random", "greedy", "heuristic"} | networks <= set(two)
    assert not {"az-solo", "az-solo-net"} & set(two) and not networks - set(two)
    assert not {"az-2p", "az-2p-net", "az-solo"} & set(playable_names(GameConfig(num_players=3)))
    out = io.StringIO()
    main(["--seed", "4", "--players", "2", "--level", "1"], stdin=ScriptedStdin(["", "quit"], tty=True), stdout=out)
    prompt = next(line for line in out.getvalue().splitlines() if line.startswith("Opponent for seat 1"))
    assert ("az-2p-net" in prompt) == bool(networks) and "az-solo" not in prompt


def test_enter_plays_the_only_legal_move_and_the_status_says_so():
    g = _reach_where(lambda g: len(g.legal_actions()) == 1, 1, 1)
    s = session(players=1)
    s.game = g
    s.io = Console(ScriptedStdin(["", "quit"]), io.StringIO())
    assert "1 legal move(s); press Enter to play it" in s.status()
    assert s.human_decision() == g.legal_actions()[0]


def test_the_final_round_and_an_extra_turn_are_announced():
    """Both showed only in the table ("end triggered by: 1", "extra turn: yes")."""
    s = session(players=2, level=4, opponents=["heuristic"])
    s.game = _reach_where(lambda g: g.to_dict()["end_triggered_by"] is not None, 2, 1)
    by = s.game.to_dict()["end_triggered_by"]
    assert f"FINAL ROUND: {'you' if by == 0 else f'seat {by} (heuristic)'} triggered the end; every other" in s.status()
    s.game = _reach_where(lambda g: g.to_dict()["extra_turn"], 2, 4)
    assert f"Seat {s.game.current} (" in s.status() and "earned an extra turn, taken after this one." in s.status()


def test_ctrl_c_ends_the_game_with_the_scores(monkeypatch):
    from umbrella_env.play import session as play_session

    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(play_session.Session, "human_decision", interrupted)
    rc, out = run(["--players", "2", "--seed", "3", "--opponents", "random"], [])
    assert rc == 130 and "Interrupted: the game is abandoned. Scores so far: seat 0 (you) " in out


def test_the_plate_shows_the_numbers_of_its_spaces():
    """The validate moves name spaces by number (``space<s>``), which the plate did not show."""
    lines = session(players=2, level=4).board().splitlines()
    i = next(k for k, line in enumerate(lines) if "plate (level 4):" in line)
    pattern = r"\b(\d) (?:[BGRY](?:/[BGRY])?|W\d):\."
    assert re.findall(pattern, lines[i] + lines[i + 1]) == [str(k) for k in range(10)]


def test_a_failing_agent_does_not_end_the_game():
    class Broken:
        name = "broken"
        needs_game = False

        def act(self, observation, action_mask, game=None):
            raise RuntimeError("boom")

    s = session(players=2, seed=3)
    s.agents[1] = Broken()
    g = s.game
    g.step(g.legal_actions()[0])
    while g.actor == 0 and not g.done:
        g.step(g.legal_actions()[0])
    s.agent_decision()
    log = s.io.stdout.getvalue()
    assert "seat 1 (random) failed (RuntimeError: boom); playing " in log


def test_module_runs_as_a_command():
    proc = subprocess.run(
        [sys.executable, "-m", "umbrella_env.play", "--players", "1", "--seed", "1"],
        input="quit\n",
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "You quit at turn 1." in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_unicode_digits_int_cannot_read_are_explained_not_crashed_on():
    rc, out = run(["--players", "1", "--seed", "1"], ["²", "#²", "quit"])
    assert rc == 0 and out.count("I don't understand") == 2 and "You quit at turn " in out
    stdin = ScriptedStdin(["²", "3", "", "random", "", "quit"], tty=True)
    text = io.StringIO()
    assert main(["--seed", "4"], stdin=stdin, stdout=text) == 0
    assert "please type a number from 1 to 4" in text.getvalue()


def test_solo_cover_prompt_speaks_of_your_own_tile():
    from tests.test_rules import make_state  # the rules tests' position builder

    s = session(players=1, seed=1)
    rows = "BRYG/GYRR/RGYB/BYGY"  # as tests/test_rules.py::test_solo_cover_choice
    s.game = SingleGame.from_dict(
        make_state(1, stages=[rows], zones={"top": "B", "left": "R"}, slots=["3b 15b|4b|5b|6b"])
    )
    for move in ("slide B from top col3", "validate slot0 space0"):
        s.game.step(A.string_to_action(move))
    assert A.PHASES[s.game.phase] == "cover"
    prompt = s.status()
    assert "your validated tile comes back white face up" in prompt and "passes you" not in prompt


class ClosedOutput(io.StringIO):
    """An output whose reader went away after the first lines (``| head -1``)."""

    def write(self, text: str) -> int:
        if len(self.getvalue()) > 40:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)

    def flush(self) -> None:
        if len(self.getvalue()) > 40:
            raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_output_ends_the_command_with_status_1_and_no_traceback():
    assert (
        main(["--players", "1", "--seed", "1"], stdin=ScriptedStdin(["help"] * 5 + ["quit"]), stdout=ClosedOutput())
        == 1
    )


def test_a_move_id_of_any_length_or_sign_gets_the_id_range():
    g = SingleGame.new(GameConfig(num_players=2), key=1)
    for text in ("9" * 5000, "#" + "9" * 5000, "-1", "#-1", "968"):  # int() refuses 4301+ digits
        with pytest.raises(InputError, match=r"^there is no move number .* \(ids are 0-967\); "):
            parse_move(text, g)
    with pytest.raises(InputError, match=r"no move number 999999999999\.\.\. \(a 5000-digit number\)"):
        parse_move("9" * 5000, g)
    legal = g.legal_actions()[0]
    assert parse_move("0" * 5000 + str(legal), g) == legal
    rc, out = run(["--seed", "1"], ["9" * 5000, "-1", "quit"])
    assert rc == 0 and out.count("(ids are 0-967)") == 2 and "You quit at turn 1." in out


def test_a_line_that_is_not_utf8_is_refused_and_the_game_goes_on():
    stdin = io.TextIOWrapper(io.BytesIO(b"caf\xe9\nquit\n"), encoding="utf-8")
    out = io.StringIO()
    assert main(["--seed", "1"], stdin=stdin, stdout=out) == 0
    text = out.getvalue()
    assert "caf\\xe9\n  could not read that line (not UTF-8); type it again\n" in text
    assert "You quit at turn 1." in text


def test_a_closed_input_is_the_end_of_input():
    out = io.StringIO()
    assert main(["--seed", "1"], stdin=None, stdout=out) == 0  # Python's sys.stdin after `<&-`
    assert "End of input: the game is abandoned at turn 1." in out.getvalue()


class FullOutput(io.StringIO):
    """An output on a full disk: writes are buffered, flushing fails."""

    def flush(self) -> None:
        raise OSError(28, "No space left on device")


def test_a_closed_or_full_output_exits_1_with_one_line_on_stderr(capsys):
    for stdout, reason in ((None, "the output is closed"), (FullOutput(), "No space left on device")):
        assert main(["--seed", "1"], stdin=ScriptedStdin(["quit"]), stdout=stdout) == 1
        err = capsys.readouterr().err
        assert err.startswith("umbrella-play: error: cannot write the output: ") and reason in err
        assert err.count("\n") == 1


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_the_command_into_a_full_disk_exits_1_without_a_traceback():
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "umbrella_env.play", "--seed", "1"],
            input="quit\n",
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            timeout=120,
        )
    assert proc.returncode == 1
    assert proc.stderr == "umbrella-play: error: cannot write the output: [Errno 28] No space left on device\n"


class ExitingAgent:
    """An opponent that calls sys.exit in its first decision (a factory for play)."""

    name = "exiting"
    needs_game = False

    def reset(self, seed=None) -> None:
        pass

    def act(self, observation, action_mask, game=None) -> int:
        raise SystemExit(3)


def test_play_forgives_an_opponent_that_exits_and_names_it_by_its_spec() -> None:
    # SystemExit got past the forgiving wrapper and the game stopped naming '_Forgiving'
    out = io.StringIO()
    argv = ["--players", "2", "--seat", "1", "--opponents", "tests.test_play:ExitingAgent", "--seed", "1"]
    assert main(argv, stdin=ScriptedStdin(["quit"]), stdout=out) == 0
    text = out.getvalue()
    assert "failed (SystemExit: 3); playing " in text and "instead" in text, text
    assert "_Forgiving" not in text


class FloatAgent:
    """An opponent that answers a legal id as a float (a factory for play)."""

    name = "floaty"
    needs_game = False

    def reset(self, seed=None) -> None:
        pass

    def act(self, observation, action_mask, game=None) -> float:
        return float(np.flatnonzero(action_mask)[0])


def test_play_names_a_non_integer_answer_as_such_not_as_an_illegal_move() -> None:
    """An opponent answering 4.0 was told it "chose 4.0, which is not legal" while 4 was
    legal; evaluate.py names the type (agents audit, 2026-12-07)."""
    out = io.StringIO()
    argv = ["--players", "2", "--seat", "1", "--opponents", "tests.test_play:FloatAgent", "--seed", "1"]
    assert main(argv, stdin=ScriptedStdin(["quit"]), stdout=out) == 0
    text = out.getvalue()
    assert re.search(r"returned \d+\.0 \(float\): an action is an int id in \[0, 968\)", text), text
    assert "which is not legal" not in text


@pytest.mark.parametrize("word", ["quit", "EXIT", "q"])
def test_the_start_up_prompts_take_quit_as_the_game_does(word: str) -> None:
    """On a terminal, 'quit' at "Players" was "please type a number" and at "Opponent for
    seat 1" an unknown agent named 'quit': only Ctrl-D left (agents audit, 2026-12-07)."""
    for argv, lines in (([], [word]), (["--players", "2", "--level", "1"], [word])):
        out = io.StringIO()
        assert main(["--seed", "4", *argv], stdin=ScriptedStdin(lines, tty=True), stdout=out) == 0
        assert "No game started." in out.getvalue() and "unknown agent" not in out.getvalue()


def test_enter_with_several_legal_moves_says_what_it_does() -> None:
    """Enter with several legal moves repeated the prompt and said nothing."""
    g = _reach_where(lambda g: len(g.legal_actions()) > 1, 1, 1)
    s = session(players=1)
    s.game = g
    out = io.StringIO()
    s.io = Console(ScriptedStdin(["", "quit"]), out)
    s.human_decision()
    assert f"Enter plays a move only when it is the only one; type one of the {len(g.legal_actions())}" in (
        out.getvalue()
    )


@pytest.mark.posix
def test_a_move_typed_on_a_terminal_can_be_edited_and_recalled() -> None:
    """On a terminal the arrow keys typed escape codes into the move ('not a move:
    ...\\x1b[d...'): the input had no line editing (review of terminal play's accessibility)."""
    import os
    import select
    import time

    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "umbrella_env.play", "--players", "1", "--level", "1", "--seed", "1"],
        stdin=slave, stdout=slave, stderr=slave, close_fds=True, env={**os.environ, "TERM": "xterm"},
    )  # fmt: skip
    os.close(slave)

    def read_until(token: bytes) -> bytes:
        buf, end = b"", time.monotonic() + 60
        while token not in buf and time.monotonic() < end:
            if select.select([master], [], [], 0.5)[0]:
                try:
                    buf += os.read(master, 4096)
                except OSError:  # the child closed the terminal
                    break
        return buf

    try:
        assert b"your move> " in read_until(b"your move> ")
        os.write(master, b"hnt\x1b[D\x1b[Di\r")  # "hnt", the cursor two places back, "i": "hint"
        assert b"hint (heuristic): slide" in read_until(b"your move> ")
        os.write(master, b"\x1b[A\r")  # the up arrow recalls "hint"
        assert b"hint (heuristic): slide" in read_until(b"your move> ")
        os.write(master, b"quit\r")
        assert b"You quit at turn 1." in read_until(b"Score so far")
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        os.close(master)


def test_board_mine_draws_only_your_seat_before_each_decision_and_board_all_every_seat() -> None:
    """At 4 players the whole table (about 65 lines a seat block) came before every decision,
    the opponents' moves last: long for a screen reader (review of accessibility)."""
    base = ["--players", "3", "--level", "1", "--seed", "2", "--opponents", "greedy"]
    rc, mine = run([*base, "--board", "mine"], ["board", "board   all", "quit"])
    assert rc == 0
    first = mine.split("your move>")[0]  # what comes before the first prompt
    assert "=== seat 0  [you]" in first and "=== seat 1 " not in first and "=== seat 2 " not in first
    assert "=== table ===" in first
    after_board, after_all = mine.split("your move>")[1:3]
    assert "=== seat 1 " not in after_board and "=== seat 1 " in after_all and "=== seat 2 " in after_all
    rc, full = run(base, ["quit"])
    assert "=== seat 1 " in full.split("your move>")[0]  # the default draws every seat


def test_render_text_draws_the_seats_asked_for() -> None:
    from umbrella_env.core.render import render_text

    d = SingleGame.new(GameConfig(num_players=3), 1).to_dict()
    text = render_text(d, seat=1, seats=[1])
    assert "=== seat 1  [you]" in text and "=== seat 0 " not in text and "=== table ===" in text
    assert render_text(d, seats=None) == render_text(d)
    with pytest.raises(ValueError, match=r"seats: expected seats from 0 to 2, got \[3\]"):
        render_text(d, seats=[3])


@pytest.mark.parametrize(("players", "level", "seed"), [(1, 4, 3), (2, 1, 5), (4, 2, 7)])
def test_the_lines_layout_says_every_fact_of_the_grid_one_per_line(players: int, level: int, seed: int) -> None:
    """The grid lays zones beside the stage, the slots in four columns and the plate in two
    rows: a screen reader reads it across, mixing them (review of accessibility)."""
    from umbrella_env.core.components import default_components
    from umbrella_env.core.render import render_text

    game = SingleGame.new(GameConfig(num_players=players, plate_level=level), seed)
    rng = np.random.default_rng(seed)
    for _ in range(40):  # tokens, hidden tiles and a used discard on the way
        if not (game.terminated or game.truncated):
            game.step(int(rng.choice(np.flatnonzero(game.legal_mask()))))
    d = game.to_dict()
    text = render_text(d, seat=0, layout="lines")
    assert not any(mark in text for mark in ("|", "===", "+--")) and max(map(len, text.splitlines())) <= 100
    plate = default_components().plates[level]
    for i in range(players):
        for r, row in enumerate(d["stages"][i]):
            assert f"Stage row {r}: {' '.join(row)}." in text
        for k, (need, token) in enumerate(zip(plate.spaces, d["plates"][i])):
            assert f"Plate space {k}, takes {need}: {'free' if token is None else 'token ' + token}." in text
        for k, stack in enumerate(d["slots"][i]):
            said = f"Slot {k}, rotation {90 * k}: " + (
                "empty." if not stack else f"tile {stack[-1]['tile']} {stack[-1]['face']}, height {len(stack)}"
            )
            assert said in text
    zones = d["zones"]
    listed = [zones["central"], *zones["side"], *zones["personal"]] if players > 1 else list(zones.values())
    for letters in listed:  # every zone, spelt a letter at a time
        assert (f": {' '.join(letters)} ({len(letters)})." if letters else ": empty.") in text
    assert f"Turns played: {d['turn']} / {d['max_turns']}" in text.replace("; t", "; T")
    with pytest.raises(ValueError, match="layout: expected one of 'grid', 'lines', got 'list'"):
        render_text(d, layout="list")


def test_play_layout_lines_draws_the_board_one_fact_per_line() -> None:
    base = ["--players", "2", "--level", "1", "--seed", "2", "--opponents", "greedy"]
    rc, said = run([*base, "--layout", "lines", "--board", "mine"], ["quit"])
    first = said.split("your move>")[0]
    assert rc == 0 and "Seat 0 (you, current player, to act: slide). Score -4." in first
    assert "Stage row 0: " in first and "=== seat" not in first and "Seat 1" not in first


def test_in_a_notebook_moves_are_read_by_input(monkeypatch) -> None:
    """In an IPython kernel the process's stdin has no lines (the game ended at once, "taking
    it as ended"): the moves are asked with ``input()``, which the notebook answers, and
    are not echoed a second time."""
    import builtins
    import types

    kernel = types.SimpleNamespace(kernel=object())
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: kernel))
    answers, prompts = iter(["legal", "quit"]), []

    def notebook_input(prompt: str = "") -> str:
        if prompt.rstrip().endswith("]:"):  # a setting's question: its default
            return ""
        prompts.append(prompt)
        return next(answers)

    monkeypatch.setattr(builtins, "input", notebook_input)
    out = io.StringIO()
    assert main(["--players", "2", "--opponents", "heuristic", "--seed", "1"], stdin=sys.stdin, stdout=out) == 0
    text = out.getvalue()
    assert len(prompts) == 2 and "could not read the input" not in text
    assert "[63] row3" in text and "\nlegal\n" not in text  # answered (the legal moves), the line not echoed


def test_a_notebook_run_without_input_ends_the_game_as_at_the_end_of_input(monkeypatch) -> None:
    """nbconvert or papermill run a notebook without a frontend: IPython's ``input()`` raises
    StdinNotImplementedError (a NotImplementedError), which ended play in a traceback."""
    import builtins
    import types

    class StdinNotImplementedError(NotImplementedError):
        pass

    def no_frontend(prompt: str = "") -> str:
        raise StdinNotImplementedError("raw_input was called, but this frontend does not support input requests.")

    kernel = types.SimpleNamespace(kernel=object())
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: kernel))
    monkeypatch.setattr(builtins, "input", no_frontend)
    out = io.StringIO()
    argv = ["--players", "2", "--opponents", "heuristic", "--seed", "1", "--level", "1"]
    assert main(argv, stdin=sys.stdin, stdout=out) == 0
    assert "End of input" in out.getvalue()
