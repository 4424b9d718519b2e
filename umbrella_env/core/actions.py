"""The flat discrete action space: one id per decision of docs/rules.md §9.

Every configuration (1-4 players, levels 1-4) uses the same ``NUM_ACTIONS`` ids; the
legal-action mask of a state holds exactly the legal ids of its current decision phase.

Id ranges (``python -m umbrella_env.tools.gendocs`` writes the full table to
``docs/actions.md``)::

    phase        first  count  layout
    slide            0     64  side(4) x colour(4) x line(4)
    fallback        64    576  zone(9) x colour(4) x side(4) x line(4)
    validate       640     40  slot(4) x space(10)
    swap_stage     680     25  adjacent pair(24), then pass
    swap_zone      705    257  cell(16) x side(4) x colour(4), then pass
    give_face      962      2  white, black
    cover          964      4  slot(4)

Sides are the sides of the acting player's stage, in the owner's view::

                 top (central zone)
               col0 col1 col2 col3
              +----+----+----+----+
    left row0 |  0 |  1 |  2 |  3 | row0 right
    (side i)  +----+----+----+----+      (side i-1)
         row1 |  4 |  5 |  6 |  7 | row1
              +----+----+----+----+
         row2 |  8 |  9 | 10 | 11 | row2
              +----+----+----+----+
         row3 | 12 | 13 | 14 | 15 | row3
              +----+----+----+----+
               col0 col1 col2 col3
                bottom (personal zone)

A slide "from top into col c" enters at row 0 of column c and ejects row 3 towards the
bottom zone; "from left into row r" enters at column 0 and ejects column 3 to the right
zone, and so on.  In solo the four zones are top, bottom (personal), left and right.

Fallback zones are *egocentric*, numbered from the acting seat ``a``::

    0      central
    1 + k  side zone of seat (a + k) % P   (between seat a+k and seat a+k+1), k = 0..3
    5 + k  personal zone of seat (a + k) % P,                                 k = 0..3

so ``side+0`` is the actor's own left zone and ``side+(P-1)`` its right zone.  Ids
naming a zone that does not exist at the current player count are never legal.
"""

from __future__ import annotations

import re

import numpy as np

from umbrella_env.core.components import COLOURS
from umbrella_env.core.errors import ActionError

# --------------------------------------------------------------------------- geometry names
SIDES: tuple[str, ...] = ("top", "bottom", "left", "right")
TOP, BOTTOM, LEFT, RIGHT = range(4)
#: The side an ejected umbrella leaves by, for each entry side.
OPPOSITE: tuple[int, ...] = (BOTTOM, TOP, RIGHT, LEFT)
FACES: tuple[str, ...] = ("white", "black")
WHITE, BLACK = 0, 1

MAX_ZONES = 9  # central + 4 side + 4 personal, egocentric (see module doc)
ZONE_NAMES: tuple[str, ...] = (
    ("central",) + tuple(f"side+{k}" for k in range(4)) + tuple(f"personal+{k}" for k in range(4))
)

# --------------------------------------------------------------------------- phases
PHASES: tuple[str, ...] = (
    "slide",
    "fallback",
    "validate",
    "swap_stage",
    "swap_zone",
    "give_face",
    "cover",
    "game_over",
)
(
    PHASE_SLIDE,
    PHASE_FALLBACK,
    PHASE_VALIDATE,
    PHASE_SWAP_STAGE,
    PHASE_SWAP_ZONE,
    PHASE_GIVE_FACE,
    PHASE_COVER,
    PHASE_GAME_OVER,
) = range(len(PHASES))

# --------------------------------------------------------------------------- id ranges
NUM_SLIDE = 4 * 4 * 4
NUM_FALLBACK = MAX_ZONES * 4 * 4 * 4
NUM_VALIDATE = 4 * 10
NUM_SWAP_STAGE = 24 + 1
NUM_SWAP_ZONE = 16 * 4 * 4 + 1
NUM_GIVE_FACE = 2
NUM_COVER = 4

SLIDE_START = 0
FALLBACK_START = SLIDE_START + NUM_SLIDE
VALIDATE_START = FALLBACK_START + NUM_FALLBACK
SWAP_STAGE_START = VALIDATE_START + NUM_VALIDATE
SWAP_STAGE_PASS = SWAP_STAGE_START + 24
SWAP_ZONE_START = SWAP_STAGE_START + NUM_SWAP_STAGE
SWAP_ZONE_PASS = SWAP_ZONE_START + 256
GIVE_FACE_START = SWAP_ZONE_START + NUM_SWAP_ZONE
COVER_START = GIVE_FACE_START + NUM_GIVE_FACE
NUM_ACTIONS = COVER_START + NUM_COVER

#: (phase, first id, count) for every decision phase, in id order.
PHASE_RANGES: tuple[tuple[int, int, int], ...] = (
    (PHASE_SLIDE, SLIDE_START, NUM_SLIDE),
    (PHASE_FALLBACK, FALLBACK_START, NUM_FALLBACK),
    (PHASE_VALIDATE, VALIDATE_START, NUM_VALIDATE),
    (PHASE_SWAP_STAGE, SWAP_STAGE_START, NUM_SWAP_STAGE),
    (PHASE_SWAP_ZONE, SWAP_ZONE_START, NUM_SWAP_ZONE),
    (PHASE_GIVE_FACE, GIVE_FACE_START, NUM_GIVE_FACE),
    (PHASE_COVER, COVER_START, NUM_COVER),
)

#: Phase of every action id.
ACTION_PHASE = np.empty(NUM_ACTIONS, dtype=np.int8)
for _phase, _start, _count in PHASE_RANGES:
    ACTION_PHASE[_start : _start + _count] = _phase

# Adjacent stage-cell pairs for the stage swap: 12 horizontal, then 12 vertical.
#   horizontal (r, c)-(r, c+1): r = 0..3, c = 0..2   -> pairs 0..11
#   vertical   (r, c)-(r+1, c): r = 0..2, c = 0..3   -> pairs 12..23
ADJACENT_PAIRS: tuple[tuple[int, int], ...] = tuple(
    (r * 4 + c, r * 4 + c + 1) for r in range(4) for c in range(3)
) + tuple((r * 4 + c, (r + 1) * 4 + c) for r in range(3) for c in range(4))


# --------------------------------------------------------------------------- encoders
def slide_action(side: int, colour: int, line: int) -> int:
    return SLIDE_START + side * 16 + colour * 4 + line


def fallback_action(zone: int, colour: int, side: int, line: int) -> int:
    return FALLBACK_START + zone * 64 + colour * 16 + side * 4 + line


def validate_action(slot: int, space: int) -> int:
    return VALIDATE_START + slot * 10 + space


def swap_stage_action(pair: int | None) -> int:
    return SWAP_STAGE_PASS if pair is None else SWAP_STAGE_START + pair


def swap_zone_action(cell: int | None, side: int = 0, colour: int = 0) -> int:
    return SWAP_ZONE_PASS if cell is None else SWAP_ZONE_START + cell * 16 + side * 4 + colour


def give_face_action(face: int) -> int:
    return GIVE_FACE_START + face


def cover_action(slot: int) -> int:
    return COVER_START + slot


def decode(action: int) -> tuple[int, tuple[int, ...]]:
    """Action id -> (phase, fields).  Fields per phase:

    slide (side, colour, line); fallback (zone, colour, side, line); validate (slot, space);
    swap_stage (pair,) or () for pass; swap_zone (cell, side, colour) or () for pass;
    give_face (face,); cover (slot,).
    """
    a = check_action_id(action)
    if a < FALLBACK_START:
        side, rest = divmod(a - SLIDE_START, 16)
        return PHASE_SLIDE, (side, *divmod(rest, 4))
    if a < VALIDATE_START:
        zone, rest = divmod(a - FALLBACK_START, 64)
        colour, rest = divmod(rest, 16)
        return PHASE_FALLBACK, (zone, colour, *divmod(rest, 4))
    if a < SWAP_STAGE_START:
        return PHASE_VALIDATE, divmod(a - VALIDATE_START, 10)
    if a < SWAP_ZONE_START:
        return PHASE_SWAP_STAGE, () if a == SWAP_STAGE_PASS else (a - SWAP_STAGE_START,)
    if a < GIVE_FACE_START:
        if a == SWAP_ZONE_PASS:
            return PHASE_SWAP_ZONE, ()
        cell, rest = divmod(a - SWAP_ZONE_START, 16)
        return PHASE_SWAP_ZONE, (cell, *divmod(rest, 4))
    if a < COVER_START:
        return PHASE_GIVE_FACE, (a - GIVE_FACE_START,)
    return PHASE_COVER, (a - COVER_START,)


def check_action_id(action: object) -> int:
    """Return ``action`` as an int, or raise :class:`ActionError` if it is not an id (an
    int, a NumPy integer, or a 0-d integer array, NumPy's or another library's such as a
    torch tensor: what ``np.asarray`` reads, as the batched steps take theirs)."""
    if not isinstance(action, (int, np.generic, np.ndarray)) and hasattr(action, "__array__"):
        try:
            action = np.asarray(action)
        except Exception:  # an array of another library that NumPy cannot read (a GPU tensor): refused below
            pass
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        action = action[()]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        got = (
            f"a {action.dtype} array of shape {action.shape}"
            if isinstance(action, np.ndarray)
            else f"{action!r} of type {type(action).__name__}"
        )
        raise ActionError(f"action must be an integer id in [0, {NUM_ACTIONS}), got {got}")
    a = int(action)
    if not 0 <= a < NUM_ACTIONS:
        raise ActionError(f"action id {a} is out of range: expected an integer in [0, {NUM_ACTIONS})")
    return a


# --------------------------------------------------------------------------- strings
def _cell_name(cell: int) -> str:
    return f"r{cell // 4}c{cell % 4}"


def _line_name(side: int, line: int) -> str:
    return f"col{line}" if side in (TOP, BOTTOM) else f"row{line}"


def _build_strings() -> tuple[str, ...]:
    out = []
    for a in range(NUM_ACTIONS):
        phase, f = decode(a)
        if phase == PHASE_SLIDE:
            side, colour, line = f
            out.append(f"slide {COLOURS[colour]} from {SIDES[side]} {_line_name(side, line)}")
        elif phase == PHASE_FALLBACK:
            zone, colour, side, line = f
            out.append(f"fallback {COLOURS[colour]} of {ZONE_NAMES[zone]} from {SIDES[side]} {_line_name(side, line)}")
        elif phase == PHASE_VALIDATE:
            out.append(f"validate slot{f[0]} space{f[1]}")
        elif phase == PHASE_SWAP_STAGE:
            if not f:
                out.append("swap-stage pass")
            else:
                x, y = ADJACENT_PAIRS[f[0]]
                out.append(f"swap-stage {_cell_name(x)} {_cell_name(y)}")
        elif phase == PHASE_SWAP_ZONE:
            if not f:
                out.append("swap-zone pass")
            else:
                cell, side, colour = f
                out.append(f"swap-zone {_cell_name(cell)} with {COLOURS[colour]} of {SIDES[side]}")
        elif phase == PHASE_GIVE_FACE:
            out.append(f"give {FACES[f[0]]}")
        else:
            out.append(f"cover slot{f[0]}")
    return tuple(out)


ACTION_STRINGS: tuple[str, ...] = _build_strings()
_STRING_TO_ACTION = {s: a for a, s in enumerate(ACTION_STRINGS)}
assert len(_STRING_TO_ACTION) == NUM_ACTIONS


def action_to_string(action: int) -> str:
    """Readable name of an action id, e.g. ``"slide B from top col2"``."""
    return ACTION_STRINGS[check_action_id(action)]


def string_to_action(text: str) -> int:
    """Inverse of :func:`action_to_string` (case and extra spaces ignored)."""
    if not isinstance(text, str):
        raise ActionError(f"expected an action string, got {type(text).__name__}")
    key = re.sub(r"\s+", " ", text.strip())
    key = " ".join(w.upper() if len(w) == 1 else w.lower() for w in key.split(" "))
    try:
        return _STRING_TO_ACTION[key]
    except KeyError:
        raise ActionError(
            f"unknown action {text!r}; examples of valid actions: 'slide B from top col2', "
            "'fallback R of personal+1 from left row0', 'validate slot0 space3', "
            "'swap-stage r0c0 r0c1', 'swap-stage pass', 'swap-zone r1c2 with Y of bottom', "
            "'swap-zone pass', 'give white', 'cover slot2'"
        ) from None


def phase_of_action(action: int) -> str:
    """Name of the decision phase an action id belongs to."""
    return PHASES[int(ACTION_PHASE[check_action_id(action)])]
