"""Lookup tables of the batched engine, built once per (component set, players, level).

Every geometric or rule fact that the hot path needs becomes an array here, so that
``engine.py`` only gathers and scatters.  The rule facts themselves (which zones surround
a seat, the score formula, the solo end) are functions of :mod:`~umbrella_env.core.facts`;
the tables below are those functions evaluated once for every index.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from umbrella_env.core import actions as A
from umbrella_env.core import facts as F
from umbrella_env.core.components import (
    COLOURS,
    NUM_SPACES,
    ComponentSet,
    parse_space,
    rotate_cells,
)
from umbrella_env.core.config import GameConfig

__all__ = [
    "LINE_CELLS",
    "OPPOSITE",
    "PAIR_A",
    "PAIR_B",
    "POWER_EXTRA_TURN",
    "POWER_NONE",
    "POWER_SWAP_STAGE",
    "POWER_SWAP_ZONE",
    "Tables",
    "tables_for",
]

# Cells of each slide line in push order: the first cell receives the new umbrella, the
# last one is pushed off the far end.  Stage cells are row * 4 + col:
#
#        top: col c -> (0,c) (1,c) (2,c) (3,c)      bottom: col c -> (3,c) (2,c) (1,c) (0,c)
#       left: row r -> (r,0) (r,1) (r,2) (r,3)       right: row r -> (r,3) (r,2) (r,1) (r,0)
LINE_CELLS = np.zeros((4, 4, 4), dtype=np.intp)
for _line in range(4):
    LINE_CELLS[A.TOP, _line] = [r * 4 + _line for r in range(4)]
    LINE_CELLS[A.BOTTOM, _line] = [r * 4 + _line for r in (3, 2, 1, 0)]
    LINE_CELLS[A.LEFT, _line] = [_line * 4 + c for c in range(4)]
    LINE_CELLS[A.RIGHT, _line] = [_line * 4 + c for c in (3, 2, 1, 0)]

OPPOSITE = np.array(A.OPPOSITE, dtype=np.intp)
PAIR_A = np.array([a for a, _ in A.ADJACENT_PAIRS], dtype=np.intp)
PAIR_B = np.array([b for _, b in A.ADJACENT_PAIRS], dtype=np.intp)

POWER_NONE, POWER_EXTRA_TURN, POWER_SWAP_STAGE, POWER_SWAP_ZONE = -1, 0, 1, 2
_POWER_IDS = {"extra_turn": POWER_EXTRA_TURN, "swap_stage": POWER_SWAP_STAGE, "swap_zone": POWER_SWAP_ZONE}


@dataclass(frozen=True, eq=False)
class Tables:
    config: GameConfig
    #: [P, 4] absolute zone index of each player's top/bottom/left/right zone (facts.seat_zones).
    side_zone: np.ndarray
    #: [P, 9] absolute zone of each egocentric zone id (facts.egocentric_zone), -1 if absent.
    rel_zone: np.ndarray
    #: [49, 4, 4] stage cells of tile code (tile*2+face) rotated by slot; row 48 (= code -1) is a dummy.
    fig_cells: np.ndarray
    #: fig_cells as [49 * 4, 4]: row code * 4 + slot (code -1 -> 48), for np.take.
    fig_cells_flat: np.ndarray
    #: [48, 16] unrotated face cells of each code, as 0/1 (for observations).
    face_grid: np.ndarray
    #: [49, 4, 16] rotated face cells of each code per slot as 0/1 (row 48 all zero).
    fig_grid: np.ndarray
    #: [4 slot, 4 colour, 10 space] whether a space accepts that figure.
    accept: np.ndarray
    #: [4 slot, 4 colour] bitmask (bit s = space s) of the spaces accepting that figure.
    accept_bits: np.ndarray
    #: [10, 4] whether a space accepts a colour by colour (white spaces excluded).
    colour_space: np.ndarray
    #: [10] slot of a white space, -1 for colour spaces.
    white_slot: np.ndarray
    #: [1024] plate bonus of each occupancy bit pattern (bit s = space s occupied).
    bonus: np.ndarray
    #: [10] power fired by filling a space whose partner is already filled, -1 none.
    power: np.ndarray
    #: [10] partner space of the power pair (the space itself when none).
    partner: np.ndarray
    #: [4 layouts, 16] stage layouts as colour indices.
    layouts: np.ndarray
    #: [1024 free-space bits, 16 occupied-slot bits] bitmask of the colours that could
    #: still be scored (solo end rule, docs/rules.md §8.3; facts.scoreable_colours).
    scoreable_colours: np.ndarray
    #: [1024] number of set bits (tokens on a plate from its occupancy bits).
    popcount: np.ndarray
    #: [1024 occupancy bits, U + 1] the score (facts.score) of a plate with those tokens
    #: and ``u`` counted umbrellas (personal zone; solo: the four zones), U the most possible.
    score: np.ndarray


_CACHE: dict[tuple[int, int, int], tuple[ComponentSet, Tables]] = {}


def tables_for(config: GameConfig) -> Tables:
    key = (id(config.components), config.num_players, config.plate_level)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is config.components:
        return hit[1]
    t = _build(config)
    _CACHE[key] = (config.components, t)
    return t


def _build(config: GameConfig) -> Tables:
    cs = config.components
    P = config.num_players
    side_zone = np.array([F.seat_zones(P, p) for p in range(P)], dtype=np.intp)
    rel_zone = np.array([[F.egocentric_zone(P, p, k) for k in range(A.MAX_ZONES)] for p in range(P)], dtype=np.intp)

    fig_cells = np.zeros((49, 4, 4), dtype=np.intp)
    fig_cells[48] = [0, 1, 2, 3]
    fig_grid = np.zeros((49, 4, 16), dtype=np.float32)
    face_grid = np.zeros((48, 16), dtype=np.float32)
    for tile in range(len(cs.tiles)):
        for face in range(2):
            code = tile * 2 + face
            cells = cs.face_cells(tile, face)
            face_grid[code, list(cells)] = 1
            for slot in range(4):
                rot = rotate_cells(cells, slot)
                fig_cells[code, slot] = rot
                fig_grid[code, slot, list(rot)] = 1

    plate = cs.plates[config.plate_level]
    accept = np.zeros((4, 4, NUM_SPACES), dtype=bool)
    colour_space = np.zeros((NUM_SPACES, 4), dtype=bool)
    white_slot = np.full(NUM_SPACES, -1, dtype=np.intp)
    for s, text in enumerate(plate.spaces):
        colours, wslot = parse_space(text)
        if wslot is not None:
            white_slot[s] = wslot
        for c in colours:
            colour_space[s, c] = True
        for slot in range(4):
            for c in range(4):
                accept[slot, c, s] = plate.accepts(s, c, slot)
    bonus = np.array(
        [plate.bonus([(bits >> s) & 1 == 1 for s in range(NUM_SPACES)]) for bits in range(1 << NUM_SPACES)],
        dtype=np.int16,
    )
    power = np.full(NUM_SPACES, POWER_NONE, dtype=np.intp)
    partner = np.arange(NUM_SPACES, dtype=np.intp)
    for name, (a, b) in plate.powers.items():
        power[a] = power[b] = _POWER_IDS[name]
        partner[a], partner[b] = b, a
    colour_rows, white_list = colour_space.tolist(), white_slot.tolist()
    scoreable = np.array(
        [
            [F.scoreable_colours(free, present, colour_rows, white_list) for present in range(16)]
            for free in range(1 << NUM_SPACES)
        ],
        dtype=np.uint8,
    )
    popcount = np.array([bin(x).count("1") for x in range(1 << NUM_SPACES)], dtype=np.int8)
    umbrellas = np.arange(F.scored_umbrellas_bound(P) + 1)[None, :]
    score = F.score(
        P, popcount[:, None].astype(np.int64), bonus[:, None].astype(np.int64), umbrellas, config.components.solo_tokens
    ).astype(np.int16)
    layouts = np.array([[COLOURS.index(ch) for ch in "".join(rows)] for rows in cs.layouts.values()], dtype=np.int8)
    return Tables(
        config=config,
        side_zone=side_zone,
        rel_zone=rel_zone,
        fig_cells=fig_cells,
        fig_cells_flat=fig_cells.reshape(49 * 4, 4),
        face_grid=face_grid,
        fig_grid=fig_grid,
        accept=accept,
        accept_bits=(accept.astype(np.int32) << np.arange(NUM_SPACES)).sum(axis=2).astype(np.int32),
        colour_space=colour_space,
        white_slot=white_slot,
        bonus=bonus,
        power=power,
        partner=partner,
        layouts=layouts,
        scoreable_colours=scoreable,
        popcount=popcount,
        score=score,
    )
