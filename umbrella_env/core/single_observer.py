"""The observation of a :class:`~umbrella_env.core.single.SingleGame`, kept up to date
change by change.

Building the observation vector of :mod:`~umbrella_env.core.observation` from scratch
costs far more than a step of the single-game engine.  :class:`SingleObserver` instead
holds a float32 vector ``canon`` with every entry in the *absolute* frame (seat blocks in
seat order, zone counts by absolute zone, one-hots of absolute seats), and the game tells
it each change as it makes it ("zone entry changed", "line pushed", "token placed",
"slot changed", ...).  An observation is then one gather ``canon[perm[seat]]``, where
``perm[seat]`` maps every egocentric observation index to its absolute entry (or to a
constant zero entry for absent seats and zones).

Scores are not pushed: a change that can move a score (a personal zone, a token) marks
the seat stale, and before an observation :meth:`SingleObserver.write_scores` asks the
game for the score of each stale seat.

Canonical layout (every offset a module constant)::

    [0, 768)          4 seat blocks in ABSOLUTE seat order (blocks of absent seats stay 0)
    [768, 784)        the own_zones slot of the observation: unused here, always 0 (ZERO)
    [784, 820)        the all_zones slot: unused, always 0
    [820, 899)        the other global segments; actor / current / end_trigger_seat are
                      one-hots of the ABSOLUTE seat
    [899, 899 + 4Z)   umbrella counts of every zone, absolute zone order (ZONE_COUNTS)

``tests/test_single.py`` checks every observation from every seat against the batched
:func:`~umbrella_env.core.observation.observe` on random games of every configuration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from umbrella_env.core import actions as A
from umbrella_env.core import facts as F
from umbrella_env.core import observation as O
from umbrella_env.core.config import GameConfig

if TYPE_CHECKING:
    from umbrella_env.core.single import SingleGame

__all__ = ["ObserverLayout", "SingleObserver"]

_LAYOUT = O.observation_layout()
_GLOBAL = {name: start for start, _, name, _ in _LAYOUT[-len(O.GLOBAL_SEGMENTS) :]}
_SEAT = {name.split(".")[-1]: start for start, _, name, _ in _LAYOUT[: len(O.SEAT_SEGMENTS)]}
SEAT_SIZE = O.SEAT_SIZE
# Offsets inside a seat block.
STAGE = _SEAT["stage"]
SLOT_PRESENT = _SEAT["slot_present"]
SLOT_BLACK = _SEAT["slot_black"]
SLOT_HEIGHT = _SEAT["slot_height"]
SLOT_FIGURE = _SEAT["slot_figure"]
PLATE_TOKEN = _SEAT["plate_token"]
PLATE_COLOUR = _SEAT["plate_colour"]
SCORE = _SEAT["score"]
TOKENS = _SEAT["tokens"]
# Offsets of the global segments.
ZERO = _GLOBAL["own_zones"]  # an entry that is always 0 (what absent seats and zones gather)
DISCARD = _GLOBAL["discard"]
NUM_PLAYERS = _GLOBAL["num_players"]
PLATE_LEVEL = _GLOBAL["plate_level"]
PHASE = _GLOBAL["phase"]
ACTOR = _GLOBAL["actor"]
CURRENT = _GLOBAL["current"]
SUPPLY = _GLOBAL["supply"]
RESERVE_USED = _GLOBAL["reserve_used"]
TURN_FRACTION = _GLOBAL["turn_fraction"]
END_TRIGGERED = _GLOBAL["end_triggered"]
END_TRIGGER_SEAT = _GLOBAL["end_trigger_seat"]
EXTRA_TURN = _GLOBAL["extra_turn"]
PASSING_PRESENT = _GLOBAL["passing_present"]
PASSING_BLACK = _GLOBAL["passing_black"]
PASSING_WHITE_FACE = _GLOBAL["passing_white_face"]
PASSING_BLACK_FACE = _GLOBAL["passing_black_face"]
LAST_SIDE = _GLOBAL["last_side"]
LAST_COLOUR = _GLOBAL["last_colour"]
#: Zone counts, absolute zone order, after the observation's own entries.
ZONE_COUNTS = O.OBS_SIZE
CANON_SIZE = ZONE_COUNTS + 4 * A.MAX_ZONES
#: Global one-hots of a seat, stored absolute and gathered relative to the observer.
_RELATIVE = ("actor", "current", "end_trigger_seat")


def _entries(canon: np.ndarray) -> Any:
    """A memoryview of the float32 vector ``canon`` (typed Any: it takes floats, which
    typeshed's memoryview does not know; the cast, not an ignore, because numpy >= 2.5's
    stubs accept the array and an unused ignore fails mypy there)."""
    return memoryview(cast(Any, canon))


class ObserverLayout:
    """Per-configuration data of the observer: the gather of each observer seat, the
    constant entries, and which seats' scores each zone moves."""

    def __init__(self, config: GameConfig, fig_grid: np.ndarray, face_grid: np.ndarray) -> None:
        P = self.num_players = config.num_players
        self.solo = config.solo
        Z = config.num_zones
        self.side_zones = [F.seat_zones(P, p) for p in range(P)]
        self.egocentric_zones = [[F.egocentric_zone(P, p, k) for k in range(A.MAX_ZONES)] for p in range(P)]
        #: [49, 4, 16] float32 rotated figure cells per (tile code, slot); row 48 (no tile) zero.
        self.fig_grid = fig_grid
        #: [48, 16] float32 unrotated face cells per tile code.
        self.face_grid = face_grid
        #: Per zone, the bits of the seats whose score counts its umbrellas: the owner of a
        #: personal zone.  Solo: none until every token is placed, then all (``score_seats_all``).
        self.score_seats = [0] * Z
        if not self.solo:
            for p in range(P):
                self.score_seats[F.personal_zone(P, p)] = 1 << p
        self.score_seats_all = [1] * Z
        canon = np.zeros(CANON_SIZE, np.float32)
        canon[NUM_PLAYERS + P - 1] = 1
        canon[PLATE_LEVEL + config.plate_level - 1] = 1
        self.canon0 = canon
        self.perm = [self._perm(o) for o in range(P)]

    def _perm(self, o: int) -> np.ndarray:
        """Observation index -> canonical index, for observer seat ``o``."""
        P = self.num_players
        perm = np.arange(O.OBS_SIZE, dtype=np.intp)
        for j in range(O.MAX_SEATS):
            block = perm[j * SEAT_SIZE : (j + 1) * SEAT_SIZE]
            block[:] = np.arange(SEAT_SIZE) + ((o + j) % P) * SEAT_SIZE if j < P else ZERO
        for side in range(4):
            for c in range(4):
                perm[_GLOBAL["own_zones"] + side * 4 + c] = ZONE_COUNTS + self.side_zones[o][side] * 4 + c
        for k in range(A.MAX_ZONES):
            zone = self.egocentric_zones[o][k]
            for c in range(4):
                perm[_GLOBAL["all_zones"] + k * 4 + c] = ZONE_COUNTS + zone * 4 + c if zone >= 0 else ZERO
        for name in _RELATIVE:
            for j in range(4):
                perm[_GLOBAL[name] + j] = _GLOBAL[name] + (o + j) % P if j < P else ZERO
        return perm


class SingleObserver:
    """The absolute-frame observation vector of one game, updated by notifications.

    The notification methods take the new values (and, where a one-hot moves, the old
    ones); only :class:`~umbrella_env.core.single.SingleGame` calls them.
    """

    __slots__ = (
        "layout",
        "max_turns",
        "perm",
        "canon",
        "cv",
        "stale_scores",
        "score_seats",
        "shown_phase",
        "shown_current",
        "shown_actor",
    )

    layout: ObserverLayout
    #: the game's turn limit (the layout serves every limit)
    max_turns: int
    #: layout.perm: [seat] the gather of that observer's observation.
    perm: list[np.ndarray]
    canon: np.ndarray
    #: A float memoryview of ``canon`` (:func:`_entries`): single-entry writes are several
    #: times faster through it.
    cv: Any
    #: Bit mask of the seats whose score entry is out of date.
    stale_scores: int
    #: Per zone, the seats whose score its umbrellas count (see ObserverLayout).
    score_seats: list[int]
    #: The phase, current seat and actor whose one-hot entries are set.
    shown_phase: int
    shown_current: int
    shown_actor: int

    # ------------------------------------------------------------------- construction
    @classmethod
    def of(cls, game: SingleGame, layout: ObserverLayout) -> SingleObserver:
        """The observer of ``game``'s current position, written from scratch (every new
        game pays it, so it reads the game's internal lists rather than copies)."""
        self = cls.__new__(cls)
        self.layout = layout
        self.max_turns = game.config.max_turns
        self.perm = layout.perm
        P = layout.num_players
        c = self.canon = layout.canon0.copy()
        cv = self.cv = _entries(c)
        for p in range(P):
            base = p * SEAT_SIZE
            for cell, colour in enumerate(game._stages[p]):
                cv[base + STAGE + 4 * cell + colour] = 1
            for k in range(4):
                code = game._tops[4 * p + k]
                if code >= 0:  # an empty slot is all zero already
                    self.slot(p, k, code, len(game._stacks[4 * p + k]))
            for space, colour in enumerate(game._plates[10 * p : 10 * p + 10]):
                if colour >= 0:
                    cv[base + PLATE_TOKEN + space] = 1
                    cv[base + PLATE_COLOUR + 4 * space + colour] = 1
            cv[base + TOKENS] = game._tokens[p]
        for i, n in enumerate(game._zones):
            cv[ZONE_COUNTS + i] = n
        if layout.solo:
            for colour, n in enumerate(game._discard):
                cv[DISCARD + colour] = n
        self.shown_phase, self.shown_current, self.shown_actor = game.phase, game.current, game.actor
        cv[PHASE + game.phase] = 1
        cv[ACTOR + game.actor] = 1
        cv[CURRENT + game.current] = 1
        cv[SUPPLY] = game.supply
        cv[RESERVE_USED] = game.reserve_used
        cv[TURN_FRACTION] = game.turn / self.max_turns
        if game.end_triggered_by >= 0:
            self.end_triggered(game.end_triggered_by)
        cv[EXTRA_TURN] = int(game.extra_turn)
        self.passing(game.passing)
        if game.last_side >= 0:
            self.last_slide(game.last_side, game.last_colour)
        self.score_seats = layout.score_seats_all if layout.solo and game.all_tokens_placed() else layout.score_seats
        self.stale_scores = (1 << P) - 1
        return self

    def clone(self) -> SingleObserver:
        other = SingleObserver.__new__(SingleObserver)
        other.layout = self.layout
        other.max_turns = self.max_turns
        other.perm = self.perm
        other.canon = self.canon.copy()
        other.cv = _entries(other.canon)
        other.stale_scores = self.stale_scores
        other.score_seats = self.score_seats  # a shared read-only table
        other.shown_phase, other.shown_current, other.shown_actor = (
            self.shown_phase,
            self.shown_current,
            self.shown_actor,
        )
        return other

    # ------------------------------------------------------------------- reading
    # An observation is ``canon[perm[seat]]`` once the stale scores are written
    # (``SingleGame.observe`` does it inline: it is the hot path).
    def write_scores(self, game: SingleGame) -> None:
        """Rewrite the score entries of the stale seats, from ``game.score``."""
        stale = self.stale_scores
        cv = self.cv
        p = 0
        while stale:
            if stale & 1:
                cv[p * SEAT_SIZE + SCORE] = game.score(p)
            stale >>= 1
            p += 1
        self.stale_scores = 0

    # ------------------------------------------------------------------- notifications
    def zone(self, entry: int, count: int) -> None:
        """Zone entry ``entry`` (= zone * 4 + colour) now holds ``count`` umbrellas."""
        self.cv[ZONE_COUNTS + entry] = count
        self.stale_scores |= self.score_seats[entry >> 2]

    def discard(self, colour: int, count: int) -> None:
        """Solo: ``count`` umbrellas of ``colour`` are discarded."""
        self.cv[DISCARD + colour] = count

    def slid(
        self,
        seat: int,
        cells: tuple[int, ...],
        stage: list[int],
        ejected: int,
        taken: int,
        taken_count: int,
        put: int,
        put_count: int,
        side: int,
    ) -> None:
        """A slide (one notification for the whole move, the hot path): an umbrella left
        zone entry ``taken`` (= zone * 4 + colour, now ``taken_count``), entered from
        ``side`` and pushed the line ``cells`` (entry first) of ``seat``'s stage, now
        ``stage``, by one cell; ``ejected`` left the far end into zone entry ``put`` (now
        ``put_count``), or, in solo (``put`` -1), into the discard (now ``put_count`` of its
        colour), recorded as this turn's slide."""
        cv = self.cv
        score_seats = self.score_seats
        cv[ZONE_COUNTS + taken] = taken_count
        if put >= 0:
            cv[ZONE_COUNTS + put] = put_count
            self.stale_scores |= score_seats[taken >> 2] | score_seats[put >> 2]
        else:
            cv[DISCARD + ejected] = put_count
            cv[LAST_SIDE + side] = 1
            cv[LAST_COLOUR + ejected] = 1
            self.stale_scores |= score_seats[taken >> 2]
        b = seat * SEAT_SIZE + STAGE
        x0, x1, x2, x3 = cells
        v0, v1, v2, v3 = stage[x0], stage[x1], stage[x2], stage[x3]
        x0, x1, x2, x3 = b + 4 * x0, b + 4 * x1, b + 4 * x2, b + 4 * x3
        cv[x0 + v1] = 0  # before the push, each cell held the colour now one cell further in
        cv[x1 + v2] = 0
        cv[x2 + v3] = 0
        cv[x3 + ejected] = 0
        cv[x0 + v0] = 1
        cv[x1 + v1] = 1
        cv[x2 + v2] = 1
        cv[x3 + v3] = 1

    def cell(self, seat: int, cell: int, old: int, new: int) -> None:
        """A stage cell of ``seat`` changed colour from ``old`` to ``new``."""
        b = seat * SEAT_SIZE + STAGE + 4 * cell
        self.cv[b + old] = 0
        self.cv[b + new] = 1

    def last_slide(self, side: int, colour: int) -> None:
        """Solo: this turn's slide entered from ``side`` and ejected ``colour``."""
        self.cv[LAST_SIDE + side] = 1
        self.cv[LAST_COLOUR + colour] = 1

    def last_slide_cleared(self, side: int, colour: int) -> None:
        """Solo: the turn is over, the recorded slide (``side``, ``colour``) is forgotten."""
        self.cv[LAST_SIDE + side] = 0
        self.cv[LAST_COLOUR + colour] = 0

    def token(self, seat: int, space: int, colour: int, tokens: int, supply: int, reserve_used: int) -> None:
        """``seat`` placed a token for a figure of ``colour`` on ``space`` (now ``tokens``
        on its plate), from the supply or the reserve."""
        cv = self.cv
        base = seat * SEAT_SIZE
        cv[base + PLATE_TOKEN + space] = 1
        cv[base + PLATE_COLOUR + space * 4 + colour] = 1
        cv[base + TOKENS] = tokens
        cv[SUPPLY] = supply
        cv[RESERVE_USED] = reserve_used
        self.stale_scores |= 1 << seat

    def all_tokens_placed(self) -> None:
        """Solo: every token is placed, so the zones' umbrellas count for the score now."""
        self.score_seats = self.layout.score_seats_all
        self.stale_scores |= 1

    def slot(self, seat: int, slot: int, code: int, height: int) -> None:
        """Slot ``slot`` of ``seat`` now shows tile code ``code`` (-1 empty) on a stack of ``height``."""
        cv = self.cv
        base = seat * SEAT_SIZE
        cv[base + SLOT_PRESENT + slot] = code >= 0
        cv[base + SLOT_BLACK + slot] = code & 1 if code >= 0 else 0
        cv[base + SLOT_HEIGHT + slot] = height
        f = base + SLOT_FIGURE + 16 * slot
        self.canon[f : f + 16] = self.layout.fig_grid[code if code >= 0 else 48, slot]

    def passing(self, code: int) -> None:
        """The tile in transit is now ``code`` (-1: none)."""
        c, cv = self.canon, self.cv
        if code >= 0:
            cv[PASSING_PRESENT] = 1
            cv[PASSING_BLACK] = code & 1
            tile = code >> 1
            c[PASSING_WHITE_FACE : PASSING_WHITE_FACE + 16] = self.layout.face_grid[2 * tile]
            c[PASSING_BLACK_FACE : PASSING_BLACK_FACE + 16] = self.layout.face_grid[2 * tile + 1]
        else:
            cv[PASSING_PRESENT] = 0
            cv[PASSING_BLACK] = 0
            c[PASSING_WHITE_FACE : PASSING_BLACK_FACE + 16] = 0

    def passing_face(self, code: int) -> None:
        """The tile in transit (still ``code``'s tile) turned to ``code``'s face."""
        self.cv[PASSING_BLACK] = code & 1

    def phase(self, phase: int, actor: int) -> None:
        """A new decision within the turn: ``phase``, taken by ``actor``."""
        cv = self.cv
        cv[PHASE + self.shown_phase] = 0
        cv[PHASE + phase] = 1
        self.shown_phase = phase
        if actor != self.shown_actor:
            cv[ACTOR + self.shown_actor] = 0
            cv[ACTOR + actor] = 1
            self.shown_actor = actor

    def turn_over(self, turn: int, phase: int, current: int) -> None:
        """A turn ended: ``turn`` turns completed, ``current`` plays next (and takes the
        decision ``phase``), or the game is over (phase ``game_over``)."""
        cv = self.cv
        cv[TURN_FRACTION] = turn / self.max_turns
        cv[PHASE + self.shown_phase] = 0
        cv[PHASE + phase] = 1
        self.shown_phase = phase
        if current != self.shown_current:
            cv[CURRENT + self.shown_current] = 0
            cv[CURRENT + current] = 1
            self.shown_current = current
        if current != self.shown_actor:
            cv[ACTOR + self.shown_actor] = 0
            cv[ACTOR + current] = 1
            self.shown_actor = current

    def end_triggered(self, seat: int) -> None:
        """``seat``'s turn triggered the end of the game."""
        self.cv[END_TRIGGERED] = 1
        self.cv[END_TRIGGER_SEAT + seat] = 1

    def extra_turn(self, flag: bool) -> None:
        """The extra-turn flag of this turn is now ``flag``."""
        self.cv[EXTRA_TURN] = flag
