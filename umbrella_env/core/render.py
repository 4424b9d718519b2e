"""A plain-ASCII picture of a whole game, drawn from its state dict.

One block per seat (stage with its four surrounding zones, the four figure slots with
the visible face drawn in the slot's rotation and hidden tiles only counted, the score
plate and the score), then the table: supply, reserve, turn, phase, who acts, end trigger and
the tile in transit.  Lines stay under 80 columns for typical positions.

A seat block (2-4 players; side zone ``i`` is seat ``i``'s left, ``i-1`` its right)::

    === seat 0  [current player]  [to act: slide] =================== score -4 ===
                     top: central BGRY (4)
                       0 1 2 3
                     +---------+
      left: side 0  0| B G R Y |  right: side 1
      BGRY (4)      1| R Y B G |  BGRY (4)
                    2| G B Y R |
                    3| Y R G B |
                     +---------+
                     bottom: personal BGRY (4)

      slot 0 (rot 0)      slot 1 (rot 90)     slot 2 (rot 180)    slot 3 (rot 270)
      tile 1 black        tile 3 white        empty               empty
      height 2, 1 hidden  height 2, 1 hidden  height 0            height 0
      ...X                ..X.
      X...                ..XX
      ...X                ..X.
      X...                ....

      plate (level 1):  0 B:.    1 G:.    2 R:.    3 Y:.    4 B:.
                        5 G:.    6 Y:.    7 B:.    8 R:.    9 G:.
                        groups {0,5} +3, {1,2,6} +5, {3,4,7,8,9} +8
                        tokens 0, bonus now +0

A plate space shows its number (the ``space<s>`` of a validate move), its requirement
(``B``, ``G/Y``, ``W1`` = any colour from slot 1) and the colour of the token on it (``.``
when free).  ``complete: C`` under a slot says that its
visible figure is complete in colour ``C`` on the owner's stage.

``layout="lines"`` writes the same facts one to a line, in reading order, with no grid,
columns or ruled headers (for a screen reader, or a log read line by line)::

    Seat 0 (you, current player, to act: slide). Score -4.
    Stage row 0: B G R Y.
    ...
    Top, central: B G R Y (4).
    Left, side 0: B G R Y (4).
    ...
    Slot 0, rotation 0: tile 12 white, height 2, 1 hidden; figure cells r1c0 r2c0 r2c1 r3c1.
    Slot 2, rotation 180: empty.
    ...
    Plate space 0, takes B: free.
    ...
    Plate groups: spaces 0, 5, +3; spaces 1, 2, 6, +5; spaces 3, 4, 7, 8, 9, +8.
    Plate tokens 0, bonus now +0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from umbrella_env.core import facts as F
from umbrella_env.core.actions import PHASES
from umbrella_env.core.components import (
    PLATE_COLS,
    PLATE_ROWS,
    STAGE_SIZE,
    ComponentSet,
    default_components,
    rotate_cells,
)
from umbrella_env.core.errors import ArgumentError, ArgumentTypeError
from umbrella_env.core.serialize import validate_state_dict

__all__ = ["LAYOUTS", "actor_of", "drawn_state", "render_text"]

#: The layouts of :func:`render_text`.
LAYOUTS = ("grid", "lines")
_WIDTH = 78
_SLOT_WIDTH = 20
_FACE_INDEX = {"white": 0, "black": 1}


def render_text(
    d: Any,
    seat: int | None = None,
    *,
    components: ComponentSet | None = None,
    over: bool = False,
    seats: Sequence[int] | None = None,
    layout: str = "grid",
) -> str:
    """Render a state dict (validated first, so any valid input form works) or a game
    (``SingleGame``, ``ReferenceGame``: :func:`drawn_state`) as ASCII text.

    ``seat`` marks that seat's block with ``[you]``; nothing is hidden.  ``over`` shows the
    game over (terminated, phase ``game_over``) although no rule ended it: an env that
    ended it for an illegal action (:func:`shown_over`).  ``seats`` draws only those seats'
    blocks (default every seat's; the table block is always drawn).  ``layout`` is
    ``"grid"`` (the picture above) or ``"lines"`` (one fact per line, module doc).
    """
    if layout not in LAYOUTS:
        raise ArgumentError(f"layout: expected one of {', '.join(map(repr, LAYOUTS))}, got {layout!r}")
    s, cs = drawn_state(d, components, over)
    if seat is not None and not (
        isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat < s["num_players"]
    ):
        raise ArgumentError(f"seat: expected a seat 0..{s['num_players'] - 1} or None, got {seat!r}")
    p = s["num_players"]
    if seats is not None and not all(
        isinstance(i, (int, np.integer)) and not isinstance(i, bool) and 0 <= i < p for i in seats
    ):
        raise ArgumentError(f"seats: expected seats from 0 to {p - 1}, got {list(seats)!r}")
    title = "solo" if p == 1 else f"{p} players"
    lines = [f"Umbrella, {title}, plate level {s['plate_level']}"]
    for i in range(p) if seats is None else sorted(set(int(k) for k in seats)):
        lines.append("")
        lines.extend(_seat_block(s, i, seat, cs) if layout == "grid" else _seat_facts(s, i, seat, cs))
    lines.append("")
    lines.extend(_table_block(s) if layout == "grid" else _table_facts(s))
    return "\n".join(line.rstrip() for line in lines) + "\n"


def drawn_state(state: Any, components: ComponentSet | None, over: bool) -> tuple[dict[str, Any], ComponentSet]:
    """(the validated state dict as drawn, its component set) of what a renderer is given: a
    state dict (``components``, default the built-in set) or a game object with a
    ``to_dict()`` method (``SingleGame``, ``ReferenceGame``), whose ``config.components`` are
    used unless ``components`` is given; ``over`` as :func:`shown_over`."""
    if not isinstance(state, Mapping) and callable(getattr(state, "to_dict", None)):
        if components is None:
            game_components = getattr(getattr(state, "config", None), "components", None)
            components = game_components if isinstance(game_components, ComponentSet) else None
        state = state.to_dict()
    cs = default_components() if components is None else components
    return shown_over(validate_state_dict(state, components=cs), over), cs


def shown_over(s: dict[str, Any], over: bool) -> dict[str, Any]:
    """A validated state dict as the renderers show it: with ``over``, a game ended outside
    the rules (terminated, phase ``game_over``; the dict is not changed)."""
    if not isinstance(over, (bool, np.bool_)):
        raise ArgumentTypeError(f"over must be a bool, got {over!r}")
    return {**s, "phase": "game_over", "terminated": True} if over else s


def actor_of(s: Mapping[str, Any]) -> int | None:
    """Seat whose decision it is in a state dict (facts.actor: the receiver in ``cover``,
    else the current player); None once the game is over."""
    if s["phase"] == "game_over":
        return None
    return F.actor(s["current_player"], PHASES.index(s["phase"]), s["num_players"])


# --------------------------------------------------------------------------- pieces
def _zone_text(letters: str) -> str:
    return f"{letters or '-'} ({len(letters)})"


def _rule(left: str, right: str = "") -> str:
    fill = max(3, _WIDTH - len(left) - len(right) - (2 if right else 1))
    return f"{left} {'=' * fill} {right}"


def _seat_tags(s: Mapping[str, Any], i: int, you: int | None) -> list[str]:
    tags = []
    if you == i:
        tags.append("you")
    if s["phase"] != "game_over" and s["current_player"] == i:
        tags.append("current player")
    if actor_of(s) == i:
        tags.append(f"to act: {s['phase']}")
    if s["num_players"] > 1 and s["end_triggered_by"] == i:
        tags.append("triggered the end")
    return tags


def _seat_block(s: Mapping[str, Any], i: int, you: int | None, cs: ComponentSet) -> list[str]:
    tags = [f"[{tag}]" for tag in _seat_tags(s, i, you)]
    name = "board" if s["num_players"] == 1 else f"seat {i}"
    header = _rule("=== " + "  ".join([name, *tags]), f"score {s['scores'][i]} ===")
    return [header, *_stage_lines(s, i), "", *_slot_lines(s, i, cs), "", *_plate_lines(s, i, cs)]


def _seat_facts(s: Mapping[str, Any], i: int, you: int | None, cs: ComponentSet) -> list[str]:
    """A seat's block in the ``lines`` layout: the facts of :func:`_seat_block`, one per line."""
    p = s["num_players"]
    tags = _seat_tags(s, i, you)
    name = "Board" if p == 1 else f"Seat {i}"
    out = [f"{name}{' (' + ', '.join(tags) + ')' if tags else ''}. Score {s['scores'][i]}."]
    out += [f"Stage row {r}: {' '.join(row)}." for r, row in enumerate(s["stages"][i])]
    for side, (label, letters) in zip(("Top", "Bottom", "Left", "Right"), _seat_zone_labels(s, i)):
        out.append(f"{side}{', ' + label if label else ''}: {_spoken_zone(letters)}.")
    if p == 1:
        out.append(f"Discard: {_spoken_zone(s['zones']['discard'])}.")
    stage = "".join(s["stages"][i])
    for k, stack in enumerate(s["slots"][i]):
        if not stack:
            out.append(f"Slot {k}, rotation {90 * k}: empty.")
            continue
        top, hidden = stack[-1], len(stack) - 1
        cells, complete = _figure(stage, top, k, cs)
        where = " ".join(f"r{c // STAGE_SIZE}c{c % STAGE_SIZE}" for c in cells)
        done = f"; complete: {complete}" if complete else ""
        out.append(
            f"Slot {k}, rotation {90 * k}: tile {top['tile']} {top['face']}, height {len(stack)}"
            f"{f', {hidden} hidden' if hidden else ''}; figure cells {where}{done}."
        )
    plate = cs.plates[s["plate_level"]]
    tokens = s["plates"][i]
    for space, (need, token) in enumerate(zip(plate.spaces, tokens)):
        out.append(f"Plate space {space}, takes {need}: {'free' if token is None else 'token ' + token}.")
    occupied = [t is not None for t in tokens]
    if plate.groups is not None:
        groups = "; ".join(f"spaces {', '.join(map(str, g))}, +{v}" for g, v in plate.groups)
        out.append(f"Plate groups: {groups}.")
    else:
        assert plate.adjacency_bonus is not None
        a, b, c = plate.adjacency_bonus
        out.append(f"Plate bonus for adjacent tokens: 2 adjacent, +{a}; 3 adjacent, +{b}; 4 or more, +{c}.")
    if plate.powers:
        out.append("Plate powers: " + "; ".join(f"{n}, spaces {x} and {y}" for n, (x, y) in plate.powers.items()) + ".")
    out.append(f"Plate tokens {sum(occupied)}, bonus now +{plate.bonus(occupied)}.")
    return out


def _spoken_zone(letters: str) -> str:
    return f"{' '.join(letters)} ({len(letters)})" if letters else "empty"


def _table_facts(s: Mapping[str, Any]) -> list[str]:
    """The table in the ``lines`` layout (the facts of :func:`_table_block`)."""
    lines = [line.strip().replace("   ", "; ").replace(": -", ": none") + "." for line in _table_block(s)[1:-1]]
    lines.append("Scores: " + "; ".join(f"{name}, {v}" for name, v in zip(_seat_names(s), s["scores"])) + ".")
    return [line[:1].upper() + line[1:] for line in lines]


def _seat_zone_labels(s: Mapping[str, Any], i: int) -> list[tuple[str, str]]:
    """(label, umbrellas) of seat ``i``'s top, bottom, left and right zones; solo zones other
    than the personal one go unnamed (their side names them already)."""
    zones = s["zones"]
    p = s["num_players"]
    keys = F.zone_keys(p)
    out = []
    for zone in F.seat_zones(p, i):
        key, index = keys[zone]
        letters = zones[key] if index is None else zones[key][index]
        out.append(("" if p == 1 and key != "personal" else f"side {index}" if key == "side" else key, letters))
    return out


def _stage_lines(s: Mapping[str, Any], i: int) -> list[str]:
    zones = s["zones"]
    p = s["num_players"]
    top, bottom, left, right = _seat_zone_labels(s, i)
    left_col = [f"left: {left[0]}".rstrip(), _zone_text(left[1])]
    right_col = [f"right: {right[0]}".rstrip(), _zone_text(right[1])]
    width = max(16, *(len(t) + 2 for t in left_col))
    pad = " " * (width + 1)
    border = pad + "+" + "-" * (2 * STAGE_SIZE + 1) + "+"
    out = [
        f"{pad}top: {(top[0] + ' ').lstrip()}{_zone_text(top[1])}",
        pad + "  " + " ".join(str(c) for c in range(STAGE_SIZE)),
        border,
    ]
    for r, row in enumerate(s["stages"][i]):
        lt = left_col[r] if r < len(left_col) else ""
        rt = right_col[r] if r < len(right_col) else ""
        out.append(f"  {lt}".ljust(width) + f"{r}| {' '.join(row)} |  {rt}")
    out += [border, f"{pad}bottom: {bottom[0]} {_zone_text(bottom[1])}"]
    if p == 1:
        out.append(f"{pad}discard: {_zone_text(zones['discard'])}")
    return out


def _figure(stage: str, top: Mapping[str, Any], k: int, cs: ComponentSet) -> tuple[list[int], str | None]:
    """(the stage cells of the visible figure ``top`` in slot ``k``, sorted; the colour that
    completes it on ``stage``, or None)."""
    cells = sorted(rotate_cells(cs.face_cells(top["tile"], _FACE_INDEX[top["face"]]), k))
    colours = {stage[c] for c in cells}
    return cells, colours.pop() if len(colours) == 1 else None


def _seat_names(s: Mapping[str, Any]) -> list[str]:
    return ["board"] if s["num_players"] == 1 else [f"seat {i}" for i in range(s["num_players"])]


def _slot_lines(s: Mapping[str, Any], i: int, cs: ComponentSet) -> list[str]:
    stage = "".join(s["stages"][i])
    columns = []
    for k, stack in enumerate(s["slots"][i]):
        col = [f"slot {k} (rot {90 * k})"]
        if not stack:
            col += ["empty", "height 0"]
            columns.append(col)
            continue
        top = stack[-1]
        hidden = len(stack) - 1
        col.append(f"tile {top['tile']} {top['face']}")
        col.append(f"height {len(stack)}" + (f", {hidden} hidden" if hidden else ""))
        cells, complete = _figure(stage, top, k, cs)
        for r in range(STAGE_SIZE):
            col.append("".join("X" if r * STAGE_SIZE + c in cells else "." for c in range(STAGE_SIZE)))
        if complete:
            col.append(f"complete: {complete}")
        columns.append(col)
    height = max(len(c) for c in columns)
    return ["  " + "".join((c[j] if j < len(c) else "").ljust(_SLOT_WIDTH) for c in columns) for j in range(height)]


def _plate_lines(s: Mapping[str, Any], i: int, cs: ComponentSet) -> list[str]:
    plate = cs.plates[s["plate_level"]]
    tokens = s["plates"][i]
    occupied = [t is not None for t in tokens]
    label = f"  plate (level {s['plate_level']}):"
    out = []
    for r in range(PLATE_ROWS):
        cells = []
        for c in range(PLATE_COLS):
            space = r * PLATE_COLS + c
            cells.append(f"{space} {plate.spaces[space] + ':' + (tokens[space] or '.'):<6}")
        out.append((label if r == 0 else "").ljust(len(label) + 2) + " ".join(cells).rstrip())
    indent = " " * (len(label) + 2)
    out += [indent + rule for rule in _plate_rules(plate)]
    out.append(f"{indent}tokens {sum(occupied)}, bonus now +{plate.bonus(occupied)}")
    return out


def _plate_rules(plate: Any) -> list[str]:
    """The plate's bonus rule and its powers, as text."""
    if plate.groups is not None:
        out = ["groups " + ", ".join("{" + ",".join(map(str, g)) + f"}} +{v}" for g, v in plate.groups)]
    else:
        assert plate.adjacency_bonus is not None
        a, b, c = plate.adjacency_bonus
        out = [f"adjacent tokens: 2 -> +{a}, 3 -> +{b}, 4+ -> +{c}"]
    if plate.powers:
        out.append("powers " + ", ".join(f"{n} {x}-{y}" for n, (x, y) in plate.powers.items()))
    return out


def _table_block(s: Mapping[str, Any]) -> list[str]:
    p = s["num_players"]
    actor = actor_of(s)
    status = "terminated" if s["terminated"] else "truncated" if s["truncated"] else "in play"
    passing = s["passing"]
    transit = "-" if passing is None else f"tile {passing['tile']} {passing['face']}"
    lines = [
        _rule("=== table"),
        f"  supply: {s['supply']}   reserve used: {s['reserve_used']}   turns played: {s['turn']} / {s['max_turns']}"
        f"   status: {status}",
        f"  phase: {s['phase']}   current player: {s['current_player']}   to act: {'-' if actor is None else actor}",
    ]
    if p == 1:
        slide = s["last_slide"]
        last = "-" if slide is None else f"from {slide['side']}, ejected {slide['colour']}"
        lines.append(f"  tile in transit: {transit}   last slide: {last}")
    else:
        trigger = s["end_triggered_by"]
        lines.append(
            f"  end triggered by: {'-' if trigger is None else trigger}   tile in transit: {transit}   "
            f"extra turn: {'yes' if s['extra_turn'] else 'no'}"
        )
    lines.append("  scores: " + ", ".join(f"{name} {v}" for name, v in zip(_seat_names(s), s["scores"])))
    return lines
