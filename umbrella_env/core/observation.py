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
    ("score", 1, "current score (RULES.md §5/§8 formula applied now)"),
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
    ("passing_present", 1, "a validated tile is in transit"),
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
    "supply": (0, 64),
    "reserve_used": (0, 64),
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


def _one_hot(values: NDArray[Any], n: int) -> NDArray[np.float32]:
    """One-hot over the last axis; negative values give a zero row."""
    return (values[..., None] == np.arange(n)).astype(np.float32)


def observe(state: E.BatchState, seats: Any = None) -> NDArray[np.float32]:
    """[B, OBS_SIZE] float32 observations, each from ``seats[b]`` (default: the actor)."""
    t = state.tables
    cfg = state.config
    B, P = state.batch_size, cfg.num_players
    if seats is None:
        o = E.actor(state).astype(np.intp)
    else:
        o = np.broadcast_to(np.asarray(seats), (B,)).astype(np.intp)
        if (o < 0).any() or (o >= P).any():
            raise ValueError(f"observer seats must be in [0, {P}), got {np.unique(o).tolist()}")
    rel = (o[:, None] + np.arange(P)) % P  # [B, P] absolute seat of each relative seat
    bi = np.arange(B)[:, None]

    stage = state.stage[bi, rel].reshape(B, P, 16)
    stacks = state.stacks[bi, rel]  # [B, P, 4, H]
    tops = stacks[..., 0]
    present = tops >= 0
    plates = state.plates[bi, rel]
    occ = plates >= 0
    scores = E.scores(state)[bi, rel]
    seat_block = np.concatenate(
        [
            _one_hot(stage, 4).reshape(B, P, 64),
            present.astype(np.float32),
            (present & ((tops & 1) == 1)).astype(np.float32),
            (stacks >= 0).sum(axis=3).astype(np.float32),
            t.fig_grid[tops, _ARANGE4].reshape(B, P, 64),
            occ.astype(np.float32),
            _one_hot(plates, 4).reshape(B, P, 40),
            scores[..., None].astype(np.float32),
            occ.sum(axis=2, keepdims=True).astype(np.float32),
        ],
        axis=2,
    )
    out = np.zeros((B, OBS_SIZE), dtype=np.float32)
    out[:, : P * SEAT_SIZE] = seat_block.reshape(B, P * SEAT_SIZE)

    def rel_seat(abs_seat: NDArray[Any]) -> NDArray[Any]:
        return np.where(abs_seat >= 0, (abs_seat - o) % P, -1)

    own = state.zones[bi, t.side_zone[o]].reshape(B, 16)
    if cfg.solo:
        all_zones = np.zeros((B, 36), np.float32)
    else:
        rz = t.rel_zone[o]
        all_zones = (state.zones[bi, np.maximum(rz, 0)] * (rz >= 0)[:, :, None]).reshape(B, 36)
    passing = state.passing.astype(np.intp)
    has_pass = passing >= 0
    tile = np.where(has_pass, passing >> 1, 0)
    pass_white = t.face_grid[tile * 2] * has_pass[:, None]
    pass_black = t.face_grid[tile * 2 + 1] * has_pass[:, None]
    glob = np.concatenate(
        [
            own.astype(np.float32),
            all_zones.astype(np.float32),
            state.discard.astype(np.float32),
            np.broadcast_to(_one_hot(np.array(P - 1), 4), (B, 4)),
            np.broadcast_to(_one_hot(np.array(cfg.plate_level - 1), 4), (B, 4)),
            _one_hot(state.phase, len(A.PHASES)),
            _one_hot(rel_seat(E.actor(state).astype(np.intp)), 4),
            _one_hot(rel_seat(state.current.astype(np.intp)), 4),
            state.supply[:, None].astype(np.float32),
            state.reserve_used[:, None].astype(np.float32),
            (state.turn / cfg.max_turns)[:, None].astype(np.float32),
            (state.end_by >= 0)[:, None].astype(np.float32),
            _one_hot(rel_seat(state.end_by.astype(np.intp)), 4),
            state.extra_turn[:, None].astype(np.float32),
            has_pass[:, None].astype(np.float32),
            (has_pass & ((passing & 1) == 1))[:, None].astype(np.float32),
            pass_white,
            pass_black,
            _one_hot(state.last_side, 4),
            _one_hot(state.last_colour, 4),
        ],
        axis=1,
    )
    out[:, MAX_SEATS * SEAT_SIZE :] = glob
    return out
