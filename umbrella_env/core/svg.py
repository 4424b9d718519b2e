"""An SVG picture of a whole game, drawn from its state dict: the vector twin of image.py.

:func:`state_to_svg` draws what :func:`~umbrella_env.core.image.render_rgb` draws, at the
same coordinates (the layout, sizes and colours are imported from
:mod:`umbrella_env.core.image`, so the two pictures cannot drift apart): one panel per
seat and a table panel.  A seat panel shows

* a header: the seat (``Solo`` in solo), ``To act`` for the seat that must decide (the
  receiver in ``cover``; its panel also has a thick purple frame), ``Gives`` for the
  passer in ``cover``, ``Ended`` for the seat that triggered the end, and the score;
* the 4 x 4 stage, one square per umbrella in its colour, with its four waiting zones
  around it as trays of dots, one dot per umbrella in ``B G R Y`` order, with its colour's
  letter while the dots are large enough (as image.py): top the central zone, bottom the
  seat's personal zone, left side zone ``i``, right side zone ``i-1`` (solo: top,
  personal, left, right, and the discard tray under them);
* the four figure slots: the visible tile face in the slot's rotation (white or black
  cells), framed in the colour of the figure when it is complete on the stage; one tick
  per tile in the stack (tiles under the top are never drawn, only counted);
* the score plate: each space tinted in the colour(s) it accepts (``Wk`` spaces grey with
  their slot number), tokens as discs of their colour, bonus groups joined by light
  bridges, powers (level 4) as dark bars, and the token count and bonus under it.

The table panel has the supply (one tick per token), the reserve used, the turn, the phase
(or ``Game over`` / ``Truncated``), who acts, the end trigger, an extra turn, the solo
last slide and the tile in transit (unrotated).

The output is meant to be committed and diffed: it is deterministic (one element per
line, attributes in a fixed order, coordinates rounded to 0.01), scalable (a ``viewBox``
and the pixel size of the RGB picture as ``width`` / ``height``), and self-contained (no
scripts, images, stylesheets or web fonts; text asks for a system monospace font).
Elements carry ids and classes that say what they are, e.g. ``seat0-stage`` (16
``rect.cell``), ``seat0-zone-top`` (``circle.umbrella``), ``seat0-slot2``,
``seat0-token7`` (the token on plate space 7), ``table``; the root's ``<title>``
summarises the position in words.

Example::

    from umbrella_env.core.svg import state_to_svg
    svg_text = state_to_svg(env.unwrapped.get_state())  # or a SingleGame / ReferenceGame, or any state dict
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from umbrella_env.core.components import (
    COLOURS,
    STAGE_SIZE,
    ComponentSet,
    parse_space,
    plate_neighbours,
    rotate_cells,
)
from umbrella_env.core.errors import ArgumentError
from umbrella_env.core.image import (
    _ACTOR,
    _ADVANCE,
    _BLOCK,
    _CELL,
    _CELL_GAP,
    _CELL_LETTER,
    _DOT_LETTER_MIN,
    _DOT_PITCHES,
    _FACE_INDEX,
    _GLYPH_H,
    _GROUP_BRIDGE,
    _MAX_TICKS,
    _MINI,
    _MINI_GAP,
    _MUTED,
    _PAD,
    _PALETTE,
    _PANEL,
    _PANEL_EDGE,
    _PANEL_W,
    _PASSING_W,
    _PLATE_LABEL_Y,
    _PLATE_NOTE_Y,
    _RIGHT_GAP,
    _SLOT_BOX,
    _SLOT_FRAME,
    _SLOT_NUM_Y,
    _SLOT_PITCH,
    _SLOT_Y,
    _SPACE,
    _SPACE_GAP,
    _STAGE,
    _STAGE_BG,
    _TABLE,
    _TABLE_STRIP_H,
    _TEXT,
    _TICK,
    _TICK_H,
    _TICK_PITCH,
    _TICK_ROW,
    _TICK_W,
    _TICKS_Y,
    _TILE_BG,
    _TILE_EDGE,
    _TILE_FACE,
    _TINTS,
    _TRAY,
    _TRAY_EDGE,
    _TRAY_GAP,
    _TRAY_T,
    _UMBRELLA,
    _WHITE_EDGE,
    _WHITE_SPACE,
    _layout,
    _plate_origin,
    _seat_zones,
    _space_letters,
    _space_xy,
    _stage_origin,
    _text_width,
    table_entries,
)
from umbrella_env.core.render import actor_of, drawn_state
from umbrella_env.core.serialize import zone_counts

__all__ = ["state_to_svg"]

#: Font of every text: system monospace fonts only (no web fonts).  At 13 px their
#: advance is about 8 px and their capitals about 10 px, the size of image.py's glyphs.
FONT_FAMILY = "DejaVu Sans Mono, Menlo, Consolas, monospace"
FONT_SIZE = 13
_DOT_FONT_SIZE = 6.5  # capitals about 5 px high, in a zone's dots
_ZONE_NAMES = ("top", "bottom", "left", "right")


def _num(v: float) -> str:
    """A coordinate as short, stable text: integers without a point, others to 0.01."""
    r = round(float(v), 2)
    if r == int(r):
        return str(int(r))
    return f"{r:.2f}".rstrip("0")


def _colour(ink: int) -> str:
    r, g, b = (int(v) for v in _PALETTE[ink])
    return f"#{r:02x}{g:02x}{b:02x}"


class _Svg:
    """Collects SVG elements, one per line, indented by nesting depth."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    @staticmethod
    def _attrs(attrs: Mapping[str, Any]) -> str:
        out = []
        for key, value in attrs.items():
            if value is None:
                continue
            name = "class" if key == "cls" else key.replace("_", "-")
            text = _num(value) if isinstance(value, (int, float)) else str(value)
            out.append(f" {name}={quoteattr(text)}")
        return "".join(out)

    def el(self, tag: str, text: str | None = None, **attrs: Any) -> None:
        head = f"{'  ' * self.depth}<{tag}{self._attrs(attrs)}"
        self.lines.append(f"{head}/>" if text is None else f"{head}>{escape(text)}</{tag}>")

    def open(self, tag: str, **attrs: Any) -> None:
        self.lines.append(f"{'  ' * self.depth}<{tag}{self._attrs(attrs)}>")
        self.depth += 1

    def close(self, tag: str) -> None:
        self.depth -= 1
        self.lines.append(f"{'  ' * self.depth}</{tag}>")

    # ---- shapes, in image.py's terms (top-left corner, width, height, palette inks)
    def fill(self, x: float, y: float, w: float, h: float, ink: int, **attrs: Any) -> None:
        self.el("rect", x=x, y=y, width=w, height=h, fill=_colour(ink), **attrs)

    def box(self, x: float, y: float, w: float, h: float, fill: int, edge: int, t: float = 1, **attrs: Any) -> None:
        """A filled rectangle with an edge ``t`` wide inside its bounds (as image.py's ``_box``)."""
        self.el(
            "rect",
            x=x + t / 2,
            y=y + t / 2,
            width=w - t,
            height=h - t,
            fill=_colour(fill),
            stroke=_colour(edge),
            stroke_width=t,
            **attrs,
        )

    def disc(self, cx: float, cy: float, r: float, ink: int, **attrs: Any) -> None:
        self.el("circle", cx=cx, cy=cy, r=r, fill=_colour(ink), **attrs)

    def text(self, x: float, y: float, text: str, ink: int = _TEXT, anchor: str | None = None) -> float:
        """``text`` with its capitals' top at ``y`` (like image.py's glyphs); return the x after it."""
        self.el("text", text, x=x, y=y + _GLYPH_H, fill=_colour(ink), text_anchor=anchor)
        return x + len(text) * _ADVANCE


# --------------------------------------------------------------------------- entry point
def state_to_svg(
    state: Any, *, components: ComponentSet | None = None, description: str | None = None, over: bool = False
) -> str:
    """Draw a game as SVG text (see the module doc for what is shown and how).

    ``state`` is a state dict (docs/state.md; any valid form, validated first, so a bad
    dict raises :class:`~umbrella_env.core.errors.StateError`) or a game object with a
    ``to_dict()`` method (``SingleGame``, ``ReferenceGame``),
    whose ``config.components`` are used unless ``components`` is given.  The same
    position always gives the same text, whatever form its dict came in.
    ``description``, when given, becomes the picture's ``<desc>`` (e.g. how it was made).
    ``over`` draws the game over although no rule ended it, as the envs draw a game an
    illegal action ended (an env's dict of such a game, with its ``illegal_action`` entry,
    is not a core dict: draw the position before that action with ``over=True``).

    Returns the text of a standalone ``<svg>`` document (no XML declaration, ends with a
    newline) whose ``viewBox`` is the size of :func:`~umbrella_env.core.image.render_rgb`'s
    picture for the same number of players.
    """
    if description is not None and (
        not isinstance(description, str) or any(ord(c) < 32 and c not in "\t\n\r" for c in description)
    ):
        raise ArgumentError(
            f"description: expected text without control characters (XML cannot hold them), got {description!r}"
        )
    s, cs = drawn_state(state, components, over)
    lay = _layout(s["num_players"])
    actor = actor_of(s)
    svg = _Svg()
    svg.open(
        "svg",
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {lay.width} {lay.height}",
        width=lay.width,
        height=lay.height,
        font_family=FONT_FAMILY,
        font_size=FONT_SIZE,
        role="img",
    )
    svg.el("title", _summary(s, actor))
    if description is not None:
        svg.el("desc", description)  # checked before anything is drawn (state_to_svg's first lines)
    svg.fill(0, 0, lay.width, lay.height, _TABLE, cls="background")
    for i, panel in enumerate(lay.seats):
        _seat_panel(svg, panel, lay.panel_h, s, i, actor, cs)
    _table_panel(svg, lay.table, s, actor, cs)
    svg.close("svg")
    return "\n".join(svg.lines) + "\n"


def _summary(s: Mapping[str, Any], actor: int | None) -> str:
    p = s["num_players"]
    players = "solo" if p == 1 else f"{p} players"
    head = f"Umbrella, {players}, plate level {s['plate_level']}, turn {s['turn']} of {s['max_turns']}"
    if actor is None:
        status = "game over" if s["terminated"] else "truncated"
    elif p == 1:
        status = f"phase {s['phase']}"
    else:
        status = f"phase {s['phase']}, seat {actor} to act"
    names = ["score"] if p == 1 else [f"seat {i}" for i in range(p)]
    scores = ", ".join(f"{name} {v}" for name, v in zip(names, s["scores"]))
    return f"{head}: {status}; {scores}"


# --------------------------------------------------------------------------- seat panel
def _seat_panel(
    svg: _Svg,
    panel: tuple[int, int],
    panel_h: int,
    s: Mapping[str, Any],
    i: int,
    actor: int | None,
    cs: ComponentSet,
) -> None:
    px, py = panel
    svg.open("g", id=f"seat{i}", cls="seat")
    svg.box(px, py, _PANEL_W, panel_h, _PANEL, _PANEL_EDGE)
    if actor == i:
        t = 4
        svg.el(
            "rect",
            x=px + t / 2,
            y=py + t / 2,
            width=_PANEL_W - t,
            height=panel_h - t,
            fill="none",
            stroke=_colour(_ACTOR),
            stroke_width=t,
            cls="actor-frame",
        )
    _header(svg, px, py, s, i, actor)
    _stage_and_zones(svg, panel, s, i)
    _slots(svg, panel, s, i, cs)
    _plate(svg, panel, s, i, cs)
    svg.close("g")


def _header(svg: _Svg, px: int, py: int, s: Mapping[str, Any], i: int, actor: int | None) -> None:
    p = s["num_players"]
    y = py + 9
    x = svg.text(px + _PAD, y, "Solo" if p == 1 else f"Seat {i}") + _ADVANCE
    if actor == i:
        x = svg.text(x, y, "To act", _ACTOR) + _ADVANCE
    if s["phase"] == "cover" and p > 1 and s["current_player"] == i:
        x = svg.text(x, y, "Gives", _MUTED) + _ADVANCE
    if p > 1 and s["end_triggered_by"] == i:
        svg.text(x, y, "Ended", _MUTED)
    svg.text(px + _PANEL_W - _PAD, y, f"Score {s['scores'][i]}", anchor="end")


def _stage_and_zones(svg: _Svg, panel: tuple[int, int], s: Mapping[str, Any], i: int) -> None:
    sx, sy = _stage_origin(panel)
    svg.open("g", id=f"seat{i}-stage", cls="stage")
    svg.fill(sx, sy, _STAGE, _STAGE, _STAGE_BG)
    for r, row in enumerate(s["stages"][i]):
        for c, letter in enumerate(row):
            x = sx + _CELL_GAP + c * (_CELL + _CELL_GAP)
            y = sy + _CELL_GAP + r * (_CELL + _CELL_GAP)
            svg.el(
                "rect",
                x=x,
                y=y,
                width=_CELL,
                height=_CELL,
                rx=3,
                fill=_colour(_UMBRELLA[COLOURS.index(letter)]),
                cls="cell",
            )
            # the colour's letter too (image.py's _CELL_LETTER): not told by hue alone
            svg.text(x + _CELL / 2, y + (_CELL - _GLYPH_H) / 2, letter, _CELL_LETTER[COLOURS.index(letter)], "middle")
    svg.close("g")
    far = _TRAY_T + _TRAY_GAP
    trays = (
        (sx, sy - far, _STAGE, _TRAY_T, False),
        (sx, sy + _STAGE + _TRAY_GAP, _STAGE, _TRAY_T, False),
        (sx - far, sy, _TRAY_T, _STAGE, True),
        (sx + _STAGE + _TRAY_GAP, sy, _TRAY_T, _STAGE, True),
    )
    for name, letters, (x, y, w, h, vertical) in zip(_ZONE_NAMES, _seat_zones(s, i), trays):
        _zone(svg, f"seat{i}-zone-{name}", x, y, w, h, letters, vertical=vertical)
    if s["num_players"] == 1:
        y = sy + _STAGE + _TRAY_GAP + _TRAY_T + _TRAY_GAP
        _zone(svg, f"seat{i}-zone-discard", sx, y, _STAGE, _TRAY_T, s["zones"]["discard"], vertical=False)
        svg.text(panel[0] + _PAD, y + 4, "Dis-", _MUTED)
        svg.text(panel[0] + _PAD, y + 18, "card", _MUTED)


def _zone(svg: _Svg, gid: str, x: int, y: int, w: int, h: int, letters: str, *, vertical: bool) -> None:
    """A tray with one dot per umbrella, filled along the tray's long side (as image.py).

    Unlike the raster picture, every umbrella is drawn even if the dots overflow the tray.
    """
    svg.open("g", id=gid, cls="zone")
    svg.box(x, y, w, h, _TRAY, _TRAY_EDGE)
    colours = [c for c, n in enumerate(zone_counts(letters)) for _ in range(n)]
    inner_w, inner_h = w - 4, h - 4
    pitch = _DOT_PITCHES[-1]
    for pitch in _DOT_PITCHES:
        if (inner_w // pitch) * (inner_h // pitch) >= len(colours):
            break
    cols, rows = max(inner_w // pitch, 1), max(inner_h // pitch, 1)
    d = max(pitch - 2, 2)
    ox = x + 2 + (inner_w - cols * pitch) // 2 + 1
    oy = y + 2 + (inner_h - rows * pitch) // 2 + 1
    for n, colour in enumerate(colours):
        if vertical:
            c, r = divmod(n, rows)
        else:
            r, c = divmod(n, cols)
        cx, cy = ox + c * pitch + d / 2, oy + r * pitch + d / 2
        svg.disc(cx, cy, d / 2, _UMBRELLA[colour], cls="umbrella")
        if d >= _DOT_LETTER_MIN:  # its letter, capitals 5 px high (image.py's 1x glyphs)
            svg.el(
                "text",
                COLOURS[colour],
                x=cx,
                y=cy + 2.5,
                fill=_colour(_CELL_LETTER[colour]),
                text_anchor="middle",
                font_size=_DOT_FONT_SIZE,
            )
    svg.close("g")


def _figure(svg: _Svg, x: float, y: float, cells: tuple[int, ...], face: int, edge: int) -> None:
    """A tile face as a framed 4 x 4 mini grid (cells already rotated)."""
    svg.box(x, y, _SLOT_BOX, _SLOT_BOX, _TILE_BG, edge, _SLOT_FRAME, cls="tile")
    for cell in cells:
        r, c = divmod(cell, STAGE_SIZE)
        cx = x + _SLOT_FRAME + _MINI_GAP + c * (_MINI + _MINI_GAP)
        cy = y + _SLOT_FRAME + _MINI_GAP + r * (_MINI + _MINI_GAP)
        svg.fill(cx, cy, _MINI, _MINI, _TILE_FACE[face], cls="figure-cell")


def _slots(svg: _Svg, panel: tuple[int, int], s: Mapping[str, Any], i: int, cs: ComponentSet) -> None:
    px, py = panel
    stage = "".join(s["stages"][i])
    for k, stack in enumerate(s["slots"][i]):
        x = px + _PAD + _BLOCK + _RIGHT_GAP + k * _SLOT_PITCH
        svg.open("g", id=f"seat{i}-slot{k}", cls="slot")
        svg.text(x + _SLOT_BOX / 2, py + _SLOT_NUM_Y, str(k), _MUTED, anchor="middle")
        if not stack:
            svg.box(x, py + _SLOT_Y, _SLOT_BOX, _SLOT_BOX, _TRAY, _TRAY_EDGE, cls="empty")
            svg.close("g")
            continue
        top = stack[-1]
        face = _FACE_INDEX[top["face"]]
        cells = rotate_cells(cs.face_cells(top["tile"], face), k)
        colours = {stage[c] for c in cells}
        edge = _UMBRELLA[COLOURS.index(colours.pop())] if len(colours) == 1 else _TILE_EDGE
        _figure(svg, x, py + _SLOT_Y, cells, face, edge)
        for n in range(len(stack)):
            r, c = divmod(n, _TICK_ROW)
            svg.fill(x + 2 + c * _TICK_PITCH, py + _TICKS_Y + r * _TICK_ROW, _TICK_W, _TICK_H, _TICK, cls="tick")
        svg.close("g")


def _bridge(svg: _Svg, qx: int, qy: int, a: int, b: int, across: int, ink: int, **attrs: Any) -> None:
    """A bar ``across`` px wide over the gap between adjacent spaces ``a`` and ``b``."""
    ax, ay = _space_xy(qx, qy, min(a, b))
    if abs(a - b) == 1:  # same row
        svg.fill(ax + _SPACE - 2, ay + (_SPACE - across) // 2, _SPACE_GAP + 4, across, ink, **attrs)
    else:
        svg.fill(ax + (_SPACE - across) // 2, ay + _SPACE - 2, across, _SPACE_GAP + 4, ink, **attrs)


def _plate(svg: _Svg, panel: tuple[int, int], s: Mapping[str, Any], i: int, cs: ComponentSet) -> None:
    plate = cs.plates[s["plate_level"]]
    qx, qy = _plate_origin(panel)
    svg.open("g", id=f"seat{i}-plate", cls="plate")
    svg.text(qx, panel[1] + _PLATE_LABEL_Y, f"Plate {s['plate_level']}", _MUTED)
    if plate.groups is not None:
        for spaces, _value in plate.groups:
            for a in spaces:
                for b in plate_neighbours(a):
                    if a < b and b in spaces:
                        _bridge(svg, qx, qy, a, b, _SPACE - 10, _GROUP_BRIDGE, cls="group")
    tokens = s["plates"][i]
    for space, text in enumerate(plate.spaces):
        x, y = _space_xy(qx, qy, space)
        accepted, white_slot = parse_space(text)
        if white_slot is not None:
            svg.box(x, y, _SPACE, _SPACE, _WHITE_SPACE, _WHITE_EDGE, cls="space")
            svg.text(x + _SPACE / 2, y + (_SPACE - _GLYPH_H) // 2, str(white_slot), _WHITE_EDGE, anchor="middle")
        else:
            first, *rest = sorted(accepted)
            svg.box(x, y, _SPACE, _SPACE, _TINTS[first], _UMBRELLA[first], 2, cls="space")
            if rest:  # two colours: the right half shows the second
                half = _SPACE // 2
                svg.box(x + half, y, _SPACE - half, _SPACE, _TINTS[rest[0]], _UMBRELLA[rest[0]], 2)
                svg.fill(x + half, y + 2, 2, _SPACE - 4, _TINTS[rest[0]])
            for middle, colour in _space_letters(x, sorted(accepted)):  # the colours by letter too
                svg.text(middle, y + (_SPACE - _GLYPH_H) // 2, COLOURS[colour], _TEXT, anchor="middle")
        token = tokens[space]
        if token is not None:
            centre = _SPACE / 2
            svg.disc(x + centre, y + centre, (_SPACE - 6) / 2, _TEXT)
            svg.disc(
                x + centre,
                y + centre,
                (_SPACE - 8) / 2,
                _UMBRELLA[COLOURS.index(token)],
                id=f"seat{i}-token{space}",
                cls="token",
            )
            svg.text(x + centre, y + (_SPACE - _GLYPH_H) // 2, token, _CELL_LETTER[COLOURS.index(token)], "middle")
    for name, (a, b) in plate.powers.items():
        _bridge(svg, qx, qy, a, b, 10, _TEXT, cls=f"power {name.replace('_', '-')}")
    occupied = [t is not None for t in tokens]
    svg.text(qx, panel[1] + _PLATE_NOTE_Y, f"Tokens {sum(occupied)}  Bonus +{plate.bonus(occupied)}", _MUTED)
    svg.close("g")


# --------------------------------------------------------------------------- table panel
# An item of the table is (width, draw(svg, x, y)); items flow left to right and wrap,
# with the widths of image.py's glyphs, so both pictures wrap at the same item.
_Item = tuple[int, Callable[[_Svg, int, int], None]]


def _text_item(text: str, ink: int = _TEXT) -> _Item:
    def draw(svg: _Svg, x: int, y: int) -> None:
        svg.text(x, y, text, ink)

    return _text_width(text), draw


def _ticks_item(label: str, n: int, ink: int, cls: str) -> _Item:
    """A label and one tick per token (at most ``_MAX_TICKS``; the label has the count)."""
    lw = _text_width(label)
    n = min(n, _MAX_TICKS)

    def draw(svg: _Svg, x: int, y: int) -> None:
        svg.text(x, y, label)
        for t in range(n):
            svg.fill(x + lw + 6 + 5 * t, y - 1, 3, _GLYPH_H + 2, ink, cls=cls)

    return lw + (6 + 5 * n - 2 if n else 0), draw


def _dot_item(label: str, colour: str) -> _Item:
    lw = _text_width(label)

    def draw(svg: _Svg, x: int, y: int) -> None:
        svg.text(x, y, label)
        svg.disc(x + lw + 6 + _GLYPH_H / 2, y + _GLYPH_H / 2, _GLYPH_H / 2, _UMBRELLA[COLOURS.index(colour)])

    return lw + 6 + _GLYPH_H, draw


def _table_items(s: Mapping[str, Any], actor: int | None) -> list[_Item]:
    items = []
    for kind, text, value, key in table_entries(s, actor):
        if kind == "ticks":
            count, ink = value
            items.append(_ticks_item(text, count, ink, key))
        elif kind == "dot":
            items.append(_dot_item(text, value))
        else:
            items.append(_text_item(text, value))
    return items


def _table_panel(
    svg: _Svg, table: tuple[int, int, int, int], s: Mapping[str, Any], actor: int | None, cs: ComponentSet
) -> None:
    tx, ty, tw, th = table
    svg.open("g", id="table", cls="table")
    svg.box(tx, ty, tw, th, _PANEL, _PANEL_EDGE)
    x0, right = tx + _PAD, tx + tw - _PAD - _PASSING_W - _PAD  # the tile in transit sits at the right
    if s["passing"] is not None:
        y = ty + (th - _SLOT_BOX) // 2 if th == _TABLE_STRIP_H else ty + _PAD
        tile = s["passing"]
        face = _FACE_INDEX[tile["face"]]
        end = tx + tw - _PAD
        svg.open("g", id="passing", cls="passing")
        svg.text(end - _PASSING_W, y + (_SLOT_BOX - _GLYPH_H) // 2, "Passing")
        _figure(svg, end - _SLOT_BOX, y, cs.face_cells(tile["tile"], face), face, _TILE_EDGE)
        svg.close("g")
    x, y = x0, ty + _PAD + 1
    for width, draw in _table_items(s, actor):
        if x > x0 and x + width > right:
            x, y = x0, y + _GLYPH_H + 8
        draw(svg, x, y)
        x += width + 20
    svg.close("g")
