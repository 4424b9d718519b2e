"""Egocentric, fixed-size observation of a batch from any seat.

The observer is seat 0 of the encoding and the others follow in turn order (relative
seat j is absolute seat ``(observer + j) % P``); rows of absent seats are zero.  Only
public information is encoded: a stack shows its top tile and its height, never the
tiles under the top.  ``OBS_SIZE`` is the same for every configuration.

``python -m umbrella_env.tools.gendocs`` writes the index table to
``docs/observation.md`` from ``OBS_SEGMENTS``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from umbrella_env.core import actions as A
from umbrella_env.core import engine as E
from umbrella_env.core.components import MAX_COUNT
from umbrella_env.core.errors import ArgumentError

__all__ = [
    "GLOBAL_SEGMENTS",
    "MAX_SEATS",
    "OBS_SIZE",
    "SEAT_SEGMENTS",
    "SEAT_SIZE",
    "observation_bounds",
    "observation_layout",
    "observe",
]

MAX_SEATS = 4

#: Per relative seat: (name, size, meaning).
SEAT_SEGMENTS: tuple[tuple[str, int, str], ...] = (
    ("stage", 64, "stage one-hot, index cell*4 + colour (cell = row*4 + col, colours B G R Y)"),
    ("slot_present", 4, "slot k has a visible tile"),
    ("slot_black", 4, "the visible tile of slot k shows its black face"),
    ("slot_height", 4, "tiles on slot k (the ones under the top are only counted)"),
    ("slot_figure", 64, "cells of the visible figure of slot k, rotated by the slot: index k*16 + cell"),
    ("plate_token", 10, "plate space s holds a token"),
    ("plate_colour", 40, "colour of the figure whose token is on space s: index s*4 + colour"),
    ("score", 1, "current score (docs/rules.md §5/§8 formula applied now)"),
    ("tokens", 1, "tokens on the plate"),
)
SEAT_SIZE = sum(size for _, size, _ in SEAT_SEGMENTS)

#: After the seat blocks: (name, size, meaning).
GLOBAL_SEGMENTS: tuple[tuple[str, int, str], ...] = (
    ("own_zones", 16, "umbrellas per colour in the observer's top/bottom/left/right zone: index side*4 + colour"),
    ("all_zones", 36, "every zone, egocentric (actions.py zone ids): index zone*4 + colour; zero in solo"),
    ("discard", 4, "solo discard per colour"),
    ("num_players", 4, "one-hot of 1..4 players"),
    ("plate_level", 4, "one-hot of level 1..4"),
    ("phase", len(A.PHASES), "one-hot decision phase: " + ", ".join(A.PHASES)),
    ("actor", 4, "relative seat taking the current decision, one-hot"),
    ("current", 4, "relative seat whose turn it is, one-hot"),
    ("supply", 1, "tokens left in the supply"),
    ("reserve_used", 1, "tokens taken from the reserve"),
    ("turn_fraction", 1, "turns completed / max_turns"),
    ("end_triggered", 1, "the end of the game has been triggered"),
    ("end_trigger_seat", 4, "relative seat that triggered the end, one-hot"),
    ("extra_turn", 1, "an extra-turn power fired this turn"),
    ("passing_present", 1, "a validated tile is in transit (during a swap decision still on its slot)"),
    ("passing_black", 1, "the tile in transit shows its black face"),
    ("passing_white_face", 16, "cells of the white face of the tile in transit (unrotated)"),
    ("passing_black_face", 16, "cells of the black face of the tile in transit (unrotated)"),
    ("last_side", 4, "solo: side this turn's slide entered from, one-hot"),
    ("last_colour", 4, "solo: colour that slide ejected, one-hot"),
)
OBS_SIZE = MAX_SEATS * SEAT_SIZE + sum(size for _, size, _ in GLOBAL_SEGMENTS)


#: Value range of the segments that are not 0/1 flags (others lie in [0, 1]).
_BOUNDS: dict[str, tuple[float, float]] = {
    "slot_height": (0, 24),
    "score": (-64, 128),
    "tokens": (0, 10),
    "own_zones": (0, 64),
    "all_zones": (0, 64),
    "discard": (0, 64),
    "supply": (0, MAX_COUNT),
    "reserve_used": (0, MAX_COUNT),
}


def observation_bounds() -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32 vectors of size OBS_SIZE bounding every observation entry."""
    low = np.zeros(OBS_SIZE, np.float32)
    high = np.ones(OBS_SIZE, np.float32)
    for start, stop, name, _ in observation_layout():
        lo, hi = _BOUNDS.get(name.split(".")[-1], (0, 1))
        low[start:stop], high[start:stop] = lo, hi
    return low, high


def observation_layout() -> list[tuple[int, int, str, str]]:
    """``(start, stop, name, meaning)`` of every segment, in index order."""
    out = []
    pos = 0
    for j in range(MAX_SEATS):
        for name, size, meaning in SEAT_SEGMENTS:
            who = "observer" if j == 0 else f"relative seat {j}"
            out.append((pos, pos + size, f"seat{j}.{name}", f"{who}: {meaning}"))
            pos += size
    for name, size, meaning in GLOBAL_SEGMENTS:
        out.append((pos, pos + size, name, meaning))
        pos += size
    assert pos == OBS_SIZE
    return out


_ARANGE4 = np.arange(4)


def _offsets() -> dict[str, int]:
    out = {}
    for start, _, name, _ in observation_layout():
        out[name] = start
    return out


_OFF = _offsets()
_SEAT0 = {name: _OFF[f"seat0.{name}"] for name, _, _ in SEAT_SEGMENTS}
#: Row c: the one-hot of colour c; row -1 (an empty plate space) all zeros.
_ONE_HOT4 = np.vstack([np.eye(4, dtype=np.float32), np.zeros((1, 4), np.float32)])


def observe(state: E.BatchState, seats: Any = None, scores: Any = None) -> NDArray[np.float32]:
    """[B, OBS_SIZE] float32 observations, each from ``seats[b]`` (default: the actor).

    ``scores`` may pass ``engine.scores(state)`` when the caller has it already.
    """
    t = state.tables
    cfg = state.config
    B, P = state.batch_size, cfg.num_players
    actor = E.actor(state).astype(np.intp)
    if seats is None:
        o = actor
    else:
        given = np.asarray(seats)
        if given.dtype == np.bool_ or not np.issubdtype(given.dtype, np.integer) or given.ndim > 1:
            raise ArgumentError(f"observer seats must be an int or {B} ints (one per game), got {seats!r}")
        if given.ndim == 1 and given.size != B:
            raise ArgumentError(f"observer seats: expected one seat per game ({B}), got {given.size}")
        o = np.broadcast_to(given, (B,)).astype(np.intp)
        if (o < 0).any() or (o >= P).any():
            raise ArgumentError(f"observer seats must be in [0, {P}), got {np.unique(o).tolist()}")
    out = np.zeros((B, OBS_SIZE), dtype=np.float32)
    flat = out.reshape(-1)
    row = (np.arange(B) * OBS_SIZE)[:, None]  # [B, 1] start of each game's row
    rel = (o[:, None] + np.arange(P)) % P  # [B, P] absolute seat of each relative seat
    bi = np.arange(B)[:, None]

    # Seat blocks: one-hots as rows of small tables (np.take: faster than scatters of ones).
    s0 = _SEAT0
    seats_view = out[:, : P * SEAT_SIZE].reshape(B, P, SEAT_SIZE)
    if o.any():
        stage, stacks, plates = state.stage[bi, rel], state.stacks[bi, rel], state.plates[bi, rel]
    else:  # every observer is seat 0: the seats are already in its order
        stage, stacks, plates = state.stage, state.stacks, state.plates
    seats_view[:, :, s0["stage"] : s0["stage"] + 64] = _ONE_HOT4.take(
        stage.reshape(-1).astype(np.intp), axis=0
    ).reshape(B, P, 64)
    tops = stacks[..., 0]  # [B, P, 4]
    present = tops >= 0
    seats_view[:, :, s0["slot_present"] : s0["slot_present"] + 4] = present
    seats_view[:, :, s0["slot_black"] : s0["slot_black"] + 4] = present & ((tops & 1) == 1)
    # Counts as matrix-vector products: much faster than a reduce over a short axis.
    H = stacks.shape[3]
    seats_view[:, :, s0["slot_height"] : s0["slot_height"] + 4] = (
        (stacks >= 0).reshape(-1, H).astype(np.float32) @ np.ones(H, np.float32)
    ).reshape(B, P, 4)
    # Row code * 4 + slot of fig_grid [49 * 4, 16]: the figure's cells rotated by its slot; an
    # empty slot (code -1) wraps to rows 192-195 (code 48), all zeros.
    figure_rows = tops.astype(np.intp) * 4 + _ARANGE4
    seats_view[:, :, s0["slot_figure"] : s0["slot_figure"] + 64] = (
        t.fig_grid.reshape(-1, 16).take(figure_rows.reshape(-1), axis=0, mode="wrap").reshape(B, P, 64)
    )
    occ = plates >= 0
    seats_view[:, :, s0["plate_token"] : s0["plate_token"] + 10] = occ
    # An empty space (-1) wraps to the zero row.
    seats_view[:, :, s0["plate_colour"] : s0["plate_colour"] + 40] = _ONE_HOT4.take(
        plates.reshape(-1), axis=0, mode="wrap"
    ).reshape(B, P, 40)
    if scores is None:
        scores = E.scores(state)
    seats_view[:, :, s0["score"]] = scores[bi, rel]
    seats_view[:, :, s0["tokens"]] = (
        occ.reshape(-1, occ.shape[2]).astype(np.float32) @ np.ones(occ.shape[2], np.float32)
    ).reshape(B, P)

    # Zones.
    own = state.zones.reshape(B, 16) if cfg.solo else state.zones[bi, t.side_zone[o]].reshape(B, 16)
    out[:, _OFF["own_zones"] : _OFF["own_zones"] + 16] = own
    if not cfg.solo:
        rz = t.rel_zone[o]
        out[:, _OFF["all_zones"] : _OFF["all_zones"] + 36] = (
            state.zones[bi, np.maximum(rz, 0)] * (rz >= 0)[:, :, None]
        ).reshape(B, 36)
    else:
        out[:, _OFF["discard"] : _OFF["discard"] + 4] = state.discard

    # Global one-hots (-1 values, e.g. no end trigger, write nothing).
    r = row[:, 0]
    out[:, _OFF["num_players"] + P - 1] = 1
    out[:, _OFF["plate_level"] + cfg.plate_level - 1] = 1
    flat[r + _OFF["phase"] + state.phase] = 1
    flat[r + _OFF["actor"] + (actor - o) % P] = 1
    flat[r + _OFF["current"] + (state.current - o) % P] = 1
    out[:, _OFF["supply"]] = state.supply
    out[:, _OFF["reserve_used"]] = state.reserve_used
    out[:, _OFF["turn_fraction"]] = state.turn / cfg.max_turns
    trig = state.end_triggered_by >= 0
    out[:, _OFF["end_triggered"]] = trig
    flat[(r + _OFF["end_trigger_seat"] + (state.end_triggered_by - o) % P)[trig]] = 1
    out[:, _OFF["extra_turn"]] = state.extra_turn
    passing = state.passing.astype(np.intp)
    has = np.flatnonzero(passing >= 0)
    if has.size:
        code = passing[has]
        out[has, _OFF["passing_present"]] = 1
        out[has, _OFF["passing_black"]] = code & 1
        tile2 = (code >> 1) * 2
        out[has, _OFF["passing_white_face"] : _OFF["passing_white_face"] + 16] = t.face_grid[tile2]
        out[has, _OFF["passing_black_face"] : _OFF["passing_black_face"] + 16] = t.face_grid[tile2 + 1]
    if cfg.solo:
        last = np.flatnonzero(state.last_side >= 0)
        flat[r[last] + _OFF["last_side"] + state.last_side[last]] = 1
        flat[r[last] + _OFF["last_colour"] + state.last_colour[last]] = 1
    return out
