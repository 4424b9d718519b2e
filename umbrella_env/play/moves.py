"""Moves as a player types and reads them: :func:`parse_move` (readable names, action
ids, forgiving spelling), :func:`format_legal` (the legal moves grouped for reading) and
the one-line explanation of why a move is not legal now."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

from umbrella_env.core import actions as A
from umbrella_env.core import facts as F
from umbrella_env.core.components import COLOUR_NAMES, COLOURS, rotate_cells
from umbrella_env.core.single import SingleGame

_MOVE_VERBS = ("slide", "fallback", "validate", "swap-stage", "swap-zone", "give", "cover", "pass")

_COLOUR_WORDS = {name: letter.lower() for name, letter in zip(COLOUR_NAMES, COLOURS)}  # "blue" -> "b"
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


#: A typed move id: an optional "#" and sign, then decimal digits (as int() reads them; "²" is none).
_ID_TEXT = re.compile(r"#?([+-]?)(\d+)")


def _action_id(number: re.Match[str]) -> int | None:
    """The action id a typed number names, or None when no action has it.  int() is handed
    only short digit strings: it refuses numbers of 4301 digits and more (CPython's limit)."""
    sign, digits = number.groups()
    digits = digits.lstrip("0") or "0"
    if len(digits) > len(str(A.NUM_ACTIONS)):
        return None
    a = -int(digits) if sign == "-" else int(digits)
    return a if 0 <= a < A.NUM_ACTIONS else None


def _shown(number: re.Match[str], limit: int = 12) -> str:
    """A typed number as a message quotes it: a very long one is cut, with its length."""
    sign, digits = number.groups()
    return sign + digits if len(digits) <= limit else f"{sign}{digits[:limit]}... (a {len(digits)}-digit number)"


_CELL = re.compile(r"r([0-3])c([0-3])")


def _ordered_swap(words: tuple[str, ...]) -> tuple[str, ...]:
    """A swap-stage's two cells in the order of its name (the swap has no order, §7.4)."""
    if len(words) == 3 and words[0] == "swap-stage" and all(_CELL.fullmatch(w) for w in words[1:]):
        return (words[0], *sorted(words[1:]))
    return words


def _board_zone_names(words: tuple[str, ...], game: SingleGame) -> tuple[str, ...]:
    """A fallback's zone named as the board names it (``side 3``, ``personal 2`` or ``seat
    2``: absolute) rewritten to the move's name, counted from the mover (``side+k``)."""
    if not words or words[0] != "fallback" or game.config.num_players == 1:  # solo has no fallback
        return words
    P, out, i = game.config.num_players, [], 0
    while i < len(words):
        word, nxt = words[i], words[i + 1] if i + 1 < len(words) else ""
        if word in ("side", "personal", "seat") and nxt.isdecimal() and len(nxt) == 1:
            kind = "side" if word == "side" else "personal"
            if int(nxt) >= P:
                raise InputError(f"there is no {kind} zone {nxt} with {P} players (seats 0-{P - 1})")
            out.append(f"{kind}+{(int(nxt) - game.actor) % P}")
            i += 2
            continue
        out.append(word)
        i += 1
    return tuple(out)


#: How a move of each verb is written (the help's forms), for a line of the wrong shape.
_FORMS = {
    "slide": "slide <colour> from <side> <line>",
    "fallback": "fallback <colour> of <zone> from <side> <line>",
    "validate": "validate slot<k> space<s>",
    "swap-stage": "swap-stage r<row>c<col> r<row>c<col>, or pass",
    "swap-zone": "swap-zone r<row>c<col> with <colour> of <side>, or pass",
    "give": "give white | give black",
    "cover": "cover slot<k>",
    "pass": "pass",
}


def _what(tokens: set[str]) -> str:
    """The words a position of a move name takes, in words."""
    if tokens == {c.lower() for c in COLOURS}:
        return "a colour: " + " ".join(COLOURS) + " (or " + ", ".join(COLOUR_NAMES) + ")"
    if tokens == set(A.SIDES):
        return "a side: " + ", ".join(A.SIDES)
    if tokens == set(A.FACES):
        return "a face: white or black"
    if tokens == {f"col{i}" for i in range(4)} | {f"row{i}" for i in range(4)}:
        return "a line: col0-col3 (from top or bottom) or row0-row3 (from left or right)"
    if tokens == set(A.ZONE_NAMES):
        return "a zone: central, side+k or personal+k (k = 0-3 seats from you), or the board's side N, personal N"
    prefix = {re.sub(r"\d+$", "", t) for t in tokens}
    if len(prefix) == 1 and all(t[len(next(iter(prefix))) :].isdecimal() for t in tokens):
        stem = prefix.pop()
        numbers = sorted(int(t[len(stem) :]) for t in tokens)
        return f"one of {stem}{numbers[0]}-{stem}{numbers[-1]}"
    if len(tokens) == 16 and all(_CELL.fullmatch(t) for t in tokens):  # fewer: the ones listed below
        return "a cell r0c0-r3c3 (row, column)"
    return "one of " + ", ".join(sorted(tokens))


def _word_problem(words: tuple[str, ...], last: str) -> str | None:
    """What is wrong with a line that starts with a move's verb but names no move: its shape,
    or the first word that no move of the verb has there; None when every word is one a move
    takes (the combination is not a move).  ``last``: the line's last word as typed."""
    whole = next((key for key in _LOOSE_TO_ACTION if key[0] == words[0] and words[: len(key)] == key), None)
    if whole is not None and len(whole) < len(words):  # 'swap-stage pass now'
        return _extra_words(words, len(whole))
    if words[0] == "swap-stage" and len(words) == 3 and all(_CELL.fullmatch(w) for w in words[1:]):
        return f"{words[1]} and {words[2]} are not two different, orthogonally adjacent cells"
    names = [
        key
        for key in _LOOSE_TO_ACTION
        if key[0] == words[0] and len(key) == len(words) and (key[1:] != ("pass",) or words[1:] == ("pass",))
    ]
    if not names:
        return _shape_problem(words, last)
    for i, word in enumerate(words[1:], start=1):
        tokens = {key[i] for key in names}
        if word not in tokens:
            return f"{word!r} is not {_what(tokens)}"
    if words[0] in ("slide", "fallback"):
        return "top and bottom take a column (col0-col3), left and right a row (row0-row3)"
    return None


def _extra_words(words: tuple[str, ...], whole: int) -> str:
    """The words after the first ``whole`` ones, which name a whole move."""
    extra, what = " ".join(words[whole:]), "a word" if len(words) == whole + 1 else "words"
    return f"{extra!r}: {what} after a whole move; a {words[0]} move is written '{_FORMS[words[0]]}'"


def _shape_problem(words: tuple[str, ...], last: str) -> str:
    """What is wrong with a line of a move's verb whose length no move of the verb has: the
    first word that no such move takes where it stands, a word too many, or where the move
    stops short; each with how the move is written."""
    form = f"a {words[0]} move is written '{_FORMS[words[0]]}'"
    names = [key for key in _LOOSE_TO_ACTION if key[0] == words[0]]
    for i, word in enumerate(words[1:], start=1):
        tokens = {key[i] for key in names if len(key) > i}
        if not tokens:
            return _extra_words(words, i)
        if word not in tokens:
            return f"{word!r} is not {_what(tokens)}; {form}"
        names = [key for key in names if len(key) > i and key[i] == word]
    return f"the move stops after {last!r}; {form}"


class InputError(Exception):
    """A typed line that is not a legal move; the message is the one-line explanation."""


def parse_move(text: str, game: SingleGame) -> int:
    """The legal action id a typed line names; :class:`InputError` explains a refusal."""
    phase = A.PHASES[game.phase]
    legal = game.legal_actions()
    words = _loose_key(text)
    if not words:
        raise InputError("empty input; type a move, its id, or 'help'")
    words = _board_zone_names(_ordered_swap(words), game)
    number = _ID_TEXT.fullmatch(words[0]) if len(words) == 1 else None
    if number is not None:
        a = _action_id(number)
        if a is None:
            raise InputError(
                f"there is no move number {_shown(number)} (ids are 0-{A.NUM_ACTIONS - 1}); {_suggest(game, legal)}"
            )
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
        problem = _word_problem(words, text.split()[-1])
        if problem is not None:
            raise InputError(f"not a move: {problem}; type 'legal' to list the {len(legal)} legal moves")
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
    """Side of ``seat``'s stage -> umbrellas of the zone on that side (docs/rules.md §2)."""
    return dict(zip(A.SIDES, F.seat_zone_strings(d, seat)))


def _zone_text(d: dict[str, Any], zone: int) -> str:
    key, index = F.zone_keys(d["num_players"])[zone]
    return d["zones"][key] if index is None else d["zones"][key][index]


def _ego_zone(d: dict[str, Any], actor: int, zone: int) -> tuple[str, str | None]:
    """(label, umbrellas or None if absent) of egocentric fallback zone ``zone`` of ``actor``."""
    P = d["num_players"]
    absolute = F.egocentric_zone(P, actor, zone)
    if absolute < 0:
        return f"zone {A.ZONE_NAMES[zone]}", None
    key, seat = F.zone_keys(P)[absolute]
    if key == "central":
        return "the central zone", _zone_text(d, absolute)
    if key == "side":
        return f"side zone {seat}", _zone_text(d, absolute)
    owner = "your" if seat == actor else f"seat {seat}'s"
    return f"{owner} personal zone", _zone_text(d, absolute)


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
        return _why_not_validate(d, game, f[0], f[1])
    if kind == A.PHASE_SWAP_STAGE:
        return "those two cells hold the same colour"
    if kind == A.PHASE_SWAP_ZONE:
        cell, side, colour = f[0], A.SIDES[f[1]], COLOURS[f[2]]
        held = _own_zones(d, game.actor)[side]
        if colour not in held:
            return f"your {side} zone has no {colour} (it holds {held or 'nothing'})"
        return f"cell r{cell // 4}c{cell % 4} already holds {colour}"
    return "it is not among the legal choices"


def _why_not_validate(d: dict[str, Any], game: SingleGame, slot: int, space: int) -> str:
    """The one reason slot ``slot``'s figure cannot take space ``space`` (§4.2, §7)."""
    seat = game.actor
    components = game.config.components
    plate = components.plates[d["plate_level"]]
    token = d["plates"][seat][space]
    if token is not None:
        return f"space {space} is taken (a {token} token)"
    stack = d["slots"][seat][slot]
    if not stack:
        return f"slot {slot} holds no tile"
    top = stack[-1]
    cells = rotate_cells(components.face_cells(top["tile"], A.FACES.index(top["face"])), slot)
    stage = "".join(d["stages"][seat])
    colours = sorted({stage[c] for c in cells})
    if len(colours) > 1:
        return f"slot {slot}'s figure is not complete on your stage (its cells hold {''.join(colours)})"
    need = plate.spaces[space]
    wants = f"a figure from slot {need[1:]}" if need.startswith("W") else " or ".join(need.split("/"))
    return f"slot {slot}'s figure is {colours[0]} and space {space} takes {wants}"


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
