"""Fast single-game rules engine for the per-game environments and the agents.

The batched NumPy engine (:mod:`umbrella_env.core.engine`) pays a fixed cost of many
small array operations per call, which dominates when one game is stepped at a time
(the PettingZoo AEC env, the Gymnasium solo env, agents' lookahead).  :class:`SingleGame`
implements the same rules, state dict, observation and legal mask for ONE game with plain
Python lists and ints.  Its pieces:

* the rules, here, read next to ``docs/rules.md`` (cited as §N); the rule facts shared by
  every engine but the reference (zones of a seat, who decides, the end trigger, turn
  order, the solo end, the score formula) are tables built from
  :mod:`~umbrella_env.core.facts` (:class:`SingleTables`);
* the observation, kept up to date by :class:`~umbrella_env.core.single_observer.SingleObserver`,
  which the rules notify of each change they make;
* the deal of a new game, :mod:`~umbrella_env.core.single_deal` (the batched engine's
  per-game random stream replayed in Python, so both engines deal the same games);
* the state dict, written by :func:`~umbrella_env.core.serialize.encode_state` like the
  batched engine's.

The batched engine stays the specification of record: ``tests/test_single.py`` checks
masks, state dicts, observations from every seat, scores and ranks against it on random
games of every configuration.

Reading a game (agents)
-----------------------
Agents read a game through the documented read API below and :attr:`SingleGame.tables`
(static tables of the configuration), never through the internal fields.  Seats, zones,
cells, slots, spaces and colours are ints; a tile is a *code* ``tile * 2 + face`` (face 0
white, 1 black), -1 for none; zones are numbered as in :mod:`~umbrella_env.core.facts`.

=============================  ================================================================
``phase``, ``current``         decision phase (``actions.PHASES`` index) and seat whose turn it is
``actor``                      seat taking the current decision (the receiver in ``cover``)
``turn``, ``done``             whole turns completed; terminated or truncated
``terminated``, ``truncated``  ended by the rules; stopped by the turn limit
``supply``, ``reserve_used``   tokens left in the supply; taken from the reserve
``end_triggered_by``           seat whose turn triggered the end, -1 none
``extra_turn``                 an extra-turn power fired this turn (2-4 players)
``passing``                    code of the validated tile, -1 none (during a swap decision
                               still the top of its slot, decision 2)
``validated_slot()``           that slot during a swap decision, -1 otherwise
``last_side``, ``last_colour`` solo: entry side and ejected colour of this turn's slide, -1 none
``stage(seat)``                the 16 colours of a stage (cell = row * 4 + col), a copy
``seat_zones(seat)``           absolute zones on the seat's top, bottom, left, right
``zone(zone)``                 umbrellas per colour in a zone, a copy
``personal_umbrellas(seat)``   umbrellas in the seat's personal zone
``zone_umbrellas()``           umbrellas in all the zones
``discarded(colour)``          solo: umbrellas of that colour discarded
``top_tile(seat, slot)``       code of the visible tile of a slot, -1 if empty
``stack_height(seat, slot)``   tiles on a slot (the ones under the top are hidden)
``plate(seat)``                10 colours of the tokens' figures, -1 free, a copy
``plate_bits(seat)``           occupied plate spaces as a bit mask (bit s = space s)
``tokens(seat)``               tokens on the seat's plate
``plate_bonus(seat)``          plate bonus of those tokens now
``score(seat)``, ``scores()``  scores by the end-of-game formula applied now; ``ranks()``
``win_credits()``              each seat's share of the win (a search's per-seat return)
``hidden_tiles()``             the tiles under the tops (hidden information)
``unseen_tiles()``             those of them no seat has seen face up (the rest were tops once)
``discarded_tiles()``          solo: the tiles discarded, in order (seen, and out of the game)
=============================  ================================================================

Internal state (``P`` seats, ``Z`` zones)::

    _stages[seat][cell]          colour 0..3 of each stage cell
    _zones[zone * 4 + colour]    umbrellas per colour in each zone
    _zone_colours[zone]          bit c set while the zone holds colour c
    _discard[colour]             solo discard
    _stacks[seat * 4 + slot]     stack of tile codes, bottom -> top
    _unseen[seat * 4 + slot]     how many of the stack's bottom tiles no seat has seen face up
    _gone                        solo: ids of the tiles discarded since the game was built
    _tops[seat * 4 + slot]       the visible code or -1;  _filled_slots[seat]: non-empty slots
    _plates[seat * 10 + space]   colour of the token's figure, -1 free
    _plate_bits[seat]            occupied spaces as bits;  _tokens[seat]: tokens on the plate
    _validations                 the legal validate ids, in phase validate
    _observer                    the observation (SingleObserver)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core import facts as F
from umbrella_env.core.components import ComponentSet
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import (
    ArgumentError,
    ArgumentTypeError,
    ConfigError,
    GameOverError,
    IllegalActionError,
    OutOfRangeError,
)
from umbrella_env.core.serialize import encode_state
from umbrella_env.core.single_deal import deal
from umbrella_env.core.single_observer import ObserverLayout, SingleObserver
from umbrella_env.core.tables import (
    LINE_CELLS,
    PAIR_A,
    PAIR_B,
    POWER_EXTRA_TURN,
    POWER_SWAP_STAGE,
    POWER_SWAP_ZONE,
    tables_for,
)

__all__ = ["SingleGame", "SingleTables", "single_tables"]

SLIDE, FALLBACK, VALIDATE, SWAP_STAGE, SWAP_ZONE, GIVE_FACE, COVER, GAME_OVER = range(8)
assert A.SLIDE_START == 0
_FALLBACK_START, _VALIDATE_START, _GIVE_FACE_START, _COVER_START = (
    A.FALLBACK_START,
    A.VALIDATE_START,
    A.GIVE_FACE_START,
    A.COVER_START,
)
_NUM_ACTIONS = A.NUM_ACTIONS
_SLIDES = slice(A.SLIDE_START, A.SLIDE_START + A.NUM_SLIDE)

#: [side][line] the four cells of a slide line, entry cell first (see tables.LINE_CELLS).
_LINES: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(int(x) for x in LINE_CELLS[side, line]) for line in range(4)) for side in range(4)
)
_PAIRS: tuple[tuple[int, int], ...] = tuple(zip(PAIR_A.tolist(), PAIR_B.tolist()))
#: Spaces set in a 10-bit pattern.
_BITLIST: tuple[tuple[int, ...], ...] = tuple(tuple(s for s in range(10) if b >> s & 1) for b in range(1024))
#: Slide ids of one side for each nibble of non-empty colours: ids side*16 + colour*4 + line.
_SIDE_IDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        tuple(A.SLIDE_START + s * 16 + c * 4 + line for c in range(4) if n >> c & 1 for line in range(4))
        for n in range(16)
    )
    for s in range(4)
)


class SingleTables:
    """Plain-Python tables of one configuration (component set, players, level, turn limit),
    built once and shared by its games.

    Agents may read (through ``game.tables``): ``num_players``, ``solo``, ``solo_tokens``,
    ``figure_cells[code][slot]`` (the 4 stage cells of tile ``code``'s figure shown from
    ``slot``), ``accepting[slot][colour]`` (bit mask of the plate spaces accepting that
    figure) and ``bonus[bits]`` (plate bonus of an occupancy bit mask).  The other fields
    serve the engine; those marked *fact* are :mod:`~umbrella_env.core.facts` evaluated
    once for every index.
    """

    def __init__(self, config: GameConfig) -> None:
        t = tables_for(config)
        P = self.num_players = config.num_players
        self.solo = config.solo
        self.num_zones = config.num_zones
        self.solo_tokens = config.components.solo_tokens
        self.figure_cells: list[list[tuple[int, ...]]] = [
            [tuple(int(x) for x in t.fig_cells[code, k]) for k in range(4)] for code in range(48)
        ]
        self.accepting = [[int(t.accept_bits[k, c]) for c in range(4)] for k in range(4)]
        self.bonus: list[int] = [int(x) for x in t.bonus]
        #: fact: [seat] zones on the top, bottom, left and right sides.
        self.side_zones: list[tuple[int, int, int, int]] = [F.seat_zones(P, p) for p in range(P)]
        #: [seat][entry side] zone receiving the umbrella a slide from that side ejects.
        self.eject_zones = [tuple(row[A.OPPOSITE[side]] for side in range(4)) for row in self.side_zones]
        #: fact: [seat][fallback zone id] absolute zone, -1 absent.
        self.egocentric_zones = [[F.egocentric_zone(P, p, k) for k in range(A.MAX_ZONES)] for p in range(P)]
        #: [seat] zone * 4 of the seat's personal zone (first entry of its counts).
        self.personal_entry = [4 * F.personal_zone(P, p) for p in range(P)]
        #: fact: [seat] who receives the seat's validated tile.
        self.receiver = [F.receiver(p, P) for p in range(P)]
        #: fact: [phase][current] the seat taking the decision.
        self.actor = [[F.actor(p, ph, P) for p in range(P)] for ph in range(len(A.PHASES))]
        #: fact: [current][end_triggered_by + 1][extra_turn] -> (next seat, game over).
        self.next_turn = [
            [[F.next_turn(p, P, trig, extra) for extra in (False, True)] for trig in range(-1, P)] for p in range(P)
        ]
        #: fact: [plate bits][umbrellas] the score (umbrellas: personal zone; solo: all zones).
        self.score: list[list[int]] = t.score.tolist()
        #: fact: [free space bits][slots-with-tiles bits] colours that could still be scored (solo).
        self.scoreable_colours: list[list[int]] = t.scoreable_colours.tolist()
        #: fact: [umbrellas of a colour discarded] 1 if the colour can still fill a figure (solo).
        self.colour_completable = [int(F.colour_completable(n)) for n in range(F.scored_umbrellas_bound(1) + 1)]
        #: [space] level-4 power fired by filling the space when its partner is filled (-1 none).
        self.power: list[int] = [int(x) for x in t.power]
        #: [space] the other space of its power pair (itself when none).
        self.partner: list[int] = [int(x) for x in t.partner]
        self.layouts: list[list[int]] = t.layouts.tolist()
        self.slide_table = _slide_table()
        self.observer = ObserverLayout(config, t.fig_grid, t.face_grid)


_CACHE: dict[tuple[int, int, int], tuple[ComponentSet, SingleTables]] = {}


def single_tables(config: GameConfig) -> SingleTables:
    """The (cached) tables of a configuration's components, players and plate level: shared
    by every ``max_turns`` (each value used to build and keep its own, 0.6 MB apiece, and
    the agents' caches keyed on the tables multiplied with them)."""
    key = (id(config.components), config.num_players, config.plate_level)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is config.components:
        return hit[1]
    t = SingleTables(config)
    _CACHE[key] = (config.components, t)
    return t


_SLIDE_TABLE: list[np.ndarray] = []


def _slide_table() -> np.ndarray:
    """[65536, 64] bool (4 MiB, built on first use): row ``key`` holds the 64 slide flags
    when bit ``side*4 + colour`` of ``key`` says that the side's zone holds that colour."""
    if not _SLIDE_TABLE:
        flags = (np.arange(1 << 16, dtype=np.int64)[:, None] >> np.arange(16)) & 1
        _SLIDE_TABLE.append(np.repeat(flags.astype(bool), 4, axis=1))
    return _SLIDE_TABLE[0]


def _checked(name: str, value: Any, n: int) -> int:
    """``value`` as an int in ``[0, n)``, or IndexError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not 0 <= value < n:
        raise OutOfRangeError(f"{name} must be an int in [0, {n}), got {value!r}")
    return int(value)


# --------------------------------------------------------------------------- the game


class SingleGame:
    """One game of Umbrella (1-4 players), fast to step and observe.

    Build with :meth:`new`, :meth:`from_batch` or :meth:`from_dict`.  :meth:`step` trusts
    its input (the caller guarantees legality); :meth:`step_checked` raises like
    :func:`engine.step` and leaves the state unchanged on error.  The public attributes
    and the read API (module doc) are read-only: change a game only by stepping it.
    """

    __slots__ = (
        "config", "tables", "_stages", "_zones", "_zone_colours", "_discard", "_stacks", "_unseen", "_gone", "_tops",
        "_filled_slots", "_plates", "_plate_bits", "_tokens", "_validations", "_observer",
        "supply", "reserve_used", "current", "phase", "end_triggered_by", "turn", "passing", "extra_turn",
        "last_side", "last_colour", "terminated", "truncated",
    )  # fmt: skip

    config: GameConfig
    #: The configuration's static tables (figure cells, accepting spaces, bonuses, ...).
    tables: SingleTables
    # Public state (read-only; see the module doc).
    supply: int
    reserve_used: int
    current: int
    phase: int
    end_triggered_by: int
    turn: int
    passing: int
    extra_turn: bool
    last_side: int
    last_colour: int
    terminated: bool
    truncated: bool
    # Internal state (module doc).
    _stages: list[list[int]]
    _zones: list[int]
    _zone_colours: list[int]
    _discard: list[int]
    _stacks: list[list[int]]
    _unseen: list[int]
    _gone: list[int]
    _tops: list[int]
    _filled_slots: list[int]
    _plates: list[int]
    _plate_bits: list[int]
    _tokens: list[int]
    _validations: list[int]
    _observer: SingleObserver

    # ------------------------------------------------------------------- construction
    @classmethod
    def new(cls, config: GameConfig, key: int) -> SingleGame:
        """A new game dealt from ``key``, identical to a batch game reset with ``keys=[key]``.

        ``key`` is an int in ``[-2**63, 2**64)`` (:data:`engine.KEY_RANGE`).  The deal is
        replayed in plain Python from the batched engine's per-game random stream
        (:func:`~umbrella_env.core.single_deal.deal`); in the (never observed) case of tied
        random draws it falls back to ``engine.reset`` on a batch of one.
        """
        if not isinstance(config, GameConfig):
            raise ConfigError(f"config must be a GameConfig, got {type(config).__name__}")
        key = int(E.check_keys([key], 1)[0])
        T = single_tables(config)
        dealt = deal(T, key)
        if dealt is None:
            state = E.allocate(config, 1)
            E.reset(state, np.zeros(1, np.intp), keys=[key])
            return cls.from_batch(state, 0)
        g = cls.__new__(cls)
        g.config = config
        g.tables = T
        g._stages, g._zones, g._stacks = dealt
        g._discard = [0, 0, 0, 0]
        g._plates = [-1] * (10 * T.num_players)
        g.supply = config.initial_supply
        g.reserve_used = 0
        g.current = 0
        g.phase = SLIDE
        g.end_triggered_by = -1
        g.turn = 0
        g.passing = -1
        g.extra_turn = False
        g.last_side = g.last_colour = -1
        g.terminated = g.truncated = False
        g._derive()
        return g

    @classmethod
    def from_batch(cls, state: E.BatchState, b: int) -> SingleGame:
        """A copy of game ``b`` of a batch."""
        b = E.check_index(state, b)
        cfg = state.config
        P = cfg.num_players
        g = cls.__new__(cls)
        g.config = cfg
        g.tables = single_tables(cfg)
        g._stages = state.stage[b].reshape(P, 16).tolist()
        g._zones = state.zones[b].reshape(-1).tolist()
        g._discard = state.discard[b].tolist()
        g._stacks = [[c for c in reversed(row) if c >= 0] for row in state.stacks[b].reshape(P * 4, -1).tolist()]
        g._plates = state.plates[b].reshape(-1).tolist()
        g.supply = int(state.supply[b])
        g.reserve_used = int(state.reserve_used[b])
        g.current = int(state.current[b])
        g.phase = int(state.phase[b])
        g.end_triggered_by = int(state.end_triggered_by[b])
        g.turn = int(state.turn[b])
        g.passing = int(state.passing[b])
        g.extra_turn = bool(state.extra_turn[b])
        g.last_side = int(state.last_side[b])
        g.last_colour = int(state.last_colour[b])
        g.terminated = bool(state.terminated[b])
        g.truncated = bool(state.truncated[b])
        g._derive()
        return g

    def to_batch(self, state: E.BatchState, b: int) -> None:
        """Write this game into slot ``b`` of a batch of the same configuration."""
        cfg, mine = state.config, self.config
        same = (cfg.num_players, cfg.plate_level, cfg.max_turns) == (mine.num_players, mine.plate_level, mine.max_turns)
        if not same or cfg.components != mine.components:
            raise ConfigError(f"to_batch: the batch is configured as {cfg}, the game as {mine}")
        if cfg.components is not mine.components:  # an equal set built again (engine.put's words)
            raise ConfigError(
                "to_batch: the game uses another ComponentSet object than the batch (equal configs, but the engine "
                "tables are per set): build both from the same GameConfig"
            )
        b = E.check_index(state, b)
        P = cfg.num_players
        state.stage[b] = np.array(self._stages, np.int8).reshape(P, 4, 4)
        state.zones[b] = np.array(self._zones, np.int8).reshape(-1, 4)
        state.discard[b] = self._discard
        H = state.stacks.shape[3]
        stacks = np.full((P * 4, H), -1, np.int8)
        for i, s in enumerate(self._stacks):
            if s:
                stacks[i, : len(s)] = s[::-1]
        state.stacks[b] = stacks.reshape(P, 4, H)
        state.plates[b] = np.array(self._plates, np.int8).reshape(P, 10)
        state.supply[b] = self.supply
        state.reserve_used[b] = self.reserve_used
        state.current[b] = self.current
        state.phase[b] = self.phase
        state.end_triggered_by[b] = self.end_triggered_by
        state.turn[b] = self.turn
        state.passing[b] = self.passing
        state.extra_turn[b] = self.extra_turn
        state.last_side[b] = self.last_side
        state.last_colour[b] = self.last_colour
        state.terminated[b] = self.terminated
        state.truncated[b] = self.truncated

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], components: ComponentSet | None = None) -> SingleGame:
        """A game from a state dict, validated by :func:`serialize.validate_state_dict`."""
        return cls.from_batch(batch_io.from_dict(d, components=components), 0)

    def to_dict(self) -> dict[str, Any]:
        """The canonical state dict (equal to :func:`batch_io.to_dict` of the same game)."""
        T = self.tables
        return encode_state(
            num_players=T.num_players,
            plate_level=self.config.plate_level,
            max_turns=self.config.max_turns,
            current_player=self.current,
            phase=self.phase,
            turn=self.turn,
            stages=self._stages,
            zone_rows=[self._zones[4 * z : 4 * z + 4] for z in range(T.num_zones)],
            discard=self._discard,
            stacks=self._stacks,
            plates=[self._plates[10 * p : 10 * p + 10] for p in range(T.num_players)],
            supply=self.supply,
            reserve_used=self.reserve_used,
            end_triggered_by=self.end_triggered_by,
            passing=self.passing,
            extra_turn=self.extra_turn,
            last_side=self.last_side,
            last_colour=self.last_colour,
            terminated=self.terminated,
            truncated=self.truncated,
            scores=self.scores(),
        )

    def clone(self) -> SingleGame:
        """An independent copy."""
        g = SingleGame.__new__(SingleGame)
        g.config = self.config
        g.tables = self.tables
        g._stages = [s[:] for s in self._stages]
        g._zones = self._zones[:]
        g._zone_colours = self._zone_colours[:]
        g._discard = self._discard[:]
        g._stacks = [s[:] for s in self._stacks]
        g._unseen = self._unseen[:]
        g._gone = self._gone[:]
        g._tops = self._tops[:]
        g._filled_slots = self._filled_slots[:]
        g._plates = self._plates[:]
        g._plate_bits = self._plate_bits[:]
        g._tokens = self._tokens[:]
        g._validations = self._validations[:]
        g._observer = self._observer.clone()
        g.supply = self.supply
        g.reserve_used = self.reserve_used
        g.current = self.current
        g.phase = self.phase
        g.end_triggered_by = self.end_triggered_by
        g.turn = self.turn
        g.passing = self.passing
        g.extra_turn = self.extra_turn
        g.last_side = self.last_side
        g.last_colour = self.last_colour
        g.terminated = self.terminated
        g.truncated = self.truncated
        return g

    __copy__ = clone

    def __deepcopy__(self, memo: dict[int, Any]) -> SingleGame:
        return self.clone()

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "state": self.to_dict(), "unseen": self._unseen, "gone": self._gone}

    def __setstate__(self, data: dict[str, Any]) -> None:
        other = SingleGame.from_dict(data["state"], components=data["config"].components)
        for name in SingleGame.__slots__:
            object.__setattr__(self, name, getattr(other, name))
        self.config = data["config"]
        self.tables = single_tables(self.config)
        if "unseen" in data:  # a pickle of an older version remembers nothing
            self._unseen = list(data["unseen"])
            self._gone = list(data.get("gone", []))

    def _derive(self) -> None:
        """Derive every cached structure (colour bits, tops, plate bits, observer) from the state."""
        T = self.tables
        P = T.num_players
        z = self._zones
        self._zone_colours = [sum(1 << c for c in range(4) if z[4 * i + c] > 0) for i in range(T.num_zones)]
        self._tops = [s[-1] if s else -1 for s in self._stacks]
        # A game built from a position (a deal, a batch, a state dict) remembers nothing:
        # every tile under a top counts as never seen.  Only stepping it adds memory (_lift).
        self._unseen = [max(len(s) - 1, 0) for s in self._stacks]
        self._gone = []
        self._filled_slots = [sum(1 for k in range(4) if self._tops[p * 4 + k] >= 0) for p in range(P)]
        self._plate_bits = [sum(1 << s for s in range(10) if self._plates[p * 10 + s] >= 0) for p in range(P)]
        self._tokens = [bin(b).count("1") for b in self._plate_bits]
        self._validations = self._scorable_ids() if self.phase == VALIDATE else []
        self._observer = SingleObserver.of(self, T.observer)

    # ------------------------------------------------------------------- read API
    @property
    def actor(self) -> int:
        """The seat taking the current decision (the receiver in phase cover)."""
        return self.tables.actor[self.phase][self.current]

    @property
    def done(self) -> bool:
        """Terminated or truncated."""
        return self.terminated or self.truncated

    # Every read that takes a seat, slot or zone checks it: a wrong index would otherwise
    # read another seat's tiles (lists index from the end, and seat * 4 + slot runs on).
    def _seat(self, seat: Any) -> int:
        if type(seat) is int and 0 <= seat < self.tables.num_players:  # the fast path
            return seat
        return _checked("seat", seat, self.tables.num_players)

    def _seat_slot(self, seat: Any, slot: Any) -> int:
        """The index of ``seat``'s ``slot`` in the per-slot lists."""
        if not (type(slot) is int and 0 <= slot < 4):
            slot = _checked("slot", slot, 4)
        return self._seat(seat) * 4 + slot

    def stage(self, seat: int) -> list[int]:
        """The 16 colours of ``seat``'s stage (cell = row * 4 + col), a copy."""
        return self._stages[self._seat(seat)][:]

    def seat_zones(self, seat: int) -> tuple[int, int, int, int]:
        """Absolute zones on ``seat``'s top, bottom, left and right sides (facts.seat_zones)."""
        return self.tables.side_zones[self._seat(seat)]

    def zone(self, zone: int) -> list[int]:
        """Umbrellas per colour in absolute zone ``zone``, a copy."""
        n = len(self._zones) // 4
        if not (type(zone) is int and 0 <= zone < n):
            zone = _checked("zone", zone, n)
        return self._zones[4 * zone : 4 * zone + 4]

    def personal_umbrellas(self, seat: int) -> int:
        """Umbrellas in ``seat``'s personal zone."""
        i = self.tables.personal_entry[self._seat(seat)]
        z = self._zones
        return z[i] + z[i + 1] + z[i + 2] + z[i + 3]

    def zone_umbrellas(self) -> int:
        """Umbrellas in all the zones (solo: what the score counts once every token is placed)."""
        return sum(self._zones)

    def discarded(self, colour: int) -> int:
        """Solo: umbrellas of ``colour`` discarded (0 at 2-4 players)."""
        if not (type(colour) is int and 0 <= colour < 4):
            colour = _checked("colour", colour, 4)
        return self._discard[colour]

    def top_tile(self, seat: int, slot: int) -> int:
        """Code of the visible tile on ``seat``'s ``slot``, -1 if the slot is empty."""
        return self._tops[self._seat_slot(seat, slot)]

    def stack_height(self, seat: int, slot: int) -> int:
        """Tiles on ``seat``'s ``slot`` (only the top one is visible)."""
        return len(self._stacks[self._seat_slot(seat, slot)])

    def plate(self, seat: int) -> list[int]:
        """The 10 spaces of ``seat``'s plate: colour of the figure whose token is there, -1 free (a copy)."""
        seat = self._seat(seat)
        return self._plates[seat * 10 : seat * 10 + 10]

    def plate_bits(self, seat: int) -> int:
        """``seat``'s occupied plate spaces as a bit mask (bit s = space s)."""
        return self._plate_bits[self._seat(seat)]

    def tokens(self, seat: int) -> int:
        """Tokens on ``seat``'s plate."""
        return self._tokens[self._seat(seat)]

    def plate_bonus(self, seat: int) -> int:
        """The plate bonus of ``seat``'s tokens now (docs/rules.md §7.3)."""
        return self.tables.bonus[self._plate_bits[self._seat(seat)]]

    def all_tokens_placed(self) -> bool:
        """Solo: every token is on the plate (the zones' umbrellas then count, §8.4)."""
        return self._tokens[0] >= self.tables.solo_tokens

    def score(self, seat: int) -> int:
        """``seat``'s score by the end-of-game formula applied now (facts.score): its plate
        and the umbrellas the score counts (personal zone; solo: all four zones)."""
        seat = self._seat(seat)
        T = self.tables
        z = self._zones
        if T.solo:
            umbrellas = sum(z)
        else:
            i = T.personal_entry[seat]
            umbrellas = z[i] + z[i + 1] + z[i + 2] + z[i + 3]
        return T.score[self._plate_bits[seat]][umbrellas]

    def scores(self) -> list[int]:
        """Every seat's score by the end-of-game formula applied now (docs/rules.md §5.2, §8.4)."""
        return [self.score(p) for p in range(self.tables.num_players)]

    def ranks(self) -> list[int]:
        """Rank 0 is best: the number of players strictly better (facts.ranks, decision 13)."""
        personal = [self.personal_umbrellas(p) for p in range(self.tables.num_players)]
        return F.ranks(self.scores(), personal).tolist()

    def win_credits(self) -> list[float]:
        """Each seat's share of the win, as every result is counted (:func:`facts.win_credits`):
        ``1/k`` to each of the ``k`` seats of rank 0, 0 to the others; a truncated game is
        a draw, ``1/P`` each (unlike :meth:`ranks`, which ranks the scores as they stand);
        solo has no winner, ``[0.0]`` (its result is :meth:`score`).  Read at the end of a
        game, it is the per-seat return of a search (``2 * credit - 1`` for one in [-1, 1]);
        before the end, the share if the game ended now."""
        return F.win_credits(self.ranks(), self.truncated).tolist()

    def hidden_tiles(self) -> list[tuple[int, int, int, int]]:
        """``(seat, slot, depth, code)`` of every tile under the top of a stack (depth 0 is
        the bottom), in seat, slot, depth order: the game's hidden information."""
        return [
            (i >> 2, i & 3, depth, code)
            for i, stack in enumerate(self._stacks)
            for depth, code in enumerate(stack[:-1])
        ]

    def unseen_tiles(self) -> list[tuple[int, int, int, int]]:
        """The :meth:`hidden_tiles` that no seat has seen face up, in the same form and order:
        the ones dealt under the tops and never revealed since.  The others were a top once
        and were covered later (a cover, docs/rules.md §4.3), so every seat that remembers
        knows them.  A game remembers what happened since it was built: one built from a
        position (:meth:`from_dict`, :meth:`from_batch`) counts every hidden tile as unseen,
        as the state dict holds the position, not its history; :meth:`clone` and pickling
        keep the memory."""
        return [
            (i >> 2, i & 3, depth, code)
            for i, stack in enumerate(self._stacks)
            for depth, code in enumerate(stack[: self._unseen[i]])
        ]

    def discarded_tiles(self) -> list[int]:
        """Solo: the ids of the tiles discarded (a validated white tile, §8.2), in order, since
        the game was built; every one was seen and is out of the game, so it is under no stack.
        Memory, as :meth:`unseen_tiles`: a game built from a position has none.  Empty at 2-4
        players, where every tile stays in play."""
        return self._gone[:]

    def set_hidden_tile(self, seat: int, slot: int, depth: int, code: int) -> None:
        """Replace a tile under the top of a stack (for determinization: the observation,
        the legal actions and the state dict's public fields do not change).  The caller
        keeps the tiles distinct."""
        stack = self._stacks[self._seat_slot(seat, slot)]
        for name, value in (("depth", depth), ("code", code)):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise ArgumentTypeError(f"set_hidden_tile: {name} must be an int, got {value!r}")
        depth, code = int(depth), int(code)
        if len(stack) < 2:
            held = "no tile" if not stack else "1 tile, its top"
            raise ArgumentError(f"set_hidden_tile: seat {seat}'s slot {slot} holds {held}: nothing is hidden there")
        if not 0 <= depth < len(stack) - 1:
            raise ArgumentError(
                f"set_hidden_tile: depth {depth} of seat {seat}'s slot {slot} is not hidden "
                f"(the stack holds {len(stack)} tiles; depths 0..{len(stack) - 2} are under the top)"
            )
        if not 0 <= code < 2 * len(self.config.components.tiles):
            raise ArgumentError(f"set_hidden_tile: tile code {code} is out of range")
        stack[depth] = code

    # ------------------------------------------------------------------- legal actions
    def legal_mask(self) -> np.ndarray:
        """bool [NUM_ACTIONS]: the legal actions of the current decision (all False when done); a new array."""
        ph = self.phase
        if ph == SLIDE:
            T = self.tables
            zc = self._zone_colours
            top, bottom, left, right = T.side_zones[self.current]
            m = np.zeros(_NUM_ACTIONS, bool)
            m[_SLIDES] = T.slide_table[zc[top] | zc[bottom] << 4 | zc[left] << 8 | zc[right] << 12]
            return m
        m = np.zeros(A.NUM_ACTIONS, bool)
        if ph == VALIDATE:
            m[self._validations] = True
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
            zc = self._zone_colours
            top, bottom, left, right = self.tables.side_zones[self.current]
            ids = _SIDE_IDS
            return [*ids[0][zc[top]], *ids[1][zc[bottom]], *ids[2][zc[left]], *ids[3][zc[right]]]
        if ph == VALIDATE:
            return list(self._validations)
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
        """[36] bool: the egocentric (zone, colour) pairs the fallback may take from (§4.1)."""
        zc = self._zone_colours
        zones = self.tables.egocentric_zones[self.current]
        return np.array([zone >= 0 and zc[zone] >> c & 1 == 1 for zone in zones for c in range(4)])

    def _swap_stage_ids(self) -> list[int]:
        """Swaps of two adjacent cells of different colours, then pass (§7.4, decision 4)."""
        s = self._stages[self.current]
        return [A.SWAP_STAGE_START + i for i, (x, y) in enumerate(_PAIRS) if s[x] != s[y]] + [A.SWAP_STAGE_PASS]

    def _swap_zone_flags(self) -> np.ndarray:
        """[256] bool: the (cell, side, colour) zone swaps that change something (§7.4)."""
        zc = self._zone_colours
        own = np.array([zc[zone] >> c & 1 for zone in self.tables.side_zones[self.current] for c in range(4)], bool)
        differ = np.array(self._stages[self.current])[:, None] != np.arange(4)  # [cell, colour]
        return (own.reshape(1, 4, 4) & differ[:, None, :]).reshape(256)

    def _scorable_ids(self) -> list[int]:
        """Validate ids open to the current player: a complete visible figure (the four
        cells of its rotated figure in one colour) and a free space accepting it (§4.2, §7)."""
        p = self.current
        T = self.tables
        s = self._stages[p]
        tops = self._tops
        cells = T.figure_cells
        out: list[int] = []
        for k in range(4):
            code = tops[p * 4 + k]
            if code >= 0:
                a, b, c, d = cells[code][k]
                colour = s[a]
                if s[b] == colour and s[c] == colour and s[d] == colour:
                    free = T.accepting[k][colour] & ~self._plate_bits[p]
                    if free:
                        base = A.VALIDATE_START + 10 * k
                        out.extend([base + x for x in _BITLIST[free]])
        return out

    # ------------------------------------------------------------------- observation
    def observe(self, seat: int | None = None) -> np.ndarray:
        """float32 [OBS_SIZE] observation from ``seat`` (default: the actor); a new array."""
        if seat is None:
            seat = self.tables.actor[self.phase][self.current]
        elif (
            isinstance(seat, (bool, np.bool_))
            or not isinstance(seat, (int, np.integer))
            or not 0 <= seat < self.tables.num_players
        ):
            raise ArgumentError(f"observer seat must be an int in [0, {self.tables.num_players}), got {seat!r}")
        observer = self._observer
        if observer.stale_scores:
            observer.write_scores(self)
        return observer.canon[observer.perm[seat]]

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
        if ph == SLIDE:  # an umbrella of one of the seat's own four zones, in from that zone's side (§4.1)
            side = action >> 4  # SLIDE_START is 0
            self._slide_from(self.tables.side_zones[self.current][side], (action >> 2) & 3, side, action & 3)
        elif ph == VALIDATE:
            self._validate(action - _VALIDATE_START)
        elif ph == FALLBACK:  # the seat's four zones are empty: an umbrella of any zone, any side (§4.1)
            a = action - _FALLBACK_START
            self._slide_from(self.tables.egocentric_zones[self.current][a >> 6], (a >> 4) & 3, (a >> 2) & 3, a & 3)
        elif ph == GIVE_FACE:
            self._give_face(action - _GIVE_FACE_START)
        elif ph == COVER:
            self._cover(action - _COVER_START)
        elif ph == SWAP_STAGE:
            self._swap_stage(action)
        elif ph == SWAP_ZONE:
            self._swap_zone(action)

    # ------------------------------------------------------------------- slide (§4.1)

    def _slide_from(self, zone: int, colour: int, side: int, line: int) -> None:
        """Take an umbrella of ``colour`` from ``zone`` and push it into the current seat's
        stage from ``side`` along ``line``; then validate or end the turn."""
        seat = self.current
        zones = self._zones
        # Take the umbrella from its zone.
        taken = 4 * zone + colour
        zones[taken] -= 1
        if zones[taken] == 0:
            self._zone_colours[zone] &= ~(1 << colour)
        # Push: the line shifts one cell away from the side, the umbrella enters, the far one is ejected.
        stage = self._stages[seat]
        cells = _LINES[side][line]
        x0, x1, x2, x3 = cells
        ejected = stage[x3]
        stage[x3] = stage[x2]
        stage[x2] = stage[x1]
        stage[x1] = stage[x0]
        stage[x0] = colour
        # The ejected umbrella goes to the seat's zone opposite the entry side; solo: discarded (§8.2).
        if self.tables.solo:
            self._discard[ejected] += 1
            self.last_side, self.last_colour = side, ejected  # for the extra-turn power (decision 6)
            self._observer.slid(seat, cells, stage, ejected, taken, zones[taken], -1, self._discard[ejected], side)
        else:
            zone = self.tables.eject_zones[seat][side]
            put = 4 * zone + ejected
            zones[put] += 1
            self._zone_colours[zone] |= 1 << ejected
            self._observer.slid(seat, cells, stage, ejected, taken, zones[taken], put, zones[put], side)
        # A figure is validated only right after the seat's own slide (§4.2, decision 3).
        ids = self._scorable_ids()
        if ids:
            self._validations = ids
            self._set_phase(VALIDATE)
        else:
            self._end_turn()

    def _take(self, zone: int, colour: int) -> None:
        """An umbrella of ``colour`` leaves ``zone``."""
        i = 4 * zone + colour
        n = self._zones[i] = self._zones[i] - 1
        if n == 0:
            self._zone_colours[zone] &= ~(1 << colour)
        self._observer.zone(i, n)

    def _put(self, zone: int, colour: int) -> None:
        """An umbrella of ``colour`` enters ``zone``."""
        i = 4 * zone + colour
        n = self._zones[i] = self._zones[i] + 1
        self._zone_colours[zone] |= 1 << colour
        self._observer.zone(i, n)

    # ------------------------------------------------------------------- validate (§4.2, §7)
    def _validate(self, a: int) -> None:
        """A token for the figure of ``slot`` on ``space``; powers; the tile leaves its slot."""
        slot, space = divmod(a, 10)
        T = self.tables
        p = self.current
        i = p * 4 + slot
        code = self._tops[i]
        colour = self._stages[p][T.figure_cells[code][slot][0]]
        self._plates[p * 10 + space] = colour
        self._plate_bits[p] |= 1 << space
        tokens = self._tokens[p] = self._tokens[p] + 1
        if self.supply > 0:
            self.supply -= 1
        else:
            self.reserve_used += 1  # the final round's tokens come from the reserve (decision 8)
        self._observer.token(p, space, colour, tokens, self.supply, self.reserve_used)
        if T.solo and tokens >= T.solo_tokens:
            self._observer.all_tokens_placed()
        # Decision 2: the tile stays on its slot (the one below stays hidden) until any
        # power is resolved; ``passing`` names it meanwhile.
        self.passing = code
        self._observer.passing(code)
        self._validations = []
        # Level-4 powers fire when the space fills the last free one of its pair (§7.4).
        power = T.power[space] if self._plates[p * 10 + T.partner[space]] >= 0 else -1
        if power == POWER_EXTRA_TURN:
            if T.solo:  # the umbrella ejected this turn returns to the zone opposite its entry
                colour = self.last_colour
                n = self._discard[colour] = self._discard[colour] - 1
                self._observer.discard(colour, n)
                self._put(T.eject_zones[0][self.last_side], colour)
            else:  # taken after the pass, unless the end is triggered (decision 6)
                self.extra_turn = True
                self._observer.extra_turn(True)
        elif power == POWER_SWAP_STAGE:
            self._set_phase(SWAP_STAGE)
            return
        elif power == POWER_SWAP_ZONE:
            self._set_phase(SWAP_ZONE)
            return
        self._lift(slot)
        self._begin_pass()

    def validated_slot(self) -> int:
        """The slot of the mover whose top tile is the validated one, during a swap decision
        (decision 2: it leaves only after the power is resolved); -1 in any other phase."""
        if self.phase not in (SWAP_STAGE, SWAP_ZONE):
            return -1
        base = self.current * 4
        return self._tops[base : base + 4].index(self.passing)

    def _lift(self, slot: int) -> None:
        """The validated tile leaves the mover's ``slot``, revealing the one below (decision 2)."""
        p = self.current
        i = p * 4 + slot
        stack = self._stacks[i]
        stack.pop()
        if stack:
            self._tops[i] = stack[-1]
            self._unseen[i] = min(self._unseen[i], len(stack) - 1)  # the new top is seen by all
        else:
            self._tops[i] = -1
            self._filled_slots[p] -= 1
        self._observer.slot(p, slot, self._tops[i], len(stack))

    def _swap_stage(self, a: int) -> None:
        """Level-4 power: swap two adjacent stage cells, or pass (§7.4)."""
        if a != A.SWAP_STAGE_PASS:
            x, y = _PAIRS[a - A.SWAP_STAGE_START]
            p = self.current
            s = self._stages[p]
            vx, vy = s[x], s[y]
            s[x], s[y] = vy, vx
            self._observer.cell(p, x, vx, vy)
            self._observer.cell(p, y, vy, vx)
        self._lift(self.validated_slot())
        self._begin_pass()

    def _swap_zone(self, a: int) -> None:
        """Level-4 power: swap a stage umbrella with one of the seat's zones, or pass (§7.4)."""
        if a != A.SWAP_ZONE_PASS:
            rel = a - A.SWAP_ZONE_START
            cell, side, colour = rel >> 4, (rel >> 2) & 3, rel & 3
            p = self.current
            s = self._stages[p]
            old = s[cell]
            s[cell] = colour
            self._observer.cell(p, cell, old, colour)
            zone = self.tables.side_zones[p][side]
            self._take(zone, colour)
            self._put(zone, old)
        self._lift(self.validated_slot())
        self._begin_pass()

    # ------------------------------------------------------------------- pass (§4.3, §8.2)
    def _begin_pass(self) -> None:
        """Hand the validated tile on: at 2 players the giver chooses its face; at 3-4 it is
        flipped; in solo a white tile is discarded and a black one comes back white."""
        T = self.tables
        if T.num_players == 2:
            self._set_phase(GIVE_FACE)
            return
        if T.solo and self.passing & 1 == 0:
            self._gone.append(self.passing >> 1)
            self.passing = -1
            self._observer.passing(-1)
            self._end_turn()
            return
        self.passing ^= 1
        self._observer.passing_face(self.passing)
        self._place()

    def _give_face(self, face: int) -> None:
        self.passing = (self.passing & ~1) | face
        self._observer.passing_face(self.passing)
        self._place()

    def _place(self) -> None:
        """The tile in transit goes to the receiver's first empty slot; if none, the receiver
        chooses the stack it covers."""
        r = self.tables.receiver[self.current]
        tops = self._tops
        for k in range(4):
            if tops[r * 4 + k] < 0:
                self._filled_slots[r] += 1
                self._land(r, k)
                return
        self._set_phase(COVER)

    def _cover(self, slot: int) -> None:
        self._land(self.tables.receiver[self.current], slot)

    def _land(self, seat: int, slot: int) -> None:
        """The tile in transit goes on top of ``seat``'s ``slot``; the turn is over."""
        i = seat * 4 + slot
        self._stacks[i].append(self.passing)
        self._tops[i] = self.passing
        self._observer.slot(seat, slot, self.passing, len(self._stacks[i]))
        self.passing = -1
        self._observer.passing(-1)
        self._end_turn()

    # ------------------------------------------------------------------- end of a turn (§4.4, §5, §8.3)
    def _end_turn(self) -> None:
        """End check after a whole turn, then the next player (or the end of the game)."""
        T = self.tables
        cur = self.current
        turn = self.turn = self.turn + 1
        if T.solo:
            over = self._solo_over()
            nxt = cur
            if self.last_side >= 0:
                self._observer.last_slide_cleared(self.last_side, self.last_colour)
                self.last_side = self.last_colour = -1
        else:
            if self.end_triggered_by < 0 and F.end_triggered(self.supply, 0 in self._filled_slots, max(self._tokens)):
                self.end_triggered_by = cur
                self._observer.end_triggered(cur)
            nxt, over = T.next_turn[cur][self.end_triggered_by + 1][self.extra_turn]
            if self.extra_turn:
                self.extra_turn = False
                self._observer.extra_turn(False)
        if over or turn >= self.config.max_turns:
            self.terminated = over
            self.truncated = not over
            nxt = cur
            new_phase = GAME_OVER
        elif T.solo:
            new_phase = SLIDE
        else:
            zc = self._zone_colours
            top, bottom, left, right = T.side_zones[nxt]
            new_phase = FALLBACK if (zc[top] | zc[bottom] | zc[left] | zc[right]) == 0 else SLIDE
        self.phase = new_phase
        self.current = nxt
        self._observer.turn_over(turn, new_phase, nxt)

    def _solo_over(self) -> bool:
        """The solo end after a turn (facts.solo_over): last token, empty zones, or no
        colour both scoreable and completable."""
        T = self.tables
        tops, d, ok = self._tops, self._discard, T.colour_completable
        present = (tops[0] >= 0) | (tops[1] >= 0) << 1 | (tops[2] >= 0) << 2 | (tops[3] >= 0) << 3
        completable = ok[d[0]] | ok[d[1]] << 1 | ok[d[2]] << 2 | ok[d[3]] << 3
        scoreable = T.scoreable_colours[~self._plate_bits[0] & 0x3FF][present]
        zones_empty = not any(self._zone_colours)
        board_empty = self._filled_slots[0] == 0
        return F.solo_over(self._tokens[0], T.solo_tokens, zones_empty, board_empty, scoreable & completable)

    def _set_phase(self, phase: int) -> None:
        """A new decision within the turn (the actor may change: the receiver covers)."""
        self.phase = phase
        self._observer.phase(phase, self.tables.actor[phase][self.current])

    # ------------------------------------------------------------------- misc
    def __repr__(self) -> str:
        return (
            f"SingleGame(P={self.tables.num_players}, level={self.config.plate_level}, turn={self.turn}, "
            f"phase={A.PHASES[self.phase]!r}, current={self.current})"
        )
