"""The batched rules engine: many games of one configuration stepped per call.

Game facts (per configuration; see also ``actions.py`` and ``observation.py``):

=====================  ==========================================================
players                1 (solo) to 4, seats 0..P-1, player 0 starts
actions                ``NUM_ACTIONS`` = 968 flat ids, one per decision (actions.py)
decisions per turn     1 to 5 (slide, validate, swap, give face, cover)
max game length        ``config.max_turns`` turns (default 3000) -> at most 5x that many steps
score range            default components: solo 0..35 (levels 1-2), 0..38 (3-4);
                       2-4 players -n (n umbrellas in the personal zone) .. 38 (1-2), 34 (3-4)
=====================  ==========================================================

State arrays (``BatchState``), game axis first, ``B`` games, ``P`` seats,
``Z`` zones (2P+1 at 2-4 players: 0 central, 1+i side zone i, 1+P+i personal zone of
seat i; 4 in solo, indexed by side: 0 top, 1 personal, 2 left, 3 right), ``H`` the
deepest possible stack (4P, or 6 in solo):

===============  ================  =====  =================================================
array            shape             dtype  meaning
===============  ================  =====  =================================================
stage            [B, P, 4, 4]      int8   colour 0..3 (B G R Y) of each stage cell
zones            [B, Z, 4]         int8   umbrellas per colour in each waiting zone
discard          [B, 4]            int8   solo discard per colour (zero at 2-4 players)
stacks           [B, P, 4, H]      int8   tile code ``tile*2 + face`` (face 0 white, 1 black),
                                          **index 0 is the top**, -1 below the bottom
plates           [B, P, 10]        int8   colour of the figure whose token is on a space, -1 free
supply           [B]               int16  tokens left in the supply
reserve_used     [B]               int16  tokens taken from the reserve (final round)
current          [B]               int8   seat whose turn it is
phase            [B]               int8   decision phase (``actions.PHASES``)
end_triggered_by [B]               int8   seat whose turn triggered the end, -1 none
turn             [B]               int32  whole turns completed
passing          [B]               int8   code of the validated tile, -1 none; during a swap
                                          decision it is still the top of its slot (decision 2)
extra_turn       [B]               bool   the extra-turn power fired this turn
last_side        [B]               int8   solo: entry side of this turn's slide, -1 none
last_colour      [B]               int8   solo: colour it ejected, -1 none
terminated       [B]               bool   ended by the rules
truncated        [B]               bool   stopped by the turn limit
===============  ================  =====  =================================================

Every step function works on index arrays of the games in one phase; there is no Python
loop over games.  ``step`` validates its input and raises; ``step_unchecked`` trusts it.
The rule facts shared with the other engines (zones of a seat, who decides, the end
trigger, turn order, the solo end, the score formula) are :mod:`~umbrella_env.core.facts`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from umbrella_env.core import actions as A
from umbrella_env.core import facts as F
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import (
    ActionError,
    ArgumentTypeError,
    ConfigError,
    GameOverError,
    IllegalActionError,
    OutOfRangeError,
)
from umbrella_env.core.tables import (
    LINE_CELLS,
    OPPOSITE,
    PAIR_A,
    PAIR_B,
    POWER_EXTRA_TURN,
    POWER_SWAP_STAGE,
    POWER_SWAP_ZONE,
    Tables,
    tables_for,
)

__all__ = [
    "ARRAY_FIELDS",
    "BatchState",
    "actor",
    "allocate",
    "MAX_BATCH",
    "STREAM_GAMMA",
    "check_action_batch",
    "check_actions",
    "check_batch_size",
    "check_seed",
    "draw_key",
    "init",
    "legal_action_mask",
    "personal_counts",
    "put",
    "random_legal_actions",
    "ranks",
    "reset",
    "scores",
    "step",
    "step_unchecked",
    "stream_floats",
    "take",
]

IntArray = NDArray[np.integer[Any]]
BoolArray = NDArray[np.bool_]

_ARANGE4 = np.arange(4)
_BITS10 = (1 << np.arange(10)).astype(np.int32)


@dataclass(eq=False)
class BatchState:
    """A batch of games of one configuration.  See the module doc for every array."""

    config: GameConfig
    stage: NDArray[np.int8]
    zones: NDArray[np.int8]
    discard: NDArray[np.int8]
    stacks: NDArray[np.int8]
    plates: NDArray[np.int8]
    supply: NDArray[np.int16]
    reserve_used: NDArray[np.int16]
    current: NDArray[np.int8]
    phase: NDArray[np.int8]
    end_triggered_by: NDArray[np.int8]
    turn: NDArray[np.int32]
    passing: NDArray[np.int8]
    extra_turn: NDArray[np.bool_]
    last_side: NDArray[np.int8]
    last_colour: NDArray[np.int8]
    terminated: NDArray[np.bool_]
    truncated: NDArray[np.bool_]

    @property
    def batch_size(self) -> int:
        return int(self.phase.shape[0])

    @property
    def tables(self) -> Tables:
        return tables_for(self.config)

    @property
    def done(self) -> BoolArray:
        return self.terminated | self.truncated

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, f.name).nbytes for f in fields(self) if f.name != "config")

    def clone(self) -> BatchState:
        return copy.deepcopy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> BatchState:
        kwargs = {f.name: getattr(self, f.name) for f in fields(self)}
        return BatchState(**{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()})


ARRAY_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(BatchState) if f.name != "config")


def check_index(state: BatchState, b: Any) -> int:
    """``b`` as the index of one game of the batch, or IndexError."""
    if isinstance(b, (bool, np.bool_)) or not isinstance(b, (int, np.integer)) or not 0 <= b < state.batch_size:
        raise OutOfRangeError(f"game index must be an int in [0, {state.batch_size}), got {b!r}")
    return int(b)


def check_indices(state: BatchState, idx: Any) -> NDArray[np.intp]:
    """``idx`` as a 1-D array of game indices of the batch (repeats allowed), or IndexError.

    Booleans are refused, not read as a mask: ``[True, False]`` would otherwise mean games
    1 and 0 to NumPy's indexing and games 0 to a mask.
    """
    a = np.asarray(idx)
    if a.size == 0:
        return np.zeros(0, np.intp)
    if a.ndim != 1 or a.dtype == np.bool_ or not np.issubdtype(a.dtype, np.integer):
        raise OutOfRangeError(f"game indices must be a 1-D sequence of ints, got {idx!r}")
    if int(a.min()) < 0 or int(a.max()) >= state.batch_size:
        raise OutOfRangeError(f"game indices must be in [0, {state.batch_size}), got {a.tolist()}")
    return a.astype(np.intp)


def take(state: BatchState, idx: IntArray) -> BatchState:
    """A new batch holding copies of the games ``idx`` (repeats allowed), in that order."""
    idx = check_indices(state, idx)
    if idx.size == 0:
        raise OutOfRangeError("take needs at least one game index (a batch holds at least one game)")
    return BatchState(config=state.config, **{name: getattr(state, name)[idx] for name in ARRAY_FIELDS})


def put(state: BatchState, idx: IntArray, source: BatchState) -> None:
    """Copy the games of ``source`` into the slots ``idx`` of ``state`` (same config, one
    game of ``source`` per index, in order)."""
    idx = check_indices(state, idx)
    if not isinstance(source, BatchState):
        raise ArgumentTypeError(f"put: source must be a BatchState, got {type(source).__name__}")
    if source.config != state.config:
        raise ConfigError(f"put: the source batch is configured as {source.config}, the batch as {state.config}")
    if source.config.components is not state.config.components:  # an equal set built again (a pickled one is the same)
        raise ConfigError(
            "put: the source batch uses another ComponentSet object than the batch (equal configs, but the engine "
            "tables are per set): build both from the same GameConfig"
        )
    if source.batch_size != idx.size:
        raise OutOfRangeError(f"put: {idx.size} slot(s) for the {source.batch_size} game(s) of the source")
    for name in ARRAY_FIELDS:
        getattr(state, name)[idx] = getattr(source, name)


# --------------------------------------------------------------------------- allocation / setup
#: The largest batch: about 1.5 kB per game in play (4 players), so 1.5 GB for the core; the
#: vector env adds observations, masks and their copies (about 18 kB per game, so 18 GB at
#: the limit).  10**12 games was NumPy's MemoryError.
MAX_BATCH = 1_000_000


def check_batch_size(name: str, value: Any) -> int:
    """``value`` as a batch size: an int from 1 to :data:`MAX_BATCH` (``name`` in the error)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_BATCH:
        raise ConfigError(f"{name} must be an int from 1 to {MAX_BATCH:,}, got {value!r}")
    return int(value)


def allocate(config: GameConfig, batch_size: int) -> BatchState:
    """Zeroed arrays for ``batch_size`` games (not a playable state: call :func:`reset`)."""
    if not isinstance(config, GameConfig):
        raise ConfigError(f"config must be a GameConfig, got {type(config).__name__}")
    check_batch_size("batch_size", batch_size)
    B, P, Z, H = int(batch_size), config.num_players, config.num_zones, config.max_stack
    return BatchState(
        config=config,
        stage=np.zeros((B, P, 4, 4), np.int8),
        zones=np.zeros((B, Z, 4), np.int8),
        discard=np.zeros((B, 4), np.int8),
        stacks=np.full((B, P, 4, H), -1, np.int8),
        plates=np.full((B, P, 10), -1, np.int8),
        supply=np.zeros(B, np.int16),
        reserve_used=np.zeros(B, np.int16),
        current=np.zeros(B, np.int8),
        phase=np.zeros(B, np.int8),
        end_triggered_by=np.full(B, -1, np.int8),
        turn=np.zeros(B, np.int32),
        passing=np.full(B, -1, np.int8),
        extra_turn=np.zeros(B, bool),
        last_side=np.full(B, -1, np.int8),
        last_colour=np.full(B, -1, np.int8),
        terminated=np.zeros(B, bool),
        truncated=np.zeros(B, bool),
    )


def init(config: GameConfig, batch_size: int, seed: int | np.random.Generator | None = None) -> BatchState:
    """A batch of freshly set-up games (docs/rules.md §3, §8), reproducible from ``seed``."""
    state = allocate(config, batch_size)
    reset(state, np.arange(state.batch_size), _rng(seed))
    return state


def check_seed(seed: Any, name: str = "seed", also: str = "") -> int | None:
    """``None`` (fresh entropy) or a non-negative int (NumPy ints too, never a bool), else
    :class:`ConfigError` (``also`` names what else the caller takes): every seed the core,
    the envs and the agents take is checked here."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(
            f"{name} must be None or a non-negative int{also}, got {seed!r} of type {type(seed).__name__}"
        )
    return int(seed)


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(check_seed(seed, also=" or a numpy Generator"))


def _check_generator(rng: Any, what: str) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ArgumentTypeError(f"{what} needs a numpy Generator (np.random.default_rng(seed)), got {rng!r}")
    return rng


#: Game keys: any int of 64 bits, signed or unsigned (a negative key is its two's complement).
KEY_RANGE = (-(2**63), 2**64)


def check_keys(keys: Any, n: int) -> NDArray[np.uint64]:
    """``keys`` as ``n`` unsigned 64-bit game keys, or ConfigError: ints (NumPy ints too) in
    :data:`KEY_RANGE`, never floats or booleans (``1.5`` would deal the game of key 1)."""
    try:
        a = np.asarray(keys)
    except (TypeError, ValueError, OverflowError):
        a = None
    if a is not None and a.dtype.kind in "iu" and a.size == n:  # the usual case, without a loop
        return a.reshape(n).astype(np.uint64)
    try:
        a = np.asarray(keys, dtype=object).reshape(-1)
    except (TypeError, ValueError):
        a = None
    if a is None or a.size != n:
        raise ConfigError(f"expected {n} game key(s), one per game reset, got {keys!r}")
    low, high = KEY_RANGE
    for k in a:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or not low <= k < high:
            raise ConfigError(f"a game key must be an int in [-2**63, 2**64), got {k!r}")
    return np.array([int(k) % 2**64 for k in a], dtype=np.uint64)


#: The splitmix64 increment of a game's random stream (the batched streams here and the
#: single-game engine's, :mod:`umbrella_env.core.single_deal`, which must draw the same values).
STREAM_GAMMA = 0x9E3779B97F4A7C15


class _GameStreams:
    """Independent random streams, one per game, each a pure function of the game's key.

    A game's setup depends only on its own 64-bit key (splitmix64 of key and a counter),
    never on which other games are reset in the same call, so a single env and a vector
    env that draw the same keys deal the same games.
    """

    _GAMMA = np.uint64(STREAM_GAMMA)

    def __init__(self, keys: NDArray[np.uint64]) -> None:
        self.keys = keys
        self.counter = np.zeros(keys.size, np.uint64)

    def random(self, rows: IntArray, cols: int) -> NDArray[np.float64]:
        """[len(rows), cols] uniform floats in [0, 1) from the streams of games ``rows``."""
        with np.errstate(over="ignore"):
            counters = self.counter[rows, None] + np.arange(1, cols + 1, dtype=np.uint64)
            x = self.keys[rows, None] * self._GAMMA + counters * self._GAMMA
        self.counter[rows] += np.uint64(cols)
        return stream_floats(x)


def stream_floats(x: NDArray[np.uint64]) -> NDArray[np.float64]:
    """Uniform floats in [0, 1) from the splitmix64 states ``x`` (key * gamma + counter * gamma,
    wrapped): the values of the per-game streams (:class:`_GameStreams`, ``single_deal``).
    Array arithmetic on uint64 wraps silently; ``x`` is overwritten."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    x >>= np.uint64(11)
    return x.astype(np.float64) * (1.0 / (1 << 53))


def draw_key(rng: np.random.Generator) -> int:
    """One 63-bit game key from a Generator (what :func:`reset` deals a game from)."""
    return int(rng.bit_generator.random_raw()) >> 1


def reset(
    state: BatchState,
    idx: IntArray,
    rng: np.random.Generator | None = None,
    keys: Any = None,
) -> None:
    """Set up new games in the slots ``idx`` of the batch (the others are untouched).

    Each game is dealt from its own 64-bit key: ``keys`` (one per game of ``idx``), or
    keys drawn from ``rng`` (one :func:`draw_key` per game, in ``idx`` order).
    """
    idx = check_indices(state, idx)
    n = idx.size
    if keys is None:
        if rng is None:
            raise ConfigError("reset needs a numpy Generator or explicit keys")
        _check_generator(rng, "reset")
        if n == 0:
            return
        keys = [draw_key(rng) for _ in range(n)]
    keys = check_keys(keys, n)
    if n == 0:
        return
    streams = _GameStreams(keys)
    rows = np.arange(n)
    cfg, t = state.config, state.tables
    P = cfg.num_players
    n_layouts = t.layouts.shape[0]
    # Boards: a random permutation of the layouts, first P (docs/rules.md §3.1).
    order = np.argsort(streams.random(rows, n_layouts), axis=1)[:, :P]
    state.stage[idx] = t.layouts[order].reshape(n, P, 4, 4)
    if cfg.solo:
        # 20 umbrellas, 5 per colour, shuffled and dealt 5 to each zone (docs/rules.md §8.1).
        deal = F.SOLO_ZONE_DEAL
        deck = np.repeat(_ARANGE4, deal)[np.argsort(streams.random(rows, 4 * deal), axis=1)].reshape(n, 4, deal)
        state.zones[idx] = (deck[:, :, :, None] == _ARANGE4).sum(axis=2)
    else:
        state.zones[idx] = 1  # one umbrella of each colour in every zone (§3.2)
    state.discard[idx] = 0
    # Tiles: 4P (solo 6) distinct tiles as two stacks on the setup slots (§3.3, §8.1).
    per = F.setup_stack_height(P)
    n_tiles = 2 * per
    slot_a, slot_b = F.SETUP_SLOTS
    black = F.setup_black_faces(P)
    stacks = np.full((n, P, 4, state.stacks.shape[3]), -1, np.int8)
    tiles = np.argsort(streams.random(rows, 24), axis=1)[:, : n_tiles * P].reshape(n, P, n_tiles)
    faces: NDArray[Any]
    if black:
        faces = np.ones((n, P, n_tiles), np.int64)
    else:
        faces = (streams.random(rows, P * n_tiles) < 0.5).reshape(n, P, n_tiles)
    codes = (tiles * 2 + faces).astype(np.int8)
    stacks[:, :, slot_a, :per] = codes[:, :, :per]
    stacks[:, :, slot_b, :per] = codes[:, :, per:]
    # Redraw a player's tiles while one of its visible figures is complete (docs/rules.md §3.3).
    for _ in range(1000):
        stage16 = state.stage[idx].reshape(n, P, 16)
        bad = np.zeros((n, P), bool)
        for p in range(P):
            complete, _ = _complete_figures(t, stage16[:, p], stacks[:, p, :, 0])
            bad[:, p] = complete.any(axis=1)
        if not bad.any():
            break
        # One player per game per round, so that two players never draw the same tile.
        gi, first = np.unique(np.nonzero(bad)[0], return_index=True)
        pi = np.nonzero(bad)[1][first]
        held = np.zeros((gi.size, 24), bool)
        held_codes = stacks[gi].reshape(gi.size, -1)
        rows = np.repeat(np.arange(gi.size), held_codes.shape[1])
        flat = held_codes.reshape(-1)
        keep = flat >= 0
        held[rows[keep], flat[keep] // 2] = True
        own = stacks[gi, pi].reshape(gi.size, -1)
        rows = np.repeat(np.arange(gi.size), own.shape[1])
        flat = own.reshape(-1)
        keep = flat >= 0
        held[rows[keep], flat[keep] // 2] = False  # the player's own tiles go back to the box
        draw = streams.random(gi, 24) + held * 2.0
        new_tiles = np.argsort(draw, axis=1)[:, :n_tiles]
        new_faces = np.ones((gi.size, n_tiles), np.int64) if black else (streams.random(gi, n_tiles) < 0.5)
        new_codes = (new_tiles * 2 + new_faces).astype(np.int8)
        stacks[gi, pi] = -1
        stacks[gi, pi, slot_a, :per] = new_codes[:, :per]
        stacks[gi, pi, slot_b, :per] = new_codes[:, per:]
    else:  # pragma: no cover - would need a pathological component set
        raise ConfigError("could not deal tiles without a complete figure after 1000 redraws")
    state.stacks[idx] = stacks
    state.plates[idx] = -1
    state.supply[idx] = cfg.initial_supply
    state.reserve_used[idx] = 0
    state.current[idx] = 0
    state.phase[idx] = A.PHASE_SLIDE
    state.end_triggered_by[idx] = -1
    state.turn[idx] = 0
    state.passing[idx] = -1
    state.extra_turn[idx] = False
    state.last_side[idx] = -1
    state.last_colour[idx] = -1
    state.terminated[idx] = False
    state.truncated[idx] = False


# --------------------------------------------------------------------------- shared queries
def _complete_figures(t: Tables, stage16: IntArray, tops: IntArray) -> tuple[BoolArray, IntArray]:
    """stage16 [n,16], tops [n,4] codes -> complete [n,4] and the figure colours [n,4]."""
    # [n, slot, 4] cells; code -1 wraps to the dummy row 48 (np.take beats 2-array fancy indexing,
    # and a take from the flat stages beats np.take_along_axis).
    n = len(stage16)
    cells = np.take(t.fig_cells_flat, tops.astype(np.intp) * 4 + _ARANGE4, axis=0, mode="wrap")
    vals = stage16.reshape(-1).take(cells.reshape(n, 16) + (np.arange(n) * 16)[:, None]).reshape(-1, 4, 4)
    first = vals[:, :, 0]
    complete = (tops >= 0) & (first == vals[:, :, 1]) & (first == vals[:, :, 2]) & (first == vals[:, :, 3])
    return complete, first


def _scorable(state: BatchState, idx: IntArray) -> BoolArray:
    """[n, 4 slot, 10 space]: the (slot, space) validations open to the current player."""
    t = state.tables
    p = state.current[idx]
    stage16 = state.stage[idx, p].reshape(-1, 16)
    complete, colour = _complete_figures(t, stage16, state.stacks[idx, p, :, 0])
    free = state.plates[idx, p] < 0
    return t.accept[_ARANGE4, colour] & complete[:, :, None] & free[:, None, :]


def _own_zone_counts(state: BatchState, idx: IntArray, seats: IntArray) -> IntArray:
    """[n, 4 side, 4 colour] umbrellas in each of the seat's four zones."""
    if state.config.solo:  # solo zones are indexed by side already
        return state.zones[idx]
    zones = state.tables.side_zone[seats]  # [n, 4]
    return state.zones[idx[:, None], zones]


def actor(state: BatchState) -> NDArray[np.int8]:
    """[B] the seat that takes the current decision (facts.actor: the receiver in phase cover)."""
    return F.actor(state.current, state.phase, state.config.num_players).astype(np.int8)


# --------------------------------------------------------------------------- legal actions
def legal_action_mask(state: BatchState) -> BoolArray:
    """[B, NUM_ACTIONS] bool: exactly the legal actions of each game's current phase."""
    B = state.batch_size
    mask = np.zeros((B, A.NUM_ACTIONS), dtype=bool)
    phase = state.phase
    # Most games are choosing a slide: fill that block for the whole batch with one
    # contiguous write instead of a scattered one.
    sliding = phase == A.PHASE_SLIDE
    if sliding.any():
        everyone = np.arange(B)
        own = (_own_zone_counts(state, everyone, state.current) > 0) & sliding[:, None, None]
        mask[:, A.SLIDE_START : A.SLIDE_START + A.NUM_SLIDE] = np.repeat(own.reshape(B, 16), 4, axis=1)
    for ph, start, count in A.PHASE_RANGES[1:]:
        idx = np.flatnonzero(phase == ph)
        if idx.size:
            mask[idx, start : start + count] = _phase_mask(state, ph, idx)
    return mask


def _phase_mask(state: BatchState, ph: int, idx: IntArray) -> BoolArray:
    """[n, count] legal ids of phase ``ph`` (ids relative to the phase's first id)."""
    n = idx.size
    p = state.current[idx]
    if ph == A.PHASE_SLIDE:
        own = _own_zone_counts(state, idx, p) > 0  # [n, side, colour]
        return np.repeat(own.reshape(n, 16), 4, axis=1)
    if ph == A.PHASE_FALLBACK:
        return np.repeat(_fallback_sources(state, idx).reshape(n, 36), 16, axis=1)
    if ph == A.PHASE_VALIDATE:
        return _scorable(state, idx).reshape(n, 40)
    if ph == A.PHASE_SWAP_STAGE:
        stage16 = state.stage[idx, p].reshape(n, 16)
        return np.concatenate([stage16[:, PAIR_A] != stage16[:, PAIR_B], np.ones((n, 1), bool)], axis=1)
    if ph == A.PHASE_SWAP_ZONE:
        stage16 = state.stage[idx, p].reshape(n, 16)
        own = _own_zone_counts(state, idx, p) > 0  # [n, side, colour]
        legal = own[:, None, :, :] & (stage16[:, :, None, None] != _ARANGE4)
        return np.concatenate([legal.reshape(n, 256), np.ones((n, 1), bool)], axis=1)
    if ph == A.PHASE_GIVE_FACE:
        return np.ones((n, 2), bool)
    if ph == A.PHASE_COVER:
        return np.ones((n, 4), bool)
    return np.zeros((n, 0), bool)


def _fallback_sources(state: BatchState, idx: IntArray) -> BoolArray:
    """[n, 9 egocentric zone, 4 colour] zones the fallback may take from."""
    rel = state.tables.rel_zone[state.current[idx]]  # [n, 9]
    counts = state.zones[idx[:, None], np.maximum(rel, 0)]
    return (counts > 0) & (rel >= 0)[:, :, None]


def random_legal_actions(state: BatchState, rng: np.random.Generator) -> NDArray[np.int64]:
    """[B] one uniformly random legal action per game (-1 for finished games).

    Samples from compact per-phase masks, so it is much cheaper than sampling from
    :func:`legal_action_mask`; a test checks the two agree.
    """
    _check_generator(rng, "random_legal_actions")
    B = state.batch_size
    out = np.full(B, -1, dtype=np.int64)
    phase = state.phase
    for ph, start, _count in A.PHASE_RANGES:
        idx = np.flatnonzero(phase == ph)
        if not idx.size:
            continue
        n = idx.size
        if ph == A.PHASE_SLIDE:
            own = (_own_zone_counts(state, idx, state.current[idx]) > 0).reshape(n, 16)
            pick = np.argmax(rng.random((n, 16)) * own, axis=1)
            out[idx] = start + pick * 4 + rng.integers(0, 4, n)
        elif ph == A.PHASE_FALLBACK:
            src = _fallback_sources(state, idx).reshape(n, 36)
            pick = np.argmax(rng.random((n, 36)) * src, axis=1)
            out[idx] = start + pick * 16 + rng.integers(0, 16, n)
        else:
            m = _phase_mask(state, ph, idx)
            out[idx] = start + np.argmax(rng.random(m.shape) * m, axis=1)
    return out


# --------------------------------------------------------------------------- step
def step(state: BatchState, actions: Any) -> None:
    """Apply one action per game, after checking every one of them.

    ``actions`` is an integer array of shape ``[B]``; finished games must get ``-1``
    (they are left as they are).  Raises :class:`ActionError` (wrong shape, dtype or
    range), :class:`GameOverError` (an action for a finished game) or
    :class:`IllegalActionError` (not legal in the game's phase); on error no game changes.
    """
    acts = check_actions(state, actions)
    done = state.done
    stepped_done = np.flatnonzero(done & (acts != -1))
    if stepped_done.size:
        raise GameOverError(
            f"game(s) {stepped_done[:8].tolist()} of the batch are over (terminated or truncated): "
            "reset them, or pass action -1 for them"
        )
    live = np.flatnonzero(~done)
    bad = (acts[live] < 0) | (acts[live] >= A.NUM_ACTIONS)
    if bad.any():
        b = int(live[np.flatnonzero(bad)[0]])
        raise ActionError(
            f"game {b}: action id {int(acts[b])} is out of range: expected an integer in [0, {A.NUM_ACTIONS})"
        )
    mask = legal_action_mask(state)
    ok = mask[live, acts[live]]
    if not ok.all():
        b = int(live[np.flatnonzero(~ok)[0]])
        a = int(acts[b])
        ph = A.PHASES[int(state.phase[b])]
        legal = np.flatnonzero(mask[b])
        examples = ", ".join(repr(A.ACTION_STRINGS[x]) for x in legal[:4])
        raise IllegalActionError(
            f"game {b}: action {a} ({A.ACTION_STRINGS[a]!r}) is not legal in phase {ph!r}; "
            f"{legal.size} legal action(s), e.g. {examples}"
        )
    step_unchecked(state, acts)


def check_action_batch(
    actions: Any, n: int, *, scalar: bool = False, column: bool = False, who: str = "game"
) -> NDArray[np.integer[Any]]:
    """``actions`` as an integer array of shape ``(n,)``, one action per game (with
    ``scalar``, a scalar for one game: the core's; with ``column``, an ``(n, 1)`` array:
    SB3's), else :class:`ActionError`.  Ids are checked only for fitting an int64 (an
    unsigned 2**64 - 1 must not become -1, "leave this game"), named by ``who`` ("env 3").
    The one shape and dtype check of every batched step (the core, the envs, the SB3
    adapters)."""
    arr = np.asarray(actions)
    if scalar and arr.ndim == 0 and n == 1 or column and arr.shape == (n, 1):
        arr = arr.reshape(n)
    if arr.shape != (n,) or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        got = (
            f"{type(actions).__name__} {actions!r}"
            if isinstance(actions, int | float | complex)  # a Python number, not an array: say so
            else f"{arr.dtype} array of shape {arr.shape}"
        )
        raise ActionError(f"expected one action per game, an integer array of shape ({n},), got {got}")
    if arr.dtype.kind == "u" and n and arr.max() > np.iinfo(np.int64).max:
        i = int(np.argmax(arr > np.iinfo(np.int64).max))
        raise ActionError(
            f"{who} {i}: action id {int(arr[i])} is out of range: expected an integer in [0, {A.NUM_ACTIONS})"
        )
    return arr


def check_actions(state: BatchState, actions: Any) -> NDArray[np.int64]:
    """Validate the shape and dtype of a batch of actions; return them as int64."""
    return check_action_batch(actions, state.batch_size, scalar=True).astype(np.int64, copy=False)


def step_unchecked(state: BatchState, actions: NDArray[np.integer[Any]]) -> None:
    """Apply one action per game without any check.  Games given -1 are left as they are
    (finished games, or games a caller holds back)."""
    phase = np.where(actions >= 0, state.phase, A.PHASE_GAME_OVER)
    ends: list[IntArray] = []  # games whose turn is over; the end check runs once for all
    for ph, handler in _HANDLERS:
        idx = np.flatnonzero(phase == ph)
        if idx.size:
            handler(state, idx, actions[idx], ends)
    if ends:
        _end_turn(state, np.concatenate(ends) if len(ends) > 1 else ends[0])


def _slide(state: BatchState, idx: IntArray, a: IntArray, ends: list[IntArray]) -> None:
    a = a - A.SLIDE_START
    side, colour, line = a >> 4, (a >> 2) & 3, a & 3
    p = state.current[idx]
    zone = state.tables.side_zone[p, side]
    state.zones[idx, zone, colour] -= 1
    _push(state, idx, p, side, line, colour)
    _after_slide(state, idx, ends)


def _fallback(state: BatchState, idx: IntArray, a: IntArray, ends: list[IntArray]) -> None:
    a = a - A.FALLBACK_START
    rel, colour, side, line = a >> 6, (a >> 4) & 3, (a >> 2) & 3, a & 3
    p = state.current[idx]
    zone = state.tables.rel_zone[p, rel]
    state.zones[idx, zone, colour] -= 1
    _push(state, idx, p, side, line, colour)
    _after_slide(state, idx, ends)


def _push(state: BatchState, idx: IntArray, p: IntArray, side: IntArray, line: IntArray, colour: IntArray) -> None:
    """Push ``colour`` into a line of each stage; route the ejected umbrella (docs/rules.md §4.1)."""
    stage = state.stage.reshape(state.batch_size, -1)
    cells = LINE_CELLS[side, line] + (p * 16)[:, None]  # [n, 4] in push order
    rows = idx[:, None]
    old = stage[rows, cells]
    ejected = old[:, 3]
    new = np.empty_like(old)
    new[:, 0] = colour
    new[:, 1:] = old[:, :3]
    stage[rows, cells] = new
    if state.config.solo:
        state.discard[idx, ejected] += 1
        state.last_side[idx] = side
        state.last_colour[idx] = ejected
    else:
        state.zones[idx, state.tables.side_zone[p, OPPOSITE[side]], ejected] += 1


def _any_scorable(state: BatchState, idx: IntArray) -> BoolArray:
    """[n] whether the current player can validate a figure (bitmask form of :func:`_scorable`)."""
    t = state.tables
    p = state.current[idx]
    stage16 = state.stage[idx, p].reshape(-1, 16)
    complete, colour = _complete_figures(t, stage16, state.stacks[idx, p, :, 0])
    free_bits = (state.plates[idx, p] < 0).astype(np.int32) @ _BITS10
    open_space = (t.accept_bits[_ARANGE4, colour] & free_bits[:, None]) != 0
    return (complete & open_space).any(axis=1)


def _after_slide(state: BatchState, idx: IntArray, ends: list[IntArray]) -> None:
    can = _any_scorable(state, idx)
    state.phase[idx[can]] = A.PHASE_VALIDATE
    ends.append(idx[~can])


def _validate(state: BatchState, idx: IntArray, a: IntArray, ends: list[IntArray]) -> None:
    t = state.tables
    slot, space = np.divmod(a - A.VALIDATE_START, 10)
    p = state.current[idx]
    code = state.stacks[idx, p, slot, 0]
    cells = t.fig_cells[code, slot]  # [n, 4]
    colour = state.stage.reshape(state.batch_size, -1)[idx, p * 16 + cells[:, 0]]
    state.plates[idx, p, space] = colour
    from_supply = state.supply[idx] > 0
    state.supply[idx] -= from_supply
    state.reserve_used[idx] += ~from_supply
    # Decision 2: the tile stays on its slot (the one below stays hidden) until any power
    # is resolved; ``passing`` names it meanwhile.
    state.passing[idx] = code
    # Level-4 powers fire when the space fills the last free one of its pair (docs/rules.md §7).
    power = np.where(state.plates[idx, p, t.partner[space]] >= 0, t.power[space], -1)
    extra = power == POWER_EXTRA_TURN
    if extra.any():
        if state.config.solo:
            e = idx[extra]
            ret_zone = t.side_zone[0, OPPOSITE[state.last_side[e]]]
            col = state.last_colour[e]
            state.discard[e, col] -= 1
            state.zones[e, ret_zone, col] += 1
        else:
            state.extra_turn[idx[extra]] = True
    state.phase[idx[power == POWER_SWAP_STAGE]] = A.PHASE_SWAP_STAGE
    state.phase[idx[power == POWER_SWAP_ZONE]] = A.PHASE_SWAP_ZONE
    go = (power != POWER_SWAP_STAGE) & (power != POWER_SWAP_ZONE)
    _lift(state, idx[go], p[go], slot[go])
    _begin_pass(state, idx[go], ends)


def _lift(state: BatchState, idx: IntArray, p: IntArray, slot: IntArray) -> None:
    """The validated tile leaves seat ``p``'s ``slot``, revealing the one below (decision 2)."""
    stack = state.stacks[idx, p, slot]
    stack[:, :-1] = stack[:, 1:]
    stack[:, -1] = -1
    state.stacks[idx, p, slot] = stack


def _lift_after_swap(state: BatchState, idx: IntArray) -> None:
    """After a swap decision: the validated tile (``passing``, the top of one of the mover's
    slots; tiles are distinct) leaves that slot."""
    p = state.current[idx]
    slot = np.argmax(state.stacks[idx, p, :, 0] == state.passing[idx, None], axis=1)
    _lift(state, idx, p, slot)


def _swap_stage(state: BatchState, idx: IntArray, a: IntArray, ends: list[IntArray]) -> None:
    go = a != A.SWAP_STAGE_PASS
    g = idx[go]
    if g.size:
        pair = a[go] - A.SWAP_STAGE_START
        stage = state.stage.reshape(state.batch_size, -1)
        base = state.current[g].astype(np.intp) * 16
        ca, cb = base + PAIR_A[pair], base + PAIR_B[pair]
        va, vb = stage[g, ca], stage[g, cb]
        stage[g, ca], stage[g, cb] = vb, va
    _lift_after_swap(state, idx)
    _begin_pass(state, idx, ends)


def _swap_zone(state: BatchState, idx: IntArray, a: IntArray, ends: list[IntArray]) -> None:
    go = a != A.SWAP_ZONE_PASS
    g = idx[go]
    if g.size:
        rel = a[go] - A.SWAP_ZONE_START
        cell, side, colour = rel >> 4, (rel >> 2) & 3, rel & 3
        p = state.current[g]
        stage = state.stage.reshape(state.batch_size, -1)
        pos = p.astype(np.intp) * 16 + cell
        old = stage[g, pos]
        zone = state.tables.side_zone[p, side]
        state.zones[g, zone, colour] -= 1
        state.zones[g, zone, old] += 1
        stage[g, pos] = colour
    _lift_after_swap(state, idx)
    _begin_pass(state, idx, ends)


def _begin_pass(state: BatchState, idx: IntArray, ends: list[IntArray]) -> None:
    """Hand the validated tile on (docs/rules.md §4.3; solo §8)."""
    if not idx.size:
        return
    P = state.config.num_players
    if P == 2:
        state.phase[idx] = A.PHASE_GIVE_FACE
        return
    code = state.passing[idx]
    if state.config.solo:
        white = (code & 1) == 0  # a white tile is discarded, a black one comes back white
        state.passing[idx[white]] = -1
        ends.append(idx[white])
        idx = idx[~white]
    state.passing[idx] = state.passing[idx] ^ 1
    _place(state, idx, ends)


def _give_face(state: BatchState, idx: IntArray, a: IntArray, ends: list[IntArray]) -> None:
    face = a - A.GIVE_FACE_START
    state.passing[idx] = (state.passing[idx] & ~1) | face
    _place(state, idx, ends)


def _place(state: BatchState, idx: IntArray, ends: list[IntArray]) -> None:
    """Put the tile in transit on the receiver's first empty slot, or ask for a cover."""
    if not idx.size:
        return
    receiver = F.receiver(state.current[idx], state.config.num_players)
    empty = state.stacks[idx, receiver, :, 0] < 0  # [n, 4]
    has = empty.any(axis=1)
    g = idx[has]
    slot = np.argmax(empty[has], axis=1)
    state.stacks[g, receiver[has], slot, 0] = state.passing[g]
    state.passing[g] = -1
    state.phase[idx[~has]] = A.PHASE_COVER
    ends.append(g)


def _cover(state: BatchState, idx: IntArray, a: IntArray, ends: list[IntArray]) -> None:
    slot = a - A.COVER_START
    receiver = F.receiver(state.current[idx], state.config.num_players)
    stack = state.stacks[idx, receiver, slot]
    stack[:, 1:] = stack[:, :-1]
    stack[:, 0] = state.passing[idx]
    state.stacks[idx, receiver, slot] = stack
    state.passing[idx] = -1
    ends.append(idx)


def _end_turn(state: BatchState, idx: IntArray) -> None:
    """End check after a whole turn, then the next player (docs/rules.md §4.4, §5, §8)."""
    if not idx.size:
        return
    cfg = state.config
    state.turn[idx] += 1
    cur = state.current[idx]
    if cfg.solo:
        ended = _solo_over(state, idx)
        nxt = cur
    else:
        trig = state.end_triggered_by[idx]
        tokens = (state.plates[idx] >= 0).sum(axis=2)  # [n, P]
        no_tile = (state.stacks[idx, :, :, 0] < 0).all(axis=2)  # [n, P]
        newly = (trig < 0) & F.end_triggered(state.supply[idx], np.any(no_tile, axis=1), tokens.max(axis=1))
        trig = np.where(newly, cur, trig)
        state.end_triggered_by[idx] = trig
        nxt, ended = F.next_turn(cur, cfg.num_players, trig, state.extra_turn[idx])
        nxt = nxt.astype(np.int8)
        state.extra_turn[idx] = False
    truncated = ~ended & (state.turn[idx] >= cfg.max_turns)
    state.terminated[idx] = ended
    state.truncated[idx] = truncated
    done = ended | truncated
    state.current[idx] = np.where(done, cur, nxt)
    state.last_side[idx] = -1
    state.last_colour[idx] = -1
    live = idx[~done]
    state.phase[idx[done]] = A.PHASE_GAME_OVER
    if cfg.solo:
        state.phase[live] = A.PHASE_SLIDE
    else:
        empty = (_own_zone_counts(state, live, state.current[live]) == 0).all(axis=(1, 2))
        state.phase[live] = np.where(empty, A.PHASE_FALLBACK, A.PHASE_SLIDE)


def _solo_over(state: BatchState, idx: IntArray) -> BoolArray:
    """Solo end conditions (facts.solo_over, docs/rules.md §8.3), for games that just
    finished a turn."""
    t = state.tables
    free_bits = (state.plates[idx, 0] < 0).astype(np.int32) @ _BITS10
    present_bits = (state.stacks[idx, 0, :, 0] >= 0).astype(np.int32) @ _BITS10[:4]
    completable = F.colour_completable(state.discard[idx]).astype(np.int32) @ _BITS10[:4]
    return F.solo_over(
        tokens=10 - t.popcount[free_bits],
        solo_tokens=state.config.components.solo_tokens,
        zones_empty=state.zones[idx].reshape(idx.size, -1).sum(axis=1) == 0,
        board_empty=present_bits == 0,
        open_colours=t.scoreable_colours[free_bits, present_bits] & completable,
    )


_HANDLERS = (
    (A.PHASE_SLIDE, _slide),
    (A.PHASE_FALLBACK, _fallback),
    (A.PHASE_VALIDATE, _validate),
    (A.PHASE_SWAP_STAGE, _swap_stage),
    (A.PHASE_SWAP_ZONE, _swap_zone),
    (A.PHASE_GIVE_FACE, _give_face),
    (A.PHASE_COVER, _cover),
)


# --------------------------------------------------------------------------- scores
def personal_counts(state: BatchState) -> NDArray[np.int64]:
    """[B, P] umbrellas in each player's personal zone."""
    P = state.config.num_players
    zones = [F.personal_zone(P, p) for p in range(P)]
    return state.zones[:, zones].sum(axis=2, dtype=np.int64)


def scores(state: BatchState) -> NDArray[np.int64]:
    """[B, P] scores by the end-of-game formula applied now (facts.score, docs/rules.md §5.2, §8.4)."""
    t = state.tables
    bits = (state.plates >= 0).astype(np.int32) @ _BITS10  # [B, P] occupied spaces
    if state.config.solo:
        umbrellas = state.zones.reshape(state.batch_size, -1).sum(axis=1, dtype=np.int64)[:, None]
    else:
        umbrellas = personal_counts(state)
    return t.score[bits, umbrellas].astype(np.int64)


def ranks(state: BatchState) -> NDArray[np.int64]:
    """[B, P] ranks (facts.ranks, decision 13): rank 0 = best, equal rank 0 = shared win."""
    return F.ranks(scores(state), personal_counts(state)).astype(np.int64)


_HANDLER_PHASES = frozenset(ph for ph, _ in _HANDLERS)
assert _HANDLER_PHASES == {ph for ph, _, _ in A.PHASE_RANGES}
