"""Pieces shared by the hand-written agents: figure arithmetic on stage arrays, the
expected plate bonus and small lookahead helpers; and, re-exported from their home
:mod:`umbrella_env.core.hidden`, ``determinize`` and ``unseen_pool``.

Everything here reads a :class:`~umbrella_env.core.single.SingleGame` through its
documented read API (``game.stage(seat)``, ``game.zone(z)``, ``game.top_tile(seat, slot)``,
``game.plate_bits(seat)``, ``game.tables``, ...; see the module doc of
:mod:`umbrella_env.core.single`) and never modifies the game it is given: lookahead works
on :meth:`~SingleGame.clone` copies.  The score formula is
:func:`umbrella_env.core.facts.score`.

Public information only
-----------------------
The tiles under the top of a stack are hidden.  Helpers that look past a validation
(which reveals the tile under the validated one) either work on a
:func:`determinize`-d copy or ignore the revealed slot (``ignore`` masks below).

Vectorised slides
-----------------
A slide only permutes the 16 stage cells and writes its colour into the entry cell, so
the stages after all 64 slides are one gather from the stage extended by four colour
constants (``ext = stage + [0, 1, 2, 3]``)::

    after[a] = ext[SLIDE_SRC[a]]          a = side * 16 + colour * 4 + line

and the stages after two slides are a second gather of the same table.  A figure's
four cells read as a base-4 number, ``code = stages @ Figures.matrix`` (one matrix
product for every figure and stage), which indexes small tables: ``COLOUR_COUNTS[code]``
(cells of each colour) and ``BEST_COUNT[code, colour mask]`` (the most cells of one
allowed colour).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agents.base import GAME_FROM_ENV
from agents.checks import check_game_mask, check_mask
from umbrella_env.core import actions as A
from umbrella_env.core import facts as F
from umbrella_env.core.hidden import determinize as determinize  # re-exported: its path in 0.1
from umbrella_env.core.hidden import unseen_pool as unseen_pool
from umbrella_env.core.single import SingleGame
from umbrella_env.core.tables import LINE_CELLS

NUM_SLIDES = A.NUM_SLIDE
SLIDE_IDS = np.arange(NUM_SLIDES)

# --------------------------------------------------------------------------- slide tables
#: [64, 16] source index of every cell after slide ``a`` into ``ext`` (stage + 4 colours).
SLIDE_SRC = np.tile(np.arange(16, dtype=np.intp), (NUM_SLIDES, 1))
#: [64] cell whose umbrella slide ``a`` pushes off the far end.
SLIDE_EJECT = np.zeros(NUM_SLIDES, dtype=np.intp)
for _a in range(NUM_SLIDES):
    _side, _colour, _line = _a >> 4, (_a >> 2) & 3, _a & 3
    _x = LINE_CELLS[_side, _line]
    SLIDE_SRC[_a, _x[0]] = 16 + _colour
    SLIDE_SRC[_a, _x[1:]] = _x[:3]
    SLIDE_EJECT[_a] = _x[3]
#: [64] index ``side * 4 + colour`` of the own-zone entry a slide takes from.
SLIDE_SOURCE = SLIDE_IDS >> 2
#: [64] side of the zone receiving the ejected umbrella (2-4 players).
SLIDE_EJECT_SIDE = np.array([A.OPPOSITE[a >> 4] for a in range(NUM_SLIDES)], dtype=np.intp)
SLIDE_ENTRY_SIDE = SLIDE_IDS >> 4
_COLOUR_CONST = np.arange(4, dtype=np.int64)

# --------------------------------------------------------------------------- figure codes
#: [4] base-4 weights of a figure's four cells.
POW4 = np.array([64, 16, 4, 1], dtype=np.int64)
_digits = np.array([[(code >> (2 * (3 - j))) & 3 for j in range(4)] for code in range(256)])
_counts = np.stack([(_digits == c).sum(1) for c in range(4)], axis=1)  # [256, 4]
#: [256, 4] cells of each colour in a figure code.
COLOUR_COUNTS = _counts.astype(np.int64)
#: [256, 16] most cells of one colour allowed by the 4-bit colour mask (0 if none allowed).
BEST_COUNT = np.array(
    [[max([_counts[code, c] for c in range(4) if m >> c & 1], default=0) for m in range(16)] for code in range(256)],
    dtype=np.int64,
)


# --------------------------------------------------------------------------- small helpers
def argmax_random(values: Sequence[float] | np.ndarray, rng: np.random.Generator, tol: float = 1e-9) -> int:
    """Index of a maximum of ``values``, ties (within ``tol``) broken uniformly by ``rng``."""
    v = np.asarray(values, dtype=np.float64)
    best = np.flatnonzero(v >= v.max() - tol)
    return int(best[0]) if best.size == 1 else int(best[rng.integers(best.size)])


def game_and_legal(agent_name: str, action_mask: np.ndarray, game: SingleGame | None) -> tuple[SingleGame, np.ndarray]:
    """The game and its legal ids for an agent that needs the game: a ``ValueError`` if the caller gave
    none, or a mask that is not a [968] mask (:func:`agents.checks.check_mask`) or not the
    game's legal actions (:func:`agents.checks.check_game_mask`)."""
    if game is None:
        raise ValueError(f"{agent_name} needs the game (needs_game=True): {GAME_FROM_ENV}")
    legal = check_mask(action_mask)
    check_game_mask(game, legal)
    return game, legal


def after(game: SingleGame, action: int) -> SingleGame:
    """A clone of ``game`` with ``action`` applied."""
    g = game.clone()
    g.step(int(action))
    return g


def stage_array(game: SingleGame, seat: int, dtype: type = np.int64) -> np.ndarray:
    """[16]: the colours of a seat's stage (int64 by default; float32 for matrix products)."""
    return np.array(game.stage(seat), dtype=dtype)


def own_zone_counts(game: SingleGame, seat: int) -> np.ndarray:
    """int64 [16]: umbrellas per colour in the seat's top / bottom / left / right zone, index side*4+colour."""
    return np.array([n for zone in game.seat_zones(seat) for n in game.zone(zone)], dtype=np.int64)


def personal_count(game: SingleGame, seat: int) -> int:
    """Umbrellas in the seat's personal (bottom) zone."""
    return game.personal_umbrellas(seat)


def personal_score(n: int) -> int:
    """The personal-zone part of a 2-4 player score (facts.personal_points, docs/rules.md §5.2)."""
    return F.personal_points(n)


# --------------------------------------------------------------------------- figures
@dataclass(frozen=True)
class Figures:
    """Visible figures of one seat: ``slots[i]`` shows tile ``codes[i]``, whose cells
    (rotated by the slot) are ``cells[i]``; ``masks[i]`` has bit ``c`` set when a free
    plate space accepts a figure of colour ``c`` from that slot.  ``matrix`` (float32
    [16, nf]) turns stages into the figures' base-4 colour codes: ``stages @ matrix``."""

    slots: tuple[int, ...]
    codes: tuple[int, ...]
    cells: np.ndarray  # intp [nf, 4]
    masks: np.ndarray  # int64 [nf]
    matrix: np.ndarray  # float32 [16, nf]

    def __len__(self) -> int:
        return len(self.slots)

    def __add__(self, other: Figures) -> Figures:
        return Figures(
            self.slots + other.slots,
            self.codes + other.codes,
            np.concatenate([self.cells, other.cells]),
            np.concatenate([self.masks, other.masks]),
            np.concatenate([self.matrix, other.matrix], axis=1),
        )

    def codes_of(self, stages: np.ndarray) -> np.ndarray:
        """[..., nf] base-4 colour codes of each figure's cells on stages [..., 16]."""
        return (np.asarray(stages, dtype=np.float32) @ self.matrix).astype(np.intp)

    def best(self, stages: np.ndarray) -> np.ndarray:
        """[..., nf] the most cells of one allowed colour of each figure on ``stages`` [..., 16]."""
        if not self.slots:
            return np.zeros(stages.shape[:-1] + (0,), dtype=np.int64)
        return BEST_COUNT[self.codes_of(stages), self.masks]


_COLUMNS: dict[object, np.ndarray] = {}


def _code_columns(game: SingleGame) -> np.ndarray:
    """float32 [48, 4, 16]: the ``Figures.matrix`` column of tile code ``code`` on slot ``k``."""
    hit = _COLUMNS.get(game.tables)
    if hit is None:
        figc = game.tables.figure_cells
        hit = np.zeros((len(figc), 4, 16), dtype=np.float32)
        for code in range(len(figc)):
            for k in range(4):
                for j, cell in enumerate(figc[code][k]):
                    hit[code, k, cell] += POW4[j]
        _COLUMNS[game.tables] = hit
    return hit


def colour_mask(game: SingleGame, seat: int, slot: int, free: int | None = None) -> int:
    """Bit ``c``: a free space of the seat's plate accepts a colour-``c`` figure from ``slot``."""
    acc = game.tables.accepting[slot]
    if free is None:
        free = ~game.plate_bits(seat) & 0x3FF
    return (acc[0] & free != 0) | (acc[1] & free != 0) << 1 | (acc[2] & free != 0) << 2 | (acc[3] & free != 0) << 3


def tile_figures(game: SingleGame, seat: int, codes: Sequence[int], slots: Sequence[int]) -> Figures:
    """Tiles ``codes`` shown on ``slots`` of ``seat``'s board (one figure per pair)."""
    figc = game.tables.figure_cells
    free = ~game.plate_bits(seat) & 0x3FF
    return Figures(
        tuple(slots),
        tuple(codes),
        np.array([figc[c][k] for c, k in zip(codes, slots)], dtype=np.intp).reshape(-1, 4),
        np.array([colour_mask(game, seat, k, free) for k in slots], dtype=np.int64),
        _code_columns(game)[list(codes), list(slots)].T.reshape(16, -1),
    )


def figures(game: SingleGame, seat: int, ignore: int = 0) -> Figures:
    """The visible figures of ``seat`` (slots in the bit mask ``ignore`` left out)."""
    tops = [game.top_tile(seat, k) for k in range(4)]
    slots = [k for k in range(4) if tops[k] >= 0 and not ignore >> k & 1]
    return tile_figures(game, seat, [tops[k] for k in slots], slots)


def figure_progress(game: SingleGame, seat: int, code: int, slot: int) -> int:
    """Cells of the best allowed colour of tile ``code`` shown on ``seat``'s ``slot`` (0-4)."""
    s = game.stage(seat)
    a, b, c, d = game.tables.figure_cells[code][slot]
    mask = colour_mask(game, seat, slot)
    return int(BEST_COUNT[((s[a] * 4 + s[b]) * 4 + s[c]) * 4 + s[d], mask])


def receiver_slots(game: SingleGame, receiver: int) -> list[int]:
    """Where a passed tile can land on ``receiver``'s board: the first empty slot, or
    every slot (the receiver then chooses which one to cover)."""
    for k in range(4):
        if game.top_tile(receiver, k) < 0:
            return [k]
    return [0, 1, 2, 3]


def gift_progress(game: SingleGame, receiver: int, code: int) -> int:
    """How complete tile ``code`` would be for ``receiver`` where it lands (the best slot
    when the receiver chooses)."""
    return max(figure_progress(game, receiver, code, k) for k in receiver_slots(game, receiver))


# --------------------------------------------------------------------------- slides
def slide_stages(stage: np.ndarray) -> np.ndarray:
    """[64, 16]: the stage [16] after each of the 64 slides (legal or not), same dtype."""
    return np.concatenate([stage, _COLOUR_CONST.astype(stage.dtype)])[SLIDE_SRC]


def slide_stages2(stages: np.ndarray) -> np.ndarray:
    """[n, 64, 16]: ``[i, a]`` the stage ``stages[i]`` ([n, 16]) after slide ``a``
    (with ``stages = slide_stages(s)``: every two-slide sequence from ``s``)."""
    consts = np.broadcast_to(_COLOUR_CONST.astype(stages.dtype), (len(stages), 4))
    return np.concatenate([stages, consts], axis=1)[:, SLIDE_SRC]


def zones_after_slides(zones: np.ndarray, stage: np.ndarray, solo: bool) -> np.ndarray:
    """[..., 64, 16] (``zones``' dtype): own-zone counts (side*4+colour) after each slide, of
    own-zone counts ``zones`` [..., 16] and int stages ``stage`` [..., 16].  2-4 players: the
    ejected umbrella lands in the zone opposite the entry; solo: it is discarded."""
    out = np.repeat(zones[..., None, :], NUM_SLIDES, axis=-2)
    out[..., SLIDE_IDS, SLIDE_SOURCE] -= 1
    if not solo:
        rows = out.reshape(-1, NUM_SLIDES, 16)
        into = SLIDE_EJECT_SIDE * 4 + stage.reshape(-1, 16)[:, SLIDE_EJECT]  # [n, 64]
        rows[np.arange(len(rows))[:, None], SLIDE_IDS, into] += 1
    return out


def slide_legal(zones: np.ndarray) -> np.ndarray:
    """bool [..., 64]: which slides the own-zone counts [..., 16] allow."""
    return zones[..., SLIDE_SOURCE] > 0


# --------------------------------------------------------------------------- plates
_EXPECT: dict[tuple[object, int], list[list[float]]] = {}


def plate_expectation(game: SingleGame, choice: int = 2) -> list[list[float]]:
    """``out[bits][r]``: the expected final plate bonus from occupancy ``bits`` with ``r``
    more tokens (0 <= r <= 10) when each token's colour is the best of ``choice`` colours
    drawn uniformly from those a free space still accepts, and every token goes to the
    space that maximises the expectation (white spaces count as accepting any colour).

    ``choice=1`` models no control over the colours completed; a large ``choice``
    approaches the best bonus reachable with ``r`` tokens.  A plan that needs one
    specific colour is worth less than one that several colours serve.
    """
    T = game.tables
    key = (T, choice)
    hit = _EXPECT.get(key)
    if hit is not None:
        return hit
    accept = [0] * 4
    for k in range(4):
        for c in range(4):
            accept[c] |= T.accepting[k][c]
    out = [[0.0] * 11 for _ in range(1024)]
    for bits in range(1023, -1, -1):
        row = out[bits]
        row[0] = float(T.bonus[bits])
        free = ~bits & 0x3FF
        spaces = [[s for s in range(10) if (accept[c] & free) >> s & 1] for c in range(4)]
        for r in range(1, 11):
            vals = sorted(max(out[bits | 1 << s][r - 1] for s in sp) for sp in spaces if sp)
            if not vals:
                row[r] = row[0]
                continue
            n = len(vals)
            row[r] = sum(v * (((i + 1) / n) ** choice - (i / n) ** choice) for i, v in enumerate(vals))
    _EXPECT[key] = out
    return out


_FLEX: dict[object, list[int]] = {}


def space_flexibility(game: SingleGame) -> list[int]:
    """Per plate space: how many (slot, colour) figures it accepts (white spaces: 4)."""
    hit = _FLEX.get(game.tables)
    if hit is None:
        acc = game.tables.accepting
        hit = _FLEX[game.tables] = [sum(1 for k in range(4) for c in range(4) if acc[k][c] >> s & 1) for s in range(10)]
    return hit


def expected_tokens_left(game: SingleGame, seat: int) -> int:
    """A rough count of the tokens ``seat`` may still place (this one included)."""
    T = game.tables
    left = 10 - game.tokens(seat)
    if T.solo:
        return min(left, T.solo_tokens - game.tokens(seat))
    if game.end_triggered_by >= 0:
        return min(left, 1)
    return max(1, min(left, math.ceil(game.supply / T.num_players) + 1))


def validate_score_gain(game: SingleGame, action: int) -> int:
    """Immediate score change of the actor from validate ``action`` (token + bonus; solo:
    the remaining-umbrella bonus when it is the last token).  Public information only."""
    T = game.tables
    p = game.current
    space = (action - A.VALIDATE_START) % 10
    bits, tokens = game.plate_bits(p), game.tokens(p)
    umbrellas = game.zone_umbrellas() if T.solo else game.personal_umbrellas(p)
    after = F.score(T.num_players, tokens + 1, T.bonus[bits | 1 << space], umbrellas, T.solo_tokens)
    return after - game.score(p)
