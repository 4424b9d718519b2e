"""The deal of a new :class:`~umbrella_env.core.single.SingleGame`, replaying the batched
engine's per-game random stream in plain Python.

:func:`engine.reset <umbrella_env.core.engine.reset>` deals each game from its own 64-bit
key (``engine._GameStreams``: splitmix64 of the key and a counter).  :func:`deal` draws
the same numbers for one key (:class:`GameStream`, in blocks of NumPy uint64 arithmetic,
which wraps exactly like the engine's) and makes the same choices in the same order, so
``SingleGame.new(config, key)`` equals ``engine.reset(state, [b], keys=[key])`` without a
batch of one (about 4x cheaper, which matters for short solo games).
``tests/test_single.py`` checks the two deals on hundreds of keys, setup redraws included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from umbrella_env.core import facts as F
from umbrella_env.core.engine import STREAM_GAMMA, stream_floats

if TYPE_CHECKING:
    from umbrella_env.core.single import SingleTables

__all__ = ["GameStream", "deal"]

_M64 = (1 << 64) - 1
_GAMMA = STREAM_GAMMA


class GameStream:
    """The batched engine's random stream of one game key, generated in blocks."""

    _BLOCK = 96  # covers a whole deal without redraws at every player count
    _STEPS = np.arange(1, _BLOCK + 1, dtype=np.uint64) * np.uint64(_GAMMA)  # counter * gamma, wrapped

    def __init__(self, key: int) -> None:
        self.key_gamma = (int(key) * _GAMMA) & _M64
        self.values: list[float] = []
        self.pos = 0

    def _extend(self) -> None:
        # counter values len(values)+1 .. len(values)+_BLOCK
        x = self._STEPS + np.uint64((self.key_gamma + len(self.values) * _GAMMA) & _M64)
        self.values += stream_floats(x).tolist()

    def random(self, n: int) -> list[float]:
        """The next ``n`` uniform floats in [0, 1)."""
        while self.pos + n > len(self.values):
            self._extend()
        out = self.values[self.pos : self.pos + n]
        self.pos += n
        return out


def _argsort(values: list[float]) -> list[int] | None:
    """Indices sorting ``values``; None when two values tie (np.argsort's order could differ)."""
    if len(set(values)) != len(values):
        return None
    return sorted(range(len(values)), key=values.__getitem__)


def deal(T: SingleTables, key: int) -> tuple[list[list[int]], list[int], list[list[int]]] | None:
    """``(stages, zone counts, stacks)`` of a new game: ``engine.reset`` for one key, step by
    step (docs/rules.md §3, §8.1; decisions 9-10).  None if a tie makes the result ambiguous.

    ``stages[seat]`` 16 colours, ``zone counts[zone * 4 + colour]``, ``stacks[seat * 4 + slot]``
    tile codes bottom to top.
    """
    rnd = GameStream(key)
    P = T.num_players
    # Boards: a random permutation of the layouts, first P (§3.1).
    order = _argsort(rnd.random(len(T.layouts)))
    if order is None:
        return None
    stages = [list(T.layouts[i]) for i in order[:P]]
    if T.solo:
        # 20 umbrellas, 5 per colour, shuffled and dealt 5 to each zone (§8.1).
        n = F.SOLO_ZONE_DEAL
        perm = _argsort(rnd.random(4 * n))
        if perm is None:
            return None
        deck = [i // n for i in perm]  # np.repeat(arange(4), 5)[perm]
        zones = [0] * 16
        for z in range(4):
            for colour in deck[n * z : n * z + n]:
                zones[4 * z + colour] += 1
    else:
        zones = [1] * (4 * T.num_zones)  # one umbrella of each colour in every zone (§3.2)
    per = F.setup_stack_height(P)
    n_tiles = 2 * per
    black = F.setup_black_faces(P)
    tiles = _argsort(rnd.random(24))
    if tiles is None:
        return None
    faces = [1] * (P * n_tiles) if black else [int(x < 0.5) for x in rnd.random(P * n_tiles)]
    codes = [[2 * tiles[p * n_tiles + j] + faces[p * n_tiles + j] for j in range(n_tiles)] for p in range(P)]
    slot_a, slot_b = F.SETUP_SLOTS
    for _ in range(1000):
        # Redraw the first player (in seat order) with a complete visible figure (§3.3, decision 9).
        bad = next((p for p in range(P) if _setup_complete(T, stages[p], codes[p][0], codes[p][per])), None)
        if bad is None:
            break
        held = {c >> 1 for p in range(P) if p != bad for c in codes[p]}
        draw = [x + 2.0 if i in held else x for i, x in enumerate(rnd.random(24))]
        new_tiles = _argsort(draw)
        if new_tiles is None:
            return None
        new_faces = [1] * n_tiles if black else [int(x < 0.5) for x in rnd.random(n_tiles)]
        codes[bad] = [2 * new_tiles[j] + new_faces[j] for j in range(n_tiles)]
    else:  # pragma: no cover - would need a pathological component set
        return None
    stacks: list[list[int]] = []
    for p in range(P):  # codes[:per] go on the first setup slot top first, codes[per:] on the second
        board: list[list[int]] = [[], [], [], []]
        board[slot_a] = codes[p][per - 1 :: -1]
        board[slot_b] = codes[p][: per - 1 : -1]
        stacks += board
    return stages, zones, stacks


def _setup_complete(T: SingleTables, stage: list[int], *tops: int) -> bool:
    """Whether a visible setup tile (on the setup slots) shows a complete figure on ``stage``."""
    for k, code in zip(F.SETUP_SLOTS, tops):
        a, b, c, d = T.figure_cells[code][k]
        if stage[a] == stage[b] == stage[c] == stage[d]:
            return True
    return False
