"""Fast single-game rules engine for the per-game environments.

The batched NumPy engine (:mod:`umbrella_env.core.engine`) pays a fixed cost of many
small array operations per call, which dominates when one game is stepped at a time
(the PettingZoo AEC env, the Gymnasium solo env).  :class:`SingleGame` implements the
same rules, state-dict, observation and legal-mask semantics for ONE game with plain
Python lists and ints, plus two tricks:

* **Canonical observation vector.**  A float32 vector ``canon`` holds every observation
  entry in the *absolute* frame (seat blocks in seat order, zone counts by absolute
  zone, absolute one-hots of actor / current / end-trigger seat).  The rule code updates
  it incrementally as the state changes; :meth:`SingleGame.observe` is then one gather
  ``canon[perm[observer]]``, where ``perm[o]`` maps every egocentric observation index
  to its absolute-frame entry (or to a constant zero entry for absent seats and zones).
* **Nibble-coded zones.**  ``zbits[z]`` has bit ``c`` set while zone ``z`` holds colour
  ``c``; the slide-phase legal mask of a seat is a row of a precomputed table indexed by
  the 16-bit word of its four zones' nibbles, and its legal ids are four precomputed tuples.

:meth:`SingleGame.new` deals exactly like ``engine.reset(state, [b], keys=[key])``: it
replays the engine's per-game random stream in Python instead of going through a
batch of one (about 4x cheaper, which matters for short solo games).

The batched engine stays the specification of record: ``tests/test_single.py`` checks
masks, state dicts, observations from every seat, scores and ranks against it on
random games of every configuration.

Internal state (``P`` seats, ``Z`` zones numbered as in the batched engine)::

    st[p][cell]        colour 0..3 of each stage cell (cell = row * 4 + col)
    z[zone * 4 + c]    umbrellas per colour in each zone; zbits[zone] non-empty colours
    dis[c]             solo discard
    stk[p * 4 + k]     stack of tile codes (tile * 2 + face), bottom -> top;
                       top[p * 4 + k] the visible code or -1; nslot[p] non-empty slots
    pl[p * 10 + s]     colour of the token's figure, -1 free; bits[p] occupancy bits,
                       ntok[p] tokens
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core import observation as O
from umbrella_env.core.components import COLOURS, ComponentSet
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import ConfigError, GameOverError, IllegalActionError
from umbrella_env.core.tables import (
    LINE_CELLS,
    PAIR_A,
    PAIR_B,
    POWER_EXTRA_TURN,
    POWER_SWAP_STAGE,
    POWER_SWAP_ZONE,
    tables_for,
)

SLIDE, FALLBACK, VALIDATE, SWAP_STAGE, SWAP_ZONE, GIVE_FACE, COVER, GAME_OVER = range(8)

_LINES: tuple[tuple[tuple[int, int, int, int], ...], ...] = tuple(
    tuple(tuple(int(x) for x in LINE_CELLS[s, l]) for l in range(4)) for s in range(4)
)
_OPP = A.OPPOSITE
_PAIRS: tuple[tuple[int, int], ...] = tuple(zip(PAIR_A.tolist(), PAIR_B.tolist()))
#: Spaces set in a 10-bit pattern.
_BITLIST: tuple[tuple[int, ...], ...] = tuple(tuple(s for s in range(10) if b >> s & 1) for b in range(1024))
#: Slide ids of one side for each nibble of non-empty colours: ids side*16 + colour*4 + line.
_SIDE_IDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        tuple(A.SLIDE_START + s * 16 + c * 4 + l for c in range(4) if n >> c & 1 for l in range(4))
        for n in range(16)
    )
    for s in range(4)
)

# --------------------------------------------------------------------------- canonical layout
# The canonical vector uses the observation's own layout for everything that does not
# depend on the observer, so every offset is a module constant:
#
#   [0, 768)        4 seat blocks in ABSOLUTE seat order (blocks of absent seats stay 0)
#   [768, 784)      own_zones slot of the observation: unused here, always 0 (= ZERO)
#   [784, 820)      all_zones slot: unused, always 0
#   [820, 899)      the other global segments; actor / current / end_trigger_seat are
#                   one-hots of the ABSOLUTE seat
#   [899, 899+4Z)   umbrella counts of every zone, absolute zone order (ZONES)
#
# observe(o) gathers canon[perm[o]]: seat block j <- block (o + j) % P, own / all zones
# <- the absolute zone entries, relative one-hots <- absolute ones, absent -> ZERO.
_LAYOUT = O.observation_layout()
_OFF = {name: start for start, _, name, _ in _LAYOUT[-len(O.GLOBAL_SEGMENTS) :]}
_SEAT_OFF = {name.split(".")[-1]: start for start, _, name, _ in _LAYOUT[: len(O.SEAT_SEGMENTS)]}
SEAT = O.SEAT_SIZE
ST, PRES, BLACK, HEIGHT, FIG = (
    _SEAT_OFF[k] for k in ("stage", "slot_present", "slot_black", "slot_height", "slot_figure")
)
PTOK, PCOL, SCORE, TOKENS = (_SEAT_OFF[k] for k in ("plate_token", "plate_colour", "score", "tokens"))
ZERO = _OFF["own_zones"]
G_DISCARD, G_NP, G_LEVEL, G_PHASE = (_OFF[k] for k in ("discard", "num_players", "plate_level", "phase"))
G_ACTOR, G_CURRENT, G_SUPPLY, G_RESERVE = (_OFF[k] for k in ("actor", "current", "supply", "reserve_used"))
G_TURN, G_END, G_END_SEAT, G_EXTRA = (
    _OFF[k] for k in ("turn_fraction", "end_triggered", "end_trigger_seat", "extra_turn")
)
G_PP, G_PB, G_PW, G_PBF = (
    _OFF[k] for k in ("passing_present", "passing_black", "passing_white_face", "passing_black_face")
)
G_LS, G_LC = _OFF["last_side"], _OFF["last_colour"]
ZONES = O.OBS_SIZE
CANON_SIZE = ZONES + 4 * A.MAX_ZONES
_RELATIVE = ("actor", "current", "end_trigger_seat")


class SingleTables:
    """Plain-Python lookup tables of one (component set, players, level, turn limit)."""

    def __init__(self, config: GameConfig) -> None:
        t = tables_for(config)
        P = self.P = config.num_players
        self.config = config
        self.solo = config.solo
        Z = self.Z = config.num_zones
        self.max_turns = config.max_turns
        self.solo_tokens = config.components.solo_tokens
        #: [P][side] zone of each seat's top / bottom / left / right side.
        self.sz: list[tuple[int, ...]] = [tuple(int(x) for x in row) for row in t.side_zone]
        #: [P][side] zone receiving the umbrella ejected by a slide entering from side.
        self.eject_zone: list[tuple[int, ...]] = [tuple(row[_OPP[side]] for side in range(4)) for row in self.sz]
        self.rel: list[list[int]] = [list(map(int, row)) for row in t.rel_zone]
        owner = [-1] * Z
        if self.solo:
            owner[1] = 0
        else:
            for p in range(P):
                owner[1 + P + p] = p
        #: Per zone, the bit of the seat whose score depends on its count: the owner of a
        #: personal zone.  Solo: none until every token is placed, then all (``score_zone_all``).
        self.score_zone = [1 << o if o >= 0 and not self.solo else 0 for o in owner]
        self.score_zone_all = [1] * Z
        self.pers4 = [4 * z for z in range(Z) if owner[z] >= 0]
        self.figc: list[list[tuple[int, ...]]] = [
            [tuple(int(x) for x in t.fig_cells[code, k]) for k in range(4)] for code in range(48)
        ]
        self.fig_grid = t.fig_grid  # [49, 4, 16] float32, row 48 (no tile) zero
        self.face_grid = t.face_grid  # [48, 16]
        self.acc = [[int(sum(1 << s for s in range(10) if t.accept[k, c, s])) for c in range(4)] for k in range(4)]
        self.bonus: list[int] = [int(x) for x in t.bonus]
        self.power: list[int] = [int(x) for x in t.power]
        self.partner: list[int] = [int(x) for x in t.partner]
        self.colour_bits = [int(sum(1 << s for s in range(10) if t.colour_space[s, c])) for c in range(4)]
        self.white = [(s, int(t.white_slot[s])) for s in range(10) if t.white_slot[s] >= 0]
        self.layouts: list[list[int]] = t.layouts.tolist()
        canon = np.zeros(CANON_SIZE, np.float32)
        canon[G_NP + P - 1] = 1
        canon[G_LEVEL + config.plate_level - 1] = 1
        self.canon0 = canon
        self.slide_table = _slide_table()
        self.perm = [self._perm(o) for o in range(P)]

    def _perm(self, o: int) -> np.ndarray:
        """Observation index -> canonical index, for observer seat ``o``."""
        P = self.P
        perm = np.arange(O.OBS_SIZE, dtype=np.intp)
        for j in range(O.MAX_SEATS):
            block = perm[j * SEAT : (j + 1) * SEAT]
            block[:] = np.arange(SEAT) + ((o + j) % P) * SEAT if j < P else ZERO
        for side in range(4):
            for c in range(4):
                perm[_OFF["own_zones"] + side * 4 + c] = ZONES + self.sz[o][side] * 4 + c
        for k in range(A.MAX_ZONES):
            zone = -1 if self.solo else self.rel[o][k]
            for c in range(4):
                perm[_OFF["all_zones"] + k * 4 + c] = ZONES + zone * 4 + c if zone >= 0 else ZERO
        for name in _RELATIVE:
            for j in range(4):
                perm[_OFF[name] + j] = _OFF[name] + (o + j) % P if j < P else ZERO
        return perm


_CACHE: dict[tuple[int, int, int, int], tuple[GameConfig, SingleTables]] = {}


def single_tables(config: GameConfig) -> SingleTables:
    """The (cached) tables of a configuration."""
    key = (id(config.components), config.num_players, config.plate_level, config.max_turns)
    hit = _CACHE.get(key)
    if hit is not None and hit[0].components is config.components:
        return hit[1]
    t = SingleTables(config)
    _CACHE[key] = (config, t)
    return t


_SLIDE_TABLE: list[np.ndarray] = []


def _slide_table() -> np.ndarray:
    """[65536, 64] bool (4 MiB, built on first use): row ``key`` holds the 64 slide flags
    when bit ``side*4 + colour`` of ``key`` says that the side's zone holds that colour."""
    if not _SLIDE_TABLE:
        flags = (np.arange(1 << 16, dtype=np.int64)[:, None] >> np.arange(16)) & 1
        _SLIDE_TABLE.append(np.repeat(flags.astype(bool), 4, axis=1))
    return _SLIDE_TABLE[0]


# --------------------------------------------------------------------------- the game
class SingleGame:
    """One game of Umbrella (1-4 players), fast to step and observe.

    Build with :meth:`new`, :meth:`from_batch` or :meth:`from_dict`.  :meth:`step` trusts
    its input (the caller guarantees legality); :meth:`step_checked` raises like
    :func:`engine.step` and leaves the state unchanged on error.
    """

    __slots__ = (
        "config", "T", "st", "z", "zbits", "dis", "stk", "top", "nslot", "pl", "bits", "ntok",
        "supply", "reserve_used", "current", "phase", "end_by", "turn", "passing", "extra",
        "last_side", "last_colour", "terminated", "truncated", "canon", "cv", "_vids", "_dirty", "_szone",
    )  # fmt: skip

    config: GameConfig

    # ------------------------------------------------------------------- construction
    @classmethod
    def new(cls, config: GameConfig, key: int) -> "SingleGame":
        """A new game dealt from ``key``, identical to a batch game reset with ``keys=[key]``.

        The deal is replayed in plain Python from the batched engine's per-game random
        stream (:func:`_deal`); in the (never observed) case of tied random draws, or for a
        key outside the 64-bit range, it falls back to ``engine.reset`` on a batch of one.
        """
        T = single_tables(config)
        dealt = _deal(T, key) if isinstance(key, (int, np.integer)) and -(2**63) <= key < 2**64 else None
        if dealt is None:
            state = E.allocate(config, 1)
            E.reset(state, np.zeros(1, np.intp), keys=[key])
            return cls.from_batch(state, 0)
        g = cls.__new__(cls)
        g.config = config
        g.T = T
        g.st, g.z, g.stk = dealt
        g.dis = [0, 0, 0, 0]
        g.pl = [-1] * (10 * T.P)
        g.supply = config.initial_supply
        g.reserve_used = 0
        g.current = 0
        g.phase = SLIDE
        g.end_by = -1
        g.turn = 0
        g.passing = -1
        g.extra = False
        g.last_side = g.last_colour = -1
        g.terminated = g.truncated = False
        g._rebuild()
        return g

    @classmethod
    def from_batch(cls, state: E.BatchState, b: int) -> "SingleGame":
        """A copy of game ``b`` of a batch."""
        cfg = state.config
        P = cfg.num_players
        g = cls.__new__(cls)
        g.config = cfg
        g.T = single_tables(cfg)
        g.st = state.stage[b].reshape(P, 16).tolist()
        g.z = state.zones[b].reshape(-1).tolist()
        g.dis = state.discard[b].tolist()
        g.stk = [[c for c in reversed(row) if c >= 0] for row in state.stacks[b].reshape(P * 4, -1).tolist()]
        g.pl = state.plates[b].reshape(-1).tolist()
        g.supply = int(state.supply[b])
        g.reserve_used = int(state.reserve_used[b])
        g.current = int(state.current[b])
        g.phase = int(state.phase[b])
        g.end_by = int(state.end_by[b])
        g.turn = int(state.turn[b])
        g.passing = int(state.passing[b])
        g.extra = bool(state.extra_turn[b])
        g.last_side = int(state.last_side[b])
        g.last_colour = int(state.last_colour[b])
        g.terminated = bool(state.terminated[b])
        g.truncated = bool(state.truncated[b])
        g._rebuild()
        return g

    def to_batch(self, state: E.BatchState, b: int) -> None:
        """Write this game into slot ``b`` of a batch of the same configuration."""
        cfg, mine = state.config, self.config
        same = (cfg.num_players, cfg.plate_level, cfg.max_turns) == (mine.num_players, mine.plate_level, mine.max_turns)
        if not same or cfg.components is not mine.components:
            raise ConfigError(f"to_batch: the batch is configured as {cfg}, the game as {mine}")
        P = cfg.num_players
        state.stage[b] = np.array(self.st, np.int8).reshape(P, 4, 4)
        state.zones[b] = np.array(self.z, np.int8).reshape(-1, 4)
        state.discard[b] = self.dis
        H = state.stacks.shape[3]
        stacks = np.full((P * 4, H), -1, np.int8)
        for i, s in enumerate(self.stk):
            if s:
                stacks[i, : len(s)] = s[::-1]
        state.stacks[b] = stacks.reshape(P, 4, H)
        state.plates[b] = np.array(self.pl, np.int8).reshape(P, 10)
        state.supply[b] = self.supply
        state.reserve_used[b] = self.reserve_used
        state.current[b] = self.current
        state.phase[b] = self.phase
        state.end_by[b] = self.end_by
        state.turn[b] = self.turn
        state.passing[b] = self.passing
        state.extra_turn[b] = self.extra
        state.last_side[b] = self.last_side
        state.last_colour[b] = self.last_colour
        state.terminated[b] = self.terminated
        state.truncated[b] = self.truncated

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], components: ComponentSet | None = None) -> "SingleGame":
        """A game from a state dict, validated by :func:`serialize.validate_state_dict`."""
        return cls.from_batch(batch_io.from_dict(d, components=components), 0)

    def to_dict(self) -> dict[str, Any]:
        """The canonical state dict (equal to :func:`batch_io.to_dict` of the same game)."""
        T = self.T
        P = T.P
        z = self.z
        zs = [_zone_string(z[4 * i : 4 * i + 4]) for i in range(T.Z)]
        if T.solo:
            zones: dict[str, Any] = {"top": zs[0], "personal": zs[1], "left": zs[2], "right": zs[3]}
            zones["discard"] = _zone_string(self.dis)
        else:
            zones = {"central": zs[0], "side": zs[1 : 1 + P], "personal": zs[1 + P : 1 + 2 * P]}
        last = None
        if self.last_side >= 0:
            last = {"side": A.SIDES[self.last_side], "colour": COLOURS[self.last_colour]}
        return {
            "num_players": P,
            "plate_level": self.config.plate_level,
            "max_turns": self.config.max_turns,
            "current_player": self.current,
            "phase": A.PHASES[self.phase],
            "turn": self.turn,
            "stages": [["".join([COLOURS[c] for c in s[r * 4 : r * 4 + 4]]) for r in range(4)] for s in self.st],
            "zones": zones,
            "slots": [[[_tile(c) for c in self.stk[p * 4 + k]] for k in range(4)] for p in range(P)],
            "plates": [[None if c < 0 else COLOURS[c] for c in self.pl[p * 10 : p * 10 + 10]] for p in range(P)],
            "supply": self.supply,
            "reserve_used": self.reserve_used,
            "end_triggered_by": None if self.end_by < 0 else self.end_by,
            "passing": None if self.passing < 0 else _tile(self.passing),
            "extra_turn": self.extra,
            "last_slide": last,
            "terminated": self.terminated,
            "truncated": self.truncated,
            "scores": self.scores(),
        }

    def clone(self) -> "SingleGame":
        """An independent copy."""
        g = SingleGame.__new__(SingleGame)
        g.config = self.config
        g.T = self.T
        g.st = [s[:] for s in self.st]
        g.z = self.z[:]
        g.zbits = self.zbits[:]
        g.dis = self.dis[:]
        g.stk = [s[:] for s in self.stk]
        g.top = self.top[:]
        g.nslot = self.nslot[:]
        g.pl = self.pl[:]
        g.bits = self.bits[:]
        g.ntok = self.ntok[:]
        g.canon = self.canon.copy()
        g.cv = memoryview(g.canon)
        g._vids = self._vids[:]
        g._szone = self._szone  # a shared read-only table
        g.supply = self.supply
        g.reserve_used = self.reserve_used
        g.current = self.current
        g.phase = self.phase
        g.end_by = self.end_by
        g.turn = self.turn
        g.passing = self.passing
        g.extra = self.extra
        g.last_side = self.last_side
        g.last_colour = self.last_colour
        g.terminated = self.terminated
        g.truncated = self.truncated
        g._dirty = self._dirty
        return g

    __copy__ = clone

    def __deepcopy__(self, memo: dict) -> "SingleGame":
        return self.clone()

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "state": self.to_dict()}

    def __setstate__(self, data: dict[str, Any]) -> None:
        other = SingleGame.from_dict(data["state"], components=data["config"].components)
        for name in SingleGame.__slots__:
            object.__setattr__(self, name, getattr(other, name))
        self.config = data["config"]
        self.T = single_tables(self.config)

    def _rebuild(self) -> None:
        """Derive every cached structure (bits, tops, canonical vector) from the state."""
        T = self.T
        P = T.P
        z = self.z
        self.zbits = [sum(1 << c for c in range(4) if z[4 * i + c] > 0) for i in range(T.Z)]
        self.top = [s[-1] if s else -1 for s in self.stk]
        self.nslot = [sum(1 for k in range(4) if self.top[p * 4 + k] >= 0) for p in range(P)]
        self.bits = [sum(1 << s for s in range(10) if self.pl[p * 10 + s] >= 0) for p in range(P)]
        self.ntok = [bin(b).count("1") for b in self.bits]
        self._szone = T.score_zone_all if T.solo and self.ntok[0] >= T.solo_tokens else T.score_zone
        c = self.canon = T.canon0.copy()
        cv = self.cv = memoryview(c)
        fig = T.fig_grid
        for p in range(P):
            base = p * SEAT
            for cell, col in enumerate(self.st[p]):
                cv[base + ST + 4 * cell + col] = 1
            for k in range(4):
                code = self.top[p * 4 + k]
                if code >= 0:  # an empty slot is all zero already
                    cv[base + PRES + k] = 1
                    cv[base + BLACK + k] = code & 1
                    cv[base + HEIGHT + k] = len(self.stk[p * 4 + k])
                    c[base + FIG + 16 * k : base + FIG + 16 * k + 16] = fig[code, k]
            for s, col in enumerate(self.pl[p * 10 : p * 10 + 10]):
                if col >= 0:
                    cv[base + PTOK + s] = 1
                    cv[base + PCOL + 4 * s + col] = 1
            cv[base + TOKENS] = self.ntok[p]
        for i, n in enumerate(z):
            cv[ZONES + i] = n
        for i, n in enumerate(self.dis):
            cv[G_DISCARD + i] = n
        cv[G_PHASE + self.phase] = 1
        cv[G_ACTOR + self.actor] = 1
        cv[G_CURRENT + self.current] = 1
        cv[G_SUPPLY] = self.supply
        cv[G_RESERVE] = self.reserve_used
        cv[G_TURN] = self.turn / T.max_turns
        if self.end_by >= 0:
            cv[G_END] = 1
            cv[G_END_SEAT + self.end_by] = 1
        cv[G_EXTRA] = int(self.extra)
        if self.passing >= 0:
            self._sync_passing()
        if self.last_side >= 0:
            cv[G_LS + self.last_side] = 1
            cv[G_LC + self.last_colour] = 1
        self._vids = self._scorable_ids() if self.phase == VALIDATE else []
        self._dirty = (1 << P) - 1
        self._write_scores()

    # ------------------------------------------------------------------- canonical helpers
    def _sync_slot(self, p: int, k: int) -> None:
        """Rewrite the observation entries of slot ``k`` of seat ``p``."""
        cv = self.cv
        base = p * SEAT
        code = self.top[p * 4 + k]
        if code >= 0:
            cv[base + PRES + k] = 1
            cv[base + BLACK + k] = code & 1
        else:
            cv[base + PRES + k] = 0
            cv[base + BLACK + k] = 0
        cv[base + HEIGHT + k] = len(self.stk[p * 4 + k])
        f = base + FIG + 16 * k
        self.canon[f : f + 16] = self.T.fig_grid[code if code >= 0 else 48, k]

    def _sync_passing(self) -> None:
        c = self.canon
        code = self.passing
        if code >= 0:
            self.cv[G_PP] = 1
            self.cv[G_PB] = code & 1
            tile = code >> 1
            c[G_PW : G_PW + 16] = self.T.face_grid[2 * tile]
            c[G_PBF : G_PBF + 16] = self.T.face_grid[2 * tile + 1]
        else:
            self.cv[G_PP] = 0
            self.cv[G_PB] = 0
            c[G_PW : G_PBF + 16] = 0

    def _write_scores(self) -> None:
        """Rewrite the score entries of the seats flagged in ``_dirty``."""
        cv = self.cv
        dirty = self._dirty
        if self.T.solo:
            cv[SCORE] = self.scores()[0]
        else:
            z, ntok, bits, bonus = self.z, self.ntok, self.bits, self.T.bonus
            for p, zi in enumerate(self.T.pers4):
                if dirty >> p & 1:
                    n = z[zi] + z[zi + 1] + z[zi + 2] + z[zi + 3]
                    cv[p * SEAT + SCORE] = 2 * ntok[p] + bonus[bits[p]] + (2 if n == 0 else -n)
        self._dirty = 0

    def _set_phase(self, ph: int) -> None:
        cv = self.cv
        cv[G_PHASE + self.phase] = 0
        cv[G_PHASE + ph] = 1
        self.phase = ph

    # ------------------------------------------------------------------- queries
    @property
    def actor(self) -> int:
        """The seat taking the current decision (the receiver in phase cover)."""
        if self.phase == COVER:
            return (self.current + 1) % self.T.P
        return self.current

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated

    def scores(self) -> list[int]:
        """Scores by the end-of-game formula applied now (RULES.md §5, §8)."""
        T = self.T
        z = self.z
        bonus = T.bonus
        if T.solo:
            t = self.ntok[0]
            s = 2 * t + bonus[self.bits[0]]
            if t >= T.solo_tokens:
                s += sum(z)
            return [s]
        out = []
        ntok, bits = self.ntok, self.bits
        for p, zi in enumerate(T.pers4):
            n = z[zi] + z[zi + 1] + z[zi + 2] + z[zi + 3]
            out.append(2 * ntok[p] + bonus[bits[p]] + (2 if n == 0 else -n))
        return out

    def ranks(self) -> list[int]:
        """Rank 0 is best: the number of players strictly better (decision 13)."""
        s = self.scores()
        z = self.z
        pers = [z[zi] + z[zi + 1] + z[zi + 2] + z[zi + 3] for zi in self.T.pers4]
        P = len(s)
        return [sum(1 for q in range(P) if s[q] > s[p] or (s[q] == s[p] and pers[q] < pers[p])) for p in range(P)]

    def legal_mask(self) -> np.ndarray:
        """bool [NUM_ACTIONS]: the legal actions of the current decision (all False when done); a new array."""
        ph = self.phase
        if ph == SLIDE:
            zb = self.zbits
            a, b, c, d = self.T.sz[self.current]
            m = np.zeros(A.NUM_ACTIONS, bool)
            m[: A.NUM_SLIDE] = self.T.slide_table[zb[a] | zb[b] << 4 | zb[c] << 8 | zb[d] << 12]
            return m
        m = np.zeros(A.NUM_ACTIONS, bool)
        if ph == VALIDATE:
            m[self._vids] = True
        elif ph == FALLBACK:
            m[A.FALLBACK_START : A.VALIDATE_START] = np.repeat(self._fallback_flags(), 16)
        elif ph == SWAP_STAGE:
            m[self._swap_stage_ids()] = True
        elif ph == SWAP_ZONE:
            m[A.SWAP_ZONE_START : A.SWAP_ZONE_START + 256] = self._swap_zone_flags()
            m[A.SWAP_ZONE_PASS] = True
        elif ph == GIVE_FACE:
            m[A.GIVE_FACE_START : A.COVER_START] = True
        elif ph == COVER:
            m[A.COVER_START :] = True
        return m

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the current decision ([] when done)."""
        ph = self.phase
        if ph == SLIDE:
            zb = self.zbits
            a, b, c, d = self.T.sz[self.current]
            return [*_SIDE_IDS[0][zb[a]], *_SIDE_IDS[1][zb[b]], *_SIDE_IDS[2][zb[c]], *_SIDE_IDS[3][zb[d]]]
        if ph == VALIDATE:
            return list(self._vids)
        if ph == FALLBACK:
            return (np.flatnonzero(np.repeat(self._fallback_flags(), 16)) + A.FALLBACK_START).tolist()
        if ph == SWAP_STAGE:
            return self._swap_stage_ids()
        if ph == SWAP_ZONE:
            return (np.flatnonzero(self._swap_zone_flags()) + A.SWAP_ZONE_START).tolist() + [A.SWAP_ZONE_PASS]
        if ph == GIVE_FACE:
            return list(range(A.GIVE_FACE_START, A.COVER_START))
        if ph == COVER:
            return list(range(A.COVER_START, A.NUM_ACTIONS))
        return []

    def _fallback_flags(self) -> np.ndarray:
        """[36] bool: the egocentric (zone, colour) pairs the fallback may take from."""
        zb = self.zbits
        return np.array([zone >= 0 and zb[zone] >> c & 1 == 1 for zone in self.T.rel[self.current] for c in range(4)])

    def _swap_stage_ids(self) -> list[int]:
        s = self.st[self.current]
        return [A.SWAP_STAGE_START + i for i, (x, y) in enumerate(_PAIRS) if s[x] != s[y]] + [A.SWAP_STAGE_PASS]

    def _swap_zone_flags(self) -> np.ndarray:
        """[256] bool: the (cell, side, colour) zone swaps that change something."""
        zb = self.zbits
        own = np.array([zb[zone] >> c & 1 for zone in self.T.sz[self.current] for c in range(4)], bool)
        differ = np.array(self.st[self.current])[:, None] != np.arange(4)  # [cell, colour]
        return (own.reshape(1, 4, 4) & differ[:, None, :]).reshape(256)

    def _scorable_ids(self) -> list[int]:
        """Validate ids open to the current player (complete figure, accepting free space)."""
        p = self.current
        T = self.T
        s = self.st[p]
        top = self.top
        figc = T.figc
        out: list[int] = []
        for k in range(4):
            code = top[p * 4 + k]
            if code >= 0:
                a, b, c, d = figc[code][k]
                col = s[a]
                if s[b] == col and s[c] == col and s[d] == col:
                    acc = T.acc[k][col] & ~self.bits[p]
                    if acc:
                        base = A.VALIDATE_START + 10 * k
                        out.extend([base + x for x in _BITLIST[acc]])
        return out

    # ------------------------------------------------------------------- observation
    def observe(self, seat: int | None = None) -> np.ndarray:
        """float32 [OBS_SIZE] observation from ``seat`` (default: the actor); a new array."""
        if self._dirty:
            self._write_scores()
        if seat is None:
            seat = (self.current + 1) % self.T.P if self.phase == COVER else self.current
        elif isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < self.T.P:
            raise ValueError(f"observer seat must be an int in [0, {self.T.P}), got {seat!r}")
        return self.canon[self.T.perm[seat]]

    # ------------------------------------------------------------------- stepping
    def step_checked(self, action: Any) -> None:
        """Apply a legal action; raise :class:`ActionError` (not an id), :class:`GameOverError`
        or :class:`IllegalActionError` otherwise, leaving the state unchanged."""
        a = A.check_action_id(action)
        if self.terminated or self.truncated:
            raise GameOverError(
                f"the game is over ({'terminated' if self.terminated else 'truncated'}); "
                f"action {a} ({A.ACTION_STRINGS[a]!r}) cannot be applied"
            )
        if A.ACTION_PHASE[a] != self.phase or not self.legal_mask()[a]:
            legal = self.legal_actions()
            examples = ", ".join(repr(A.ACTION_STRINGS[x]) for x in legal[:4])
            raise IllegalActionError(
                f"action {a} ({A.ACTION_STRINGS[a]!r}) is not legal in phase {A.PHASES[self.phase]!r} "
                f"(seat {self.actor} to decide); {len(legal)} legal action(s), e.g. {examples}"
            )
        self.step(a)

    def step(self, action: int) -> None:
        """Apply a legal action of the current decision, without any check."""
        ph = self.phase
        if ph == SLIDE:
            self._slide(action)
        elif ph == VALIDATE:
            self._validate(action - A.VALIDATE_START)
        elif ph == FALLBACK:
            self._fallback(action - A.FALLBACK_START)
        elif ph == GIVE_FACE:
            self.passing = (self.passing & ~1) | (action - A.GIVE_FACE_START)
            self.cv[G_PB] = self.passing & 1
            self._place()
        elif ph == COVER:
            self._cover(action - A.COVER_START)
        elif ph == SWAP_STAGE:
            self._swap_stage(action)
        elif ph == SWAP_ZONE:
            self._swap_zone(action)

    def _slide(self, a: int) -> None:
        # The hot path: _take + _push + the scorable check, inlined.
        side = a >> 4
        col = (a >> 2) & 3
        p = self.current
        T = self.T
        z, cv = self.z, self.cv
        zone = T.sz[p][side]
        i = 4 * zone + col
        n = z[i] = z[i] - 1
        cv[ZONES + i] = n
        if n == 0:
            self.zbits[zone] &= ~(1 << col)
        self._dirty |= self._szone[zone]
        # Push (RULES.md §4.1): the line shifts by one cell, the far cell is ejected.
        s = self.st[p]
        x0, x1, x2, x3 = _LINES[side][a & 3]
        v0, v1, v2, ej = s[x0], s[x1], s[x2], s[x3]
        s[x0] = col
        s[x1] = v0
        s[x2] = v1
        s[x3] = v2
        b = p * SEAT + ST
        x0, x1, x2, x3 = b + 4 * x0, b + 4 * x1, b + 4 * x2, b + 4 * x3
        cv[x0 + v0] = 0
        cv[x1 + v1] = 0
        cv[x2 + v2] = 0
        cv[x3 + ej] = 0
        cv[x0 + col] = 1
        cv[x1 + v0] = 1
        cv[x2 + v1] = 1
        cv[x3 + v2] = 1
        if T.solo:
            d = self.dis[ej] = self.dis[ej] + 1
            cv[G_DISCARD + ej] = d
            self.last_side = side
            self.last_colour = ej
            cv[G_LS + side] = 1
            cv[G_LC + ej] = 1
        else:
            zone = T.eject_zone[p][side]
            i = 4 * zone + ej
            n = z[i] = z[i] + 1
            cv[ZONES + i] = n
            self.zbits[zone] |= 1 << ej
            self._dirty |= self._szone[zone]
        ids = self._scorable_ids()
        if ids:
            self._vids = ids
            cv[G_PHASE + self.phase] = 0
            cv[G_PHASE + VALIDATE] = 1
            self.phase = VALIDATE
        else:
            self._end_turn()

    def _fallback(self, a: int) -> None:
        rel, col, side, line = a >> 6, (a >> 4) & 3, (a >> 2) & 3, a & 3
        p = self.current
        zone = self.T.rel[p][rel]
        i = 4 * zone + col
        n = self.z[i] = self.z[i] - 1
        self.cv[ZONES + i] = n
        if n == 0:
            self.zbits[zone] &= ~(1 << col)
        self._dirty |= self.T.score_zone[zone]
        self._push(p, side, line, col)
        ids = self._scorable_ids()
        if ids:
            self._vids = ids
            self._set_phase(VALIDATE)
        else:
            self._end_turn()

    def _push(self, p: int, side: int, line: int, col: int) -> None:
        """Push ``col`` into a line of seat ``p``'s stage; the ejected umbrella goes to the
        zone opposite the entry side (2-4 players; the fallback does not exist in solo)."""
        s = self.st[p]
        cells = _LINES[side][line]
        ej = s[cells[3]]
        cv = self.cv
        b = p * SEAT + ST
        for x in cells:
            cv[b + 4 * x + s[x]] = 0
        s[cells[3]], s[cells[2]], s[cells[1]], s[cells[0]] = s[cells[2]], s[cells[1]], s[cells[0]], col
        for x in cells:
            cv[b + 4 * x + s[x]] = 1
        zone = self.T.eject_zone[p][side]
        i = 4 * zone + ej
        n = self.z[i] = self.z[i] + 1
        cv[ZONES + i] = n
        self.zbits[zone] |= 1 << ej
        self._dirty |= self.T.score_zone[zone]

    def _validate(self, a: int) -> None:
        slot, space = divmod(a, 10)
        T = self.T
        p = self.current
        cv = self.cv
        i = p * 4 + slot
        code = self.top[i]
        col = self.st[p][T.figc[code][slot][0]]
        self.pl[p * 10 + space] = col
        self.bits[p] |= 1 << space
        t = self.ntok[p] = self.ntok[p] + 1
        base = p * SEAT
        cv[base + PTOK + space] = 1
        cv[base + PCOL + space * 4 + col] = 1
        cv[base + TOKENS] = t
        if self.supply > 0:
            self.supply -= 1
            cv[G_SUPPLY] = self.supply
        else:
            self.reserve_used += 1
            cv[G_RESERVE] = self.reserve_used
        # The tile leaves its slot, revealing the one below, and is in transit.
        stack = self.stk[i]
        stack.pop()
        if stack:
            self.top[i] = stack[-1]
        else:
            self.top[i] = -1
            self.nslot[p] -= 1
        self._sync_slot(p, slot)
        self.passing = code
        self._sync_passing()
        self._vids = []
        self._dirty |= 1 << p
        if T.solo and t >= T.solo_tokens:
            self._szone = T.score_zone_all
        # Level-4 powers fire when the space fills the last free one of its pair (RULES.md §7).
        power = T.power[space] if self.pl[p * 10 + T.partner[space]] >= 0 else -1
        if power == POWER_EXTRA_TURN:
            if T.solo:  # the umbrella ejected this turn returns to the zone opposite its entry
                zone = T.eject_zone[0][self.last_side]
                lc = self.last_colour
                self.dis[lc] -= 1
                cv[G_DISCARD + lc] = self.dis[lc]
                j = 4 * zone + lc
                self.z[j] += 1
                cv[ZONES + j] = self.z[j]
                self.zbits[zone] |= 1 << lc
            else:
                self.extra = True
                cv[G_EXTRA] = 1
        elif power == POWER_SWAP_STAGE:
            self._set_phase(SWAP_STAGE)
            return
        elif power == POWER_SWAP_ZONE:
            self._set_phase(SWAP_ZONE)
            return
        self._begin_pass()

    def _swap_stage(self, a: int) -> None:
        if a != A.SWAP_STAGE_PASS:
            x, y = _PAIRS[a - A.SWAP_STAGE_START]
            p = self.current
            s = self.st[p]
            vx, vy = s[x], s[y]
            s[x], s[y] = vy, vx
            cv = self.cv
            b = p * SEAT + ST
            cv[b + 4 * x + vx] = 0
            cv[b + 4 * y + vy] = 0
            cv[b + 4 * x + vy] = 1
            cv[b + 4 * y + vx] = 1
        self._begin_pass()

    def _swap_zone(self, a: int) -> None:
        if a != A.SWAP_ZONE_PASS:
            rel = a - A.SWAP_ZONE_START
            cell, side, col = rel >> 4, (rel >> 2) & 3, rel & 3
            p = self.current
            s = self.st[p]
            old = s[cell]
            s[cell] = col
            zone = self.T.sz[p][side]
            z, cv = self.z, self.cv
            i, j = 4 * zone + col, 4 * zone + old
            z[i] -= 1
            z[j] += 1
            cv[ZONES + i] = z[i]
            cv[ZONES + j] = z[j]
            self.zbits[zone] = sum(1 << k for k in range(4) if z[4 * zone + k] > 0)
            b = p * SEAT + ST + 4 * cell
            cv[b + old] = 0
            cv[b + col] = 1
        self._begin_pass()

    def _begin_pass(self) -> None:
        """Hand the validated tile on (RULES.md §4.3; solo §8)."""
        T = self.T
        if T.P == 2:
            self._set_phase(GIVE_FACE)
            return
        if T.solo and self.passing & 1 == 0:  # a white tile is discarded
            self.passing = -1
            self._sync_passing()
            self._end_turn()
            return
        self.passing ^= 1
        self.cv[G_PB] = self.passing & 1
        self._place()

    def _place(self) -> None:
        """The tile in transit goes to the receiver's first empty slot, or a cover is asked."""
        r = (self.current + 1) % self.T.P
        top = self.top
        for k in range(4):
            i = r * 4 + k
            if top[i] < 0:
                self.stk[i].append(self.passing)
                top[i] = self.passing
                self.nslot[r] += 1
                self._sync_slot(r, k)
                self.passing = -1
                self._sync_passing()
                self._end_turn()
                return
        self._set_phase(COVER)
        self.cv[G_ACTOR + self.current] = 0
        self.cv[G_ACTOR + r] = 1

    def _cover(self, k: int) -> None:
        r = (self.current + 1) % self.T.P
        i = r * 4 + k
        self.stk[i].append(self.passing)
        self.top[i] = self.passing
        self._sync_slot(r, k)
        self.passing = -1
        self._sync_passing()
        self._end_turn()

    def _end_turn(self) -> None:
        """End check after a whole turn, then the next player (RULES.md §4.4, §5, §8)."""
        T = self.T
        cv = self.cv
        cur = self.current
        actor = (cur + 1) % T.P if self.phase == COVER else cur
        turn = self.turn = self.turn + 1
        cv[G_TURN] = turn / T.max_turns
        if T.solo:
            ended = self._solo_over()
            nxt = cur
            if self.last_side >= 0:
                cv[G_LS + self.last_side] = 0
                cv[G_LC + self.last_colour] = 0
                self.last_side = self.last_colour = -1
        else:
            trig = self.end_by
            if trig < 0 and (self.supply == 0 or 0 in self.nslot or max(self.ntok) >= 10):
                trig = self.end_by = cur
                cv[G_END] = 1
                cv[G_END_SEAT + cur] = 1
            nxt = (cur + 1) % T.P
            ended = trig >= 0 and nxt == trig
            if self.extra:
                if trig < 0:
                    nxt = cur
                self.extra = False
                cv[G_EXTRA] = 0
        ph = self.phase
        cv[G_PHASE + ph] = 0
        if ended or turn >= T.max_turns:
            self.terminated = ended
            self.truncated = not ended
            nxt = cur
            ph = GAME_OVER
        elif T.solo:
            ph = SLIDE
        else:
            zb = self.zbits
            a, b, c, d = T.sz[nxt]
            ph = FALLBACK if (zb[a] | zb[b] | zb[c] | zb[d]) == 0 else SLIDE
        cv[G_PHASE + ph] = 1
        self.phase = ph
        if nxt != cur:
            cv[G_CURRENT + cur] = 0
            cv[G_CURRENT + nxt] = 1
            self.current = nxt
        if actor != nxt:
            cv[G_ACTOR + actor] = 0
            cv[G_ACTOR + nxt] = 1

    def _solo_over(self) -> bool:
        """Solo end conditions (RULES.md §8) after a turn."""
        T = self.T
        if self.ntok[0] >= T.solo_tokens or self.nslot[0] == 0 or not any(self.zbits):
            return True
        # "No figure can be completed any more": no colour that could still be scored has
        # 4 umbrellas in stage + zones.  Those are the 9 of a colour not in the discard.
        free = ~self.bits[0]
        top = self.top
        white = any(free >> s & 1 and top[k] >= 0 for s, k in T.white)
        dis = self.dis
        cb = T.colour_bits
        for col in range(4):
            if dis[col] <= 5 and (white or free & cb[col]):
                return False
        return True

    # ------------------------------------------------------------------- misc
    def __repr__(self) -> str:
        return (
            f"SingleGame(P={self.T.P}, level={self.config.plate_level}, turn={self.turn}, "
            f"phase={A.PHASES[self.phase]!r}, current={self.current})"
        )


# --------------------------------------------------------------------------- dealing
_M64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


class _Stream:
    """The batched engine's per-game random stream (``engine._GameStreams``) for one key,
    generated in blocks (NumPy uint64 arithmetic wraps exactly like the engine's)."""

    _BLOCK = 96  # covers a whole deal without redraws at every player count
    _STEPS = np.arange(1, _BLOCK + 1, dtype=np.uint64) * np.uint64(_GAMMA)  # counter * gamma, wrapped

    def __init__(self, key: int) -> None:
        self.key_gamma = (int(key) * _GAMMA) & _M64
        self.values: list[float] = []
        self.pos = 0

    def _extend(self) -> None:
        # counter values len(values)+1 .. len(values)+_BLOCK
        x = self._STEPS + np.uint64((self.key_gamma + len(self.values) * _GAMMA) & _M64)
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
        x >>= np.uint64(11)
        self.values += (x.astype(np.float64) * (1.0 / (1 << 53))).tolist()

    def random(self, n: int) -> list[float]:
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


def _deal(T: SingleTables, key: int) -> tuple[list[list[int]], list[int], list[list[int]]] | None:
    """(stages, zone counts, stacks) of a new game: ``engine.reset`` for one key, step by
    step (RULES.md §3, §8; decisions 9-10).  None if a tie makes the result ambiguous."""
    rnd = _Stream(key)
    P, solo = T.P, T.solo
    order = _argsort(rnd.random(len(T.layouts)))
    if order is None:
        return None
    stages = [list(T.layouts[i]) for i in order[:P]]
    if solo:
        perm = _argsort(rnd.random(20))
        if perm is None:
            return None
        deck = [i // 5 for i in perm]  # np.repeat(arange(4), 5)[perm]
        zones = [0] * 16
        for z in range(4):
            for colour in deck[5 * z : 5 * z + 5]:
                zones[4 * z + colour] += 1
    else:
        zones = [1] * (4 * T.Z)
    per = 3 if solo else 2
    n_tiles = 2 * per
    tiles = _argsort(rnd.random(24))
    if tiles is None:
        return None
    faces = [1] * (P * n_tiles) if solo else [int(x < 0.5) for x in rnd.random(P * n_tiles)]
    codes = [[2 * tiles[p * n_tiles + j] + faces[p * n_tiles + j] for j in range(n_tiles)] for p in range(P)]
    for _ in range(1000):
        # Redraw the first player (in seat order) with a complete visible figure (§3.3).
        bad = next((p for p in range(P) if _setup_complete(T, stages[p], codes[p][0], codes[p][per])), None)
        if bad is None:
            break
        held = {c >> 1 for p in range(P) if p != bad for c in codes[p]}
        draw = [x + 2.0 if i in held else x for i, x in enumerate(rnd.random(24))]
        new_tiles = _argsort(draw)
        if new_tiles is None:
            return None
        new_faces = [1] * n_tiles if solo else [int(x < 0.5) for x in rnd.random(n_tiles)]
        codes[bad] = [2 * new_tiles[j] + new_faces[j] for j in range(n_tiles)]
    else:  # pragma: no cover - would need a pathological component set
        return None
    stacks: list[list[int]] = []
    for p in range(P):  # codes[:per] go on slot 0 top first, codes[per:] on slot 1
        stacks += [codes[p][per - 1 :: -1], codes[p][: per - 1 : -1], [], []]
    return stages, zones, stacks


def _setup_complete(T: SingleTables, stage: list[int], *tops: int) -> bool:
    """Whether a visible tile (slots 0 and 1) shows a complete figure on ``stage``."""
    for k, code in enumerate(tops):
        a, b, c, d = T.figc[code][k]
        if stage[a] == stage[b] == stage[c] == stage[d]:
            return True
    return False


def _zone_string(counts: list[int]) -> str:
    """Counts per colour -> canonical zone string (as :func:`serialize.zone_string`)."""
    return "B" * counts[0] + "G" * counts[1] + "R" * counts[2] + "Y" * counts[3]


def _tile(code: int) -> dict[str, Any]:
    return {"tile": code >> 1, "face": A.FACES[code & 1]}
