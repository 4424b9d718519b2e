"""An RGB picture of a whole game, drawn from its state dict with NumPy only.

:func:`render_rgb` shows what :func:`~umbrella_env.core.render.render_text` shows, as
shapes: one panel per seat (two columns) and a table panel.  A seat panel::

    +---------------------------------------------------------------------+
    | SEAT 0  TO ACT                                            SCORE -4  |  header
    |            [ top zone:  o o o o   ]      0     1     2     3        |  slot numbers
    |  [left ]  +--------------------+  [ri-]  [::]  [::]  [  ]  [  ]     |  visible faces,
    |  [zone ]  |  4 x 4 stage,      |  [ght]  ||    ||                   |  height ticks
    |  [ o o ]  |  coloured squares  |  [ o ]  PLATE 1                    |
    |  [ o o ]  +--------------------+  [ o ]  [B][G][R][Y][B]            |  2 x 5 plate
    |            [ bottom (personal)  ]        [G][Y][B][R][G]            |
    |            [ discard (solo)     ]        TOKENS 0  BONUS +0         |
    +---------------------------------------------------------------------+

* zones are trays of dots, one dot per umbrella, colours in ``B G R Y`` order, each dot
  with its colour's letter while the dots are large enough (up to 33 umbrellas in a tray;
  past that the dots shrink and show colour only); top is the central zone, bottom the
  seat's personal zone, left side zone ``i``, right side zone ``i-1`` (solo: top,
  personal, left, right and the discard under them);
* a slot shows its visible tile in the slot's rotation (dark cells for a black face,
  white cells for a white face, on a neutral ground), framed in a colour when that figure
  is complete on the owner's stage; one tick per tile in the stack.  Tiles under the top
  are never drawn, only counted;
* a free plate space is tinted and outlined in the colour(s) it accepts (split in two
  for ``G/Y``); a white space ``Wk`` is light grey with its slot number; a token is a disc
  of the figure's colour.  Light bridges join the spaces of a bonus group (levels 1-2),
  dark bars mark the pairs of a power (level 4);
* the seat that must act (the receiver in ``cover``) has a thick :data:`ACTOR_FRAME`.

The table panel lists the supply (one tick per token), reserve used, turn, phase, the end
trigger, the tile in transit (unrotated) and, in solo, the last slide.  It sits in the free
grid cell at 1 and 3 players, and as a strip under the boards at 2 and 4.  The picture's
size depends only on the number of players (:func:`image_regions`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from umbrella_env.core import facts as F
from umbrella_env.core.components import (
    COLOURS,
    NUM_SLOTS,
    PLATE_COLS,
    PLATE_ROWS,
    STAGE_SIZE,
    ComponentSet,
    parse_space,
    plate_neighbours,
    rotate_cells,
)
from umbrella_env.core.errors import ConfigError
from umbrella_env.core.render import actor_of, drawn_state
from umbrella_env.core.serialize import zone_counts

__all__ = [
    "ACTOR_FRAME",
    "UMBRELLA_RGB",
    "image_regions",
    "render_rgb",
]

Image = NDArray[np.uint8]
Canvas = NDArray[np.uint8]  # [H, W] palette indices
RGB = tuple[int, int, int]
Box = tuple[int, int, int, int]  # (y0, y1, x0, x1): the region is img[y0:y1, x0:x1]

# --------------------------------------------------------------------------- palette
#: Umbrella colours, index 0..3 = B G R Y.
UMBRELLA_RGB: tuple[RGB, ...] = ((46, 110, 204), (52, 160, 82), (212, 60, 56), (240, 190, 36))
#: Frame around the panel of the seat that must act.
ACTOR_FRAME: RGB = (132, 62, 196)

# Drawing writes palette indices ("inks") into a 2-D canvas, turned into RGB once at the
# end: filling a rectangle with one byte is several times faster than with an RGB triple.
_RGB: list[RGB] = []


def _ink(rgb: RGB) -> int:
    _RGB.append(rgb)
    return len(_RGB) - 1


def _tint(rgb: RGB, amount: float = 0.3) -> RGB:
    r, g, b = (round(amount * v + (1 - amount) * 255) for v in rgb)
    return (r, g, b)


_UMBRELLA = tuple(_ink(c) for c in UMBRELLA_RGB)
_TINTS = tuple(_ink(_tint(c)) for c in UMBRELLA_RGB)
_ACTOR = _ink(ACTOR_FRAME)
_TABLE = _ink((226, 222, 213))
_PANEL = _ink((250, 248, 243))
_PANEL_EDGE = _ink((200, 194, 184))
_TRAY = _ink((236, 232, 223))
_TRAY_EDGE = _ink((212, 206, 195))
_STAGE_BG = _ink((72, 68, 64))
_TEXT = _ink((58, 54, 50))
_MUTED = _ink((150, 143, 134))
_TILE_BG = _ink((172, 166, 156))
_TILE_EDGE = _ink((128, 122, 114))
_TILE_FACE = (_ink((255, 255, 255)), _ink((34, 34, 40)))  # white face, black face
#: The letter drawn on each stage cell, so that no colour is told by its hue alone (colour
#: blindness, greyscale prints; WCAG 1.4.1): white on blue and red, dark on green and yellow,
#: the inks of higher contrast.
_CELL_LETTER = (_TILE_FACE[0], _TEXT, _TILE_FACE[0], _TEXT)
_TICK = _ink((96, 90, 84))
_WHITE_SPACE = _ink((228, 228, 228))
_WHITE_EDGE = _ink((168, 168, 168))
_GROUP_BRIDGE = _ink((204, 197, 186))
_TOKEN_CHIP = _ink((176, 132, 64))
_RESERVE_CHIP = _ink((120, 120, 128))
_PALETTE = np.array(_RGB, dtype=np.uint8)
_FACE_INDEX = {"white": 0, "black": 1}

# --------------------------------------------------------------------------- geometry (pixels)
_SCALE = 2  # text: 3 x 5 glyphs drawn 2x
_GLYPH_H, _ADVANCE = 5 * _SCALE, 4 * _SCALE
_MACRO_BLOCK = 16  # the picture's sides are multiples of this (video encoders)
_MARGIN = 8  # around and between panels
_PAD = 10  # inside a panel
_HEADER = 24  # header band of a seat panel
_CELL, _CELL_GAP = 24, 2
_STAGE = STAGE_SIZE * _CELL + (STAGE_SIZE + 1) * _CELL_GAP  # 106
_TRAY_T, _TRAY_GAP = 34, 5  # zone tray thickness, gap to the stage
_BLOCK = _TRAY_T + _TRAY_GAP + _STAGE + _TRAY_GAP + _TRAY_T  # stage with its four trays
_MINI, _MINI_GAP, _SLOT_FRAME = 7, 1, 2  # a slot's 4 x 4 mini grid
_MINI_GRID = STAGE_SIZE * _MINI + (STAGE_SIZE + 1) * _MINI_GAP  # 33
_SLOT_BOX = _MINI_GRID + 2 * _SLOT_FRAME  # 37
_SLOT_PITCH = 44
_TICK_W, _TICK_H, _TICK_PITCH, _TICK_ROW = 2, 6, 4, 8  # 8 ticks per row
_SPACE, _SPACE_GAP = 30, 4  # plate spaces
_RIGHT_GAP = 14
_RIGHT_W = NUM_SLOTS * _SLOT_PITCH - (_SLOT_PITCH - _SLOT_BOX)
_PANEL_W = _PAD + _BLOCK + _RIGHT_GAP + _RIGHT_W + _PAD
_TABLE_STRIP_H = 3 * _GLYPH_H + 2 * 8 + 2 * _PAD + 2  # the table under the boards at 2 and 4 players
_PASSING_W = len("PASSING") * _ADVANCE - _SCALE + 8 + _SLOT_BOX  # label + tile in transit
_MAX_TICKS = 30  # supply ticks drawn at most (22 tokens at 4 players)
_DOT_PITCHES = (11, 9, 7, 5, 4, 3)  # umbrella dots shrink until a zone's umbrellas fit

# Right column, y relative to the panel top.
_SLOT_NUM_Y = _HEADER
_SLOT_Y = _SLOT_NUM_Y + 13
_TICKS_Y = _SLOT_Y + _SLOT_BOX + 4
_PLATE_LABEL_Y = _TICKS_Y + 2 * _TICK_ROW + 10
_PLATE_Y = _PLATE_LABEL_Y + 14
_PLATE_NOTE_Y = _PLATE_Y + PLATE_ROWS * _SPACE + (PLATE_ROWS - 1) * _SPACE_GAP + 8

# --------------------------------------------------------------------------- 3 x 5 font
# Upper-case letters, digits and a few signs; drawn at scale 2 (6 x 10 px, 8 px advance).
_GLYPH_ROWS = {
    "A": ".#.|#.#|###|#.#|#.#",
    "B": "##.|#.#|##.|#.#|##.",
    "C": ".##|#..|#..|#..|.##",
    "D": "##.|#.#|#.#|#.#|##.",
    "E": "###|#..|##.|#..|###",
    "F": "###|#..|##.|#..|#..",
    "G": ".##|#..|#.#|#.#|.##",
    "H": "#.#|#.#|###|#.#|#.#",
    "I": "###|.#.|.#.|.#.|###",
    "J": "..#|..#|..#|#.#|.#.",
    "K": "#.#|#.#|##.|#.#|#.#",
    "L": "#..|#..|#..|#..|###",
    "M": "#.#|###|###|#.#|#.#",
    "N": "##.|#.#|#.#|#.#|#.#",
    "O": ".#.|#.#|#.#|#.#|.#.",
    "P": "##.|#.#|##.|#..|#..",
    "Q": ".#.|#.#|#.#|##.|.##",
    "R": "##.|#.#|##.|#.#|#.#",
    "S": ".##|#..|.#.|..#|##.",
    "T": "###|.#.|.#.|.#.|.#.",
    "U": "#.#|#.#|#.#|#.#|###",
    "V": "#.#|#.#|#.#|#.#|.#.",
    "W": "#.#|#.#|###|###|#.#",
    "X": "#.#|#.#|.#.|#.#|#.#",
    "Y": "#.#|#.#|.#.|.#.|.#.",
    "Z": "###|..#|.#.|#..|###",
    "0": "###|#.#|#.#|#.#|###",
    "1": ".#.|##.|.#.|.#.|###",
    "2": "##.|..#|.#.|#..|###",
    "3": "##.|..#|.#.|..#|##.",
    "4": "#.#|#.#|###|..#|..#",
    "5": "###|#..|##.|..#|##.",
    "6": ".##|#..|###|#.#|###",
    "7": "###|..#|.#.|.#.|.#.",
    "8": "###|#.#|###|#.#|###",
    "9": "###|#.#|###|..#|##.",
    "-": "...|...|###|...|...",
    "+": "...|.#.|###|.#.|...",
    "/": "..#|..#|.#.|#..|#..",
    ":": "...|.#.|...|.#.|...",
    ".": "...|...|...|...|.#.",
    " ": "...|...|...|...|...",
}
_GLYPHS: dict[str, NDArray[np.bool_]] = {
    ch: np.kron([[c == "#" for c in row] for row in rows.split("|")], np.ones((_SCALE, _SCALE))).astype(bool)
    for ch, rows in _GLYPH_ROWS.items()
}
#: The colour letters at 1x (3 x 5 pixels), drawn inside a zone's dots.
_DOT_GLYPHS = tuple(_GLYPHS[letter][::_SCALE, ::_SCALE] for letter in COLOURS)
_DOT_LETTER_MIN = 7  # the smallest dot that holds its letter (pitches 11 and 9)


def _text_width(text: str) -> int:
    return len(text) * _ADVANCE - _SCALE if text else 0


# --------------------------------------------------------------------------- primitives (clipped)
def _fill(img: Canvas, x: int, y: int, w: int, h: int, ink: int) -> None:
    y0, y1 = max(y, 0), min(y + h, img.shape[0])
    x0, x1 = max(x, 0), min(x + w, img.shape[1])
    if y0 < y1 and x0 < x1:
        img[y0:y1, x0:x1] = ink


def _frame(img: Canvas, x: int, y: int, w: int, h: int, t: int, ink: int) -> None:
    _fill(img, x, y, w, t, ink)
    _fill(img, x, y + h - t, w, t, ink)
    _fill(img, x, y, t, h, ink)
    _fill(img, x + w - t, y, t, h, ink)


def _box(img: Canvas, x: int, y: int, w: int, h: int, fill: int, edge: int, t: int = 1) -> None:
    _fill(img, x, y, w, h, edge)
    _fill(img, x + t, y + t, w - 2 * t, h - 2 * t, fill)


def _stamp(img: Canvas, x: int, y: int, mask: NDArray[np.bool_], ink: int) -> None:
    h, w = mask.shape
    y0, y1 = max(y, 0), min(y + h, img.shape[0])
    x0, x1 = max(x, 0), min(x + w, img.shape[1])
    if y0 < y1 and x0 < x1:
        img[y0:y1, x0:x1][mask[y0 - y : y1 - y, x0 - x : x1 - x]] = ink


@cache
def _disc(size: int) -> NDArray[np.bool_]:
    c = (size - 1) / 2
    yy, xx = np.mgrid[:size, :size]
    mask = (yy - c) ** 2 + (xx - c) ** 2 <= (size / 2) ** 2 + 0.25
    mask.setflags(write=False)
    return mask


def _text(img: Canvas, x: int, y: int, text: str, ink: int = _TEXT) -> int:
    """Draw upper-cased ``text`` with its top-left at (x, y); return the x after it."""
    for ch in text.upper():
        _stamp(img, x, y, _GLYPHS.get(ch, _GLYPHS[" "]), ink)
        x += _ADVANCE
    return x


# --------------------------------------------------------------------------- layout
@dataclass(frozen=True)
class _Layout:
    height: int
    width: int
    panel_h: int
    seats: tuple[tuple[int, int], ...]  # (x, y) of each seat panel
    table: tuple[int, int, int, int]  # x, y, w, h


@cache
def _layout(num_players: int) -> _Layout:
    solo = num_players == 1
    panel_h = _HEADER + _BLOCK + (_TRAY_GAP + _TRAY_T if solo else 0) + _PAD
    cols = 2
    grid_rows = 1 if num_players <= 2 else 2
    step_x, step_y = _PANEL_W + _MARGIN, panel_h + _MARGIN
    seats = tuple((_MARGIN + (i % cols) * step_x, _MARGIN + (i // cols) * step_y) for i in range(num_players))
    width = _MARGIN + cols * step_x
    if num_players in (1, 3):  # the table takes the free grid cell
        table = (_MARGIN + (num_players % cols) * step_x, _MARGIN + (num_players // cols) * step_y, _PANEL_W, panel_h)
        height = _MARGIN + grid_rows * step_y
    else:
        table = (_MARGIN, _MARGIN + grid_rows * step_y, width - 2 * _MARGIN, _TABLE_STRIP_H)
        height = table[1] + _TABLE_STRIP_H + _MARGIN
    # Both sides a multiple of 16 (the background grows): video encoders take such frames
    # as they are (an odd side gave 4:4:4 H.264, which browsers do not play).
    return _Layout(
        -(-height // _MACRO_BLOCK) * _MACRO_BLOCK, -(-width // _MACRO_BLOCK) * _MACRO_BLOCK, panel_h, seats, table
    )


def _stage_origin(panel: tuple[int, int]) -> tuple[int, int]:
    return panel[0] + _PAD + _TRAY_T + _TRAY_GAP, panel[1] + _HEADER + _TRAY_T + _TRAY_GAP


def _plate_origin(panel: tuple[int, int]) -> tuple[int, int]:
    return panel[0] + _PAD + _BLOCK + _RIGHT_GAP, panel[1] + _PLATE_Y


def image_regions(num_players: int) -> dict[str, Box]:
    """Named regions of the picture for ``num_players``: ``"seat{i}"`` (a seat's panel),
    ``"seat{i}.stage"``, ``"seat{i}.slots"`` (faces and height ticks), ``"seat{i}.slot{k}"``
    (the framed face of slot ``k``), ``"seat{i}.plate"`` and ``"table"``; each as
    ``(y0, y1, x0, x1)``, i.e. the region is ``img[y0:y1, x0:x1]``.  ``"image"`` is
    ``(0, height, 0, width)``.
    """
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) or not 1 <= num_players <= 4:
        raise ConfigError(f"num_players: expected an int in 1..4, got {num_players!r}")
    lay = _layout(int(num_players))
    out: dict[str, Box] = {"image": (0, lay.height, 0, lay.width)}
    for i, panel in enumerate(lay.seats):
        px, py = panel
        out[f"seat{i}"] = (py, py + lay.panel_h, px, px + _PANEL_W)
        sx, sy = _stage_origin(panel)
        out[f"seat{i}.stage"] = (sy, sy + _STAGE, sx, sx + _STAGE)
        rx = px + _PAD + _BLOCK + _RIGHT_GAP
        out[f"seat{i}.slots"] = (py + _SLOT_Y, py + _TICKS_Y + 2 * _TICK_ROW, rx, rx + _RIGHT_W)
        for k in range(NUM_SLOTS):
            x = rx + k * _SLOT_PITCH
            out[f"seat{i}.slot{k}"] = (py + _SLOT_Y, py + _SLOT_Y + _SLOT_BOX, x, x + _SLOT_BOX)
        qx, qy = _plate_origin(panel)
        out[f"seat{i}.plate"] = (
            qy,
            qy + PLATE_ROWS * (_SPACE + _SPACE_GAP) - _SPACE_GAP,
            qx,
            qx + PLATE_COLS * (_SPACE + _SPACE_GAP) - _SPACE_GAP,
        )
    tx, ty, tw, th = lay.table
    out["table"] = (ty, ty + th, tx, tx + tw)
    return out


# --------------------------------------------------------------------------- entry point
def render_rgb(d: Any, components: ComponentSet | None = None, *, over: bool = False) -> Image:
    """Draw a state dict (validated first; a bad dict raises ``StateError``) or a game
    (``SingleGame``, ``ReferenceGame``: :func:`~umbrella_env.core.render.drawn_state`) as an
    RGB image.

    Returns a ``uint8`` array of shape ``(H, W, 3)``; the size depends only on the number of
    players (about 800 px wide; see :func:`image_regions`).  Nothing is hidden except the
    tiles under the top of each stack, which are only counted.  ``over``: drawn as a game
    over although no rule ended it (:func:`umbrella_env.core.render.shown_over`).
    """
    s, cs = drawn_state(d, components, over)
    lay = _layout(s["num_players"])
    img = np.full((lay.height, lay.width), _TABLE, dtype=np.uint8)
    actor = actor_of(s)
    for i, panel in enumerate(lay.seats):
        _seat_panel(img, panel, lay.panel_h, s, i, actor, cs)
    _table_panel(img, lay.table, s, actor, cs)
    return np.take(_PALETTE, img, axis=0)


# --------------------------------------------------------------------------- seat panel
def _seat_panel(
    img: Canvas,
    panel: tuple[int, int],
    panel_h: int,
    s: Mapping[str, Any],
    i: int,
    actor: int | None,
    cs: ComponentSet,
) -> None:
    px, py = panel
    _box(img, px, py, _PANEL_W, panel_h, _PANEL, _PANEL_EDGE)
    if actor == i:
        _frame(img, px, py, _PANEL_W, panel_h, 4, _ACTOR)
    _header(img, px, py, s, i, actor)
    _stage_and_zones(img, panel, s, i)
    _slots(img, panel, s, i, cs)
    _plate(img, panel, s, i, cs)


def _header(img: Canvas, px: int, py: int, s: Mapping[str, Any], i: int, actor: int | None) -> None:
    p = s["num_players"]
    x = _text(img, px + _PAD, py + 9, "SOLO" if p == 1 else f"SEAT {i}") + _ADVANCE
    if actor == i:
        x = _text(img, x, py + 9, "TO ACT", _ACTOR) + _ADVANCE
    if s["phase"] == "cover" and p > 1 and s["current_player"] == i:
        x = _text(img, x, py + 9, "GIVES", _MUTED) + _ADVANCE
    if p > 1 and s["end_triggered_by"] == i:
        _text(img, x, py + 9, "ENDED", _MUTED)
    score = f"SCORE {s['scores'][i]}"
    _text(img, px + _PANEL_W - _PAD - _text_width(score), py + 9, score)


def _seat_zones(s: Mapping[str, Any], i: int) -> tuple[str, str, str, str]:
    """The seat's top, bottom, left and right zones (facts.seat_zone_strings)."""
    return F.seat_zone_strings(s, i)


def _stage_and_zones(img: Canvas, panel: tuple[int, int], s: Mapping[str, Any], i: int) -> None:
    sx, sy = _stage_origin(panel)
    _fill(img, sx, sy, _STAGE, _STAGE, _STAGE_BG)
    for r, row in enumerate(s["stages"][i]):
        for c, letter in enumerate(row):
            x = sx + _CELL_GAP + c * (_CELL + _CELL_GAP)
            y = sy + _CELL_GAP + r * (_CELL + _CELL_GAP)
            colour = COLOURS.index(letter)
            _fill(img, x, y, _CELL, _CELL, _UMBRELLA[colour])
            tx, ty = x + (_CELL - _text_width(letter)) // 2, y + (_CELL - _GLYPH_H) // 2
            _text(img, tx, ty, letter, _CELL_LETTER[colour])
    top, bottom, left, right = _seat_zones(s, i)
    far = _TRAY_T + _TRAY_GAP
    _zone(img, sx, sy - far, _STAGE, _TRAY_T, top, vertical=False)
    _zone(img, sx, sy + _STAGE + _TRAY_GAP, _STAGE, _TRAY_T, bottom, vertical=False)
    _zone(img, sx - far, sy, _TRAY_T, _STAGE, left, vertical=True)
    _zone(img, sx + _STAGE + _TRAY_GAP, sy, _TRAY_T, _STAGE, right, vertical=True)
    if s["num_players"] == 1:
        y = sy + _STAGE + _TRAY_GAP + _TRAY_T + _TRAY_GAP
        _zone(img, sx, y, _STAGE, _TRAY_T, s["zones"]["discard"], vertical=False)
        label_x = panel[0] + _PAD
        _text(img, label_x, y + 4, "DIS-", _MUTED)
        _text(img, label_x, y + 18, "CARD", _MUTED)


def _zone(img: Canvas, x: int, y: int, w: int, h: int, letters: str, *, vertical: bool) -> None:
    """A tray with one dot per umbrella, filled along the tray's long side."""
    _box(img, x, y, w, h, _TRAY, _TRAY_EDGE)
    colours = [c for c, n in enumerate(zone_counts(letters)) for _ in range(n)]
    if not colours:
        return
    inner_w, inner_h = w - 4, h - 4
    for pitch in _DOT_PITCHES:
        cols, rows = inner_w // pitch, inner_h // pitch
        if cols * rows >= len(colours):
            break
    colours = colours[: cols * rows]  # only if even the smallest dots overflow
    size = max(pitch - 2, 2)
    dot = _disc(size)
    ox = x + 2 + (inner_w - cols * pitch) // 2 + 1
    oy = y + 2 + (inner_h - rows * pitch) // 2 + 1
    for n, colour in enumerate(colours):
        if vertical:
            c, r = divmod(n, rows)
        else:
            r, c = divmod(n, cols)
        dx, dy = ox + c * pitch, oy + r * pitch
        _stamp(img, dx, dy, dot, _UMBRELLA[colour])
        if size >= _DOT_LETTER_MIN:  # its letter too, as on the stage (not told by hue alone)
            _stamp(img, dx + (size - 3) // 2, dy + (size - 5) // 2, _DOT_GLYPHS[colour], _CELL_LETTER[colour])


def _figure(img: Canvas, x: int, y: int, cells: tuple[int, ...], face: int, edge: int) -> None:
    """A tile face as a framed 4 x 4 mini grid (cells already rotated)."""
    _box(img, x, y, _SLOT_BOX, _SLOT_BOX, _TILE_BG, edge, _SLOT_FRAME)
    for cell in cells:
        r, c = divmod(cell, STAGE_SIZE)
        cx = x + _SLOT_FRAME + _MINI_GAP + c * (_MINI + _MINI_GAP)
        cy = y + _SLOT_FRAME + _MINI_GAP + r * (_MINI + _MINI_GAP)
        _fill(img, cx, cy, _MINI, _MINI, _TILE_FACE[face])


def _slots(img: Canvas, panel: tuple[int, int], s: Mapping[str, Any], i: int, cs: ComponentSet) -> None:
    px, py = panel
    stage = "".join(s["stages"][i])
    for k, stack in enumerate(s["slots"][i]):
        x = px + _PAD + _BLOCK + _RIGHT_GAP + k * _SLOT_PITCH
        _text(img, x + (_SLOT_BOX - _text_width(str(k))) // 2, py + _SLOT_NUM_Y, str(k), _MUTED)
        if not stack:
            _box(img, x, py + _SLOT_Y, _SLOT_BOX, _SLOT_BOX, _TRAY, _TRAY_EDGE)
            continue
        top = stack[-1]
        face = _FACE_INDEX[top["face"]]
        cells = rotate_cells(cs.face_cells(top["tile"], face), k)
        colours = {stage[c] for c in cells}
        edge = _UMBRELLA[COLOURS.index(colours.pop())] if len(colours) == 1 else _TILE_EDGE
        _figure(img, x, py + _SLOT_Y, cells, face, edge)
        for n in range(len(stack)):
            r, c = divmod(n, _TICK_ROW)
            _fill(img, x + 2 + c * _TICK_PITCH, py + _TICKS_Y + r * _TICK_ROW, _TICK_W, _TICK_H, _TICK)


def _space_xy(qx: int, qy: int, space: int) -> tuple[int, int]:
    r, c = divmod(space, PLATE_COLS)
    return qx + c * (_SPACE + _SPACE_GAP), qy + r * (_SPACE + _SPACE_GAP)


def _bridge(img: Canvas, qx: int, qy: int, a: int, b: int, across: int, ink: int) -> None:
    """A bar ``across`` px wide over the gap between adjacent spaces ``a`` < ``b``."""
    ax, ay = _space_xy(qx, qy, min(a, b))
    if abs(a - b) == 1:  # same row
        _fill(img, ax + _SPACE - 2, ay + (_SPACE - across) // 2, _SPACE_GAP + 4, across, ink)
    else:
        _fill(img, ax + (_SPACE - across) // 2, ay + _SPACE - 2, across, _SPACE_GAP + 4, ink)


def _space_letters(x: int, colours: list[int]) -> list[tuple[int, int]]:
    """(centre x, colour) of the letters of a plate space at ``x`` that accepts ``colours``
    (one: the middle; two: the middle of each half, as the halves are drawn)."""
    if len(colours) == 1:
        return [(x + _SPACE // 2, colours[0])]
    half = _SPACE // 2
    return [(x + half // 2, colours[0]), (x + half + (_SPACE - half) // 2, colours[1])]


def _plate(img: Canvas, panel: tuple[int, int], s: Mapping[str, Any], i: int, cs: ComponentSet) -> None:
    plate = cs.plates[s["plate_level"]]
    qx, qy = _plate_origin(panel)
    _text(img, qx, panel[1] + _PLATE_LABEL_Y, f"PLATE {s['plate_level']}", _MUTED)
    if plate.groups is not None:
        for spaces, _value in plate.groups:
            for a in spaces:
                for b in plate_neighbours(a):
                    if a < b and b in spaces:
                        _bridge(img, qx, qy, a, b, _SPACE - 10, _GROUP_BRIDGE)
    tokens = s["plates"][i]
    token_disc, rim = _disc(_SPACE - 8), _disc(_SPACE - 6)
    for space, text in enumerate(plate.spaces):
        x, y = _space_xy(qx, qy, space)
        accepted, white_slot = parse_space(text)
        if white_slot is not None:
            _box(img, x, y, _SPACE, _SPACE, _WHITE_SPACE, _WHITE_EDGE)
            label = str(white_slot)
            _text(img, x + (_SPACE - _text_width(label)) // 2, y + (_SPACE - _GLYPH_H) // 2, label, _WHITE_EDGE)
        else:
            first, *rest = sorted(accepted)
            _box(img, x, y, _SPACE, _SPACE, _TINTS[first], _UMBRELLA[first], 2)
            if rest:  # two colours: the right half shows the second
                half = _SPACE // 2
                _box(img, x + half, y, _SPACE - half, _SPACE, _TINTS[rest[0]], _UMBRELLA[rest[0]], 2)
                _fill(img, x + half, y + 2, 2, _SPACE - 4, _TINTS[rest[0]])
            for centre, colour in _space_letters(x, sorted(accepted)):  # the colours by letter too
                letter = COLOURS[colour]
                _text(img, centre - _text_width(letter) // 2, y + (_SPACE - _GLYPH_H) // 2, letter, _TEXT)
        token = tokens[space]
        if token is not None:
            colour = COLOURS.index(token)
            _stamp(img, x + 3, y + 3, rim, _TEXT)
            _stamp(img, x + 4, y + 4, token_disc, _UMBRELLA[colour])
            tx = x + (_SPACE - _text_width(token)) // 2
            _text(img, tx, y + (_SPACE - _GLYPH_H) // 2, token, _CELL_LETTER[colour])
    for a, b in plate.powers.values():
        _bridge(img, qx, qy, a, b, 10, _TEXT)
    occupied = [t is not None for t in tokens]
    note = f"TOKENS {sum(occupied)}  BONUS +{plate.bonus(occupied)}"
    _text(img, qx, panel[1] + _PLATE_NOTE_Y, note, _MUTED)


# --------------------------------------------------------------------------- table panel
# An item of the table is (width, height, draw(img, x, y)); items flow left to right.
_Item = tuple[int, int, Callable[[Canvas, int, int], object]]


def _text_item(text: str, ink: int = _TEXT) -> _Item:
    return _text_width(text), _GLYPH_H, lambda img, x, y: _text(img, x, y, text, ink)


def _ticks_item(label: str, n: int, ink: int) -> _Item:
    """A label and one tick per token (at most ``_MAX_TICKS``; the label has the count)."""
    lw = _text_width(label)
    n = min(n, _MAX_TICKS)
    width = lw + (6 + 5 * n - 2 if n else 0)

    def draw(img: Canvas, x: int, y: int) -> None:
        _text(img, x, y, label)
        for t in range(n):
            _fill(img, x + lw + 6 + 5 * t, y - 1, 3, _GLYPH_H + 2, ink)

    return width, _GLYPH_H, draw


def _passing_block(img: Canvas, right: int, y: int, tile: Mapping[str, Any], cs: ComponentSet) -> None:
    """The tile in transit, unrotated, with its label, ending at x = ``right``."""
    face = _FACE_INDEX[tile["face"]]
    x = right - _PASSING_W
    _text(img, x, y + (_SLOT_BOX - _GLYPH_H) // 2, "PASSING")
    _figure(img, right - _SLOT_BOX, y, cs.face_cells(tile["tile"], face), face, _TILE_EDGE)


def _dot_item(label: str, colour: str) -> _Item:
    lw = _text_width(label)

    def draw(img: Canvas, x: int, y: int) -> None:
        _text(img, x, y, label)
        _stamp(img, x + lw + 6, y, _disc(_GLYPH_H), _UMBRELLA[COLOURS.index(colour)])

    return lw + 6 + _GLYPH_H, _GLYPH_H, draw


def table_entries(s: Mapping[str, Any], actor: int | None) -> list[tuple[str, str, Any, str]]:
    """What the table panel shows, for both renderers (RGB here, SVG in ``core/svg.py``):
    ``(kind, text, value, key)`` with kind ``"ticks"`` (value: (count, ink)), ``"text"``
    (value: ink) or ``"dot"`` (value: umbrella colour)."""
    p = s["num_players"]
    out: list[tuple[str, str, Any, str]] = [("ticks", f"Supply {s['supply']}", (s["supply"], _TOKEN_CHIP), "supply")]
    if s["reserve_used"]:
        out.append(("ticks", f"Reserve {s['reserve_used']}", (s["reserve_used"], _RESERVE_CHIP), "reserve"))
    out.append(("text", f"Turn {s['turn']}/{s['max_turns']}", _TEXT, "turn"))
    if s["terminated"] or s["truncated"]:
        out.append(("text", "Game over" if s["terminated"] else "Truncated", _ACTOR, "end"))
    else:
        out.append(("text", "Phase " + s["phase"].replace("_", " "), _ACTOR, "phase"))
        if p > 1:
            out.append(("text", f"To act: seat {actor}", _ACTOR, "actor"))
    if p > 1 and s["end_triggered_by"] is not None:
        out.append(("text", f"End by seat {s['end_triggered_by']}", _TEXT, "end_by"))
    if s["extra_turn"]:
        out.append(("text", "Extra turn", _TEXT, "extra"))
    if s["last_slide"] is not None:
        out.append(("dot", f"Last slide {s['last_slide']['side']} out", s["last_slide"]["colour"], "last_slide"))
    return out


def _table_items(s: Mapping[str, Any], actor: int | None) -> list[_Item]:
    items = []
    for kind, text, value, _key in table_entries(s, actor):
        label = text.upper()  # the bitmap font has capitals only
        if kind == "ticks":
            count, ink = value
            items.append(_ticks_item(label, count, ink))
        elif kind == "dot":
            items.append(_dot_item(label, value))
        else:
            items.append(_text_item(label, value))
    return items


def _table_panel(
    img: Canvas, table: tuple[int, int, int, int], s: Mapping[str, Any], actor: int | None, cs: ComponentSet
) -> None:
    tx, ty, tw, th = table
    _box(img, tx, ty, tw, th, _PANEL, _PANEL_EDGE)
    x0, right = tx + _PAD, tx + tw - _PAD - _PASSING_W - _PAD  # the tile in transit sits at the right
    if s["passing"] is not None:
        strip = th == _TABLE_STRIP_H
        y = ty + (th - _SLOT_BOX) // 2 if strip else ty + _PAD
        _passing_block(img, tx + tw - _PAD, y, s["passing"], cs)
    x, y, line_h = x0, ty + _PAD + 1, 0
    for width, height, draw in _table_items(s, actor):
        if x > x0 and x + width > right:
            x, y, line_h = x0, y + line_h + 8, 0
        draw(img, x, y)
        x += width + 20
        line_h = max(line_h, height)
