"""Rule facts: each rule that several parts of the core need, written once.

The batched engine (:mod:`~umbrella_env.core.engine`), the single-game engine
(:mod:`~umbrella_env.core.single`), the state-dict code (:mod:`~umbrella_env.core.serialize`,
:mod:`~umbrella_env.core.batch_io`), both renderers and the agents call these functions
or index the tables built from them (:mod:`~umbrella_env.core.tables`).  A rule change
is an edit here (and in the reference engine).

:mod:`~umbrella_env.core.reference` deliberately does **not** use this module: it is the
independent, plain-Python reading of ``docs/rules.md`` that the differential tests compare
the other engines with, so a mistake here shows up as a difference there.

Where each fact is used
-----------------------
=====================================  ==========================================================
fact (docs/rules.md)                   used by
=====================================  ==========================================================
:func:`seat_zones` (§2, §8.1)          ``tables.side_zone`` (batched engine, observation),
                                       ``SingleTables.side_zones``; :func:`seat_zone_strings` for
                                       state dicts (serialize, render, image, svg)
:func:`egocentric_zone` (actions.py)   ``tables.rel_zone``, ``SingleTables.egocentric_zones``
:func:`zone_keys` (docs/state.md)      ``serialize.zones_entry`` / ``zone_count_rows`` (both
                                       engines' state dicts), render
:func:`receiver`, :func:`actor` (§4.3) ``engine.actor`` / ``_place`` / ``_cover``,
                                       ``SingleTables.actor`` / ``receiver``, serialize (cover
                                       check), ``render.actor_of`` (render, image, svg), agents
:func:`end_triggered` (§5.1)           ``engine._end_turn``, ``SingleGame._end_turn``
:func:`next_turn` (§4.4, §5.1)         ``engine._end_turn``, ``SingleTables.next_turn``
:func:`solo_over`,                     ``engine._solo_over``, ``SingleGame._solo_over``
:func:`colour_completable`,            (``tables.scoreable_colours``,
:func:`scoreable_colours` (§8.3)       ``SingleTables.colour_completable``)
:func:`score`, :func:`personal_points` ``tables.score`` (``engine.scores``, ``SingleGame.score``),
(§5.2, §8.4)                           ``serialize`` (the dict's ``scores``), agents
:func:`ranks` (§5.3)                   ``engine.ranks``, ``SingleGame.ranks``
:func:`win_credits` (§5.3, §5.4)       ``match.win_credits`` (evaluation, training), demo
:func:`merit_band` (§8.4)              evaluation (stats, report, plots), play, demo
setup constants (§3, §8.1)             ``engine.reset``, ``single_deal.deal``
=====================================  ==========================================================

Scalars and arrays
------------------
The predicates and formulas take plain ints and bools, and apply elementwise to NumPy
arrays of the same meaning (a batch of games): they use only arithmetic, comparisons,
``|`` / ``&`` and :func:`_where`.  The hot loop of the single-game engine indexes tables
built from them once per configuration (``SingleTables``, ``Tables.score``) instead of
calling them.

Zone numbering
--------------
Zones have an absolute index (the batched arrays' ``Z`` axis)::

    2-4 players:  0 central | 1 + i  side zone i | 1 + P + i  personal zone of seat i
    solo:         0 top     | 1 personal (bottom) | 2 left | 3 right

Side zone ``i`` lies between seat ``i`` (its left) and seat ``i + 1`` (its right), so
a seat's four zones are (docs/rules.md §2)::

                        top: central
                     +---------------+
    left: side i     |  stage of     |   right: side i-1 (mod P)
                     |  seat i       |
                     +---------------+
                  bottom: personal zone of seat i
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from umbrella_env.core.actions import PHASE_COVER
from umbrella_env.core.components import NUM_COLOURS, NUM_SPACES
from umbrella_env.core.errors import ArgumentError

__all__ = [
    "CENTRAL_ZONE",
    "FIGURE_CELLS",
    "SETUP_SLOTS",
    "SOLO_UMBRELLAS_PER_COLOUR",
    "SOLO_ZONE_DEAL",
    "TOKEN_POINTS",
    "actor",
    "colour_completable",
    "egocentric_zone",
    "end_triggered",
    "next_turn",
    "num_zones",
    "personal_points",
    "personal_zone",
    "ranks",
    "receiver",
    "scoreable_colours",
    "score",
    "scored_umbrellas_bound",
    "seat_zone_strings",
    "seat_zones",
    "setup_black_faces",
    "setup_stack_height",
    "solo_over",
    "zone_keys",
]


def _where(cond: Any, a: Any, b: Any) -> Any:
    """``a if cond else b``, elementwise when ``cond`` is an array."""
    if isinstance(cond, np.ndarray):
        return np.where(cond, a, b)
    return a if cond else b


# --------------------------------------------------------------------------- zones (§2, §8.1)
CENTRAL_ZONE = 0


def num_zones(num_players: int) -> int:
    """Zones in a game: 2P + 1 (central, P side zones, P personal zones), 4 in solo."""
    return 4 if num_players == 1 else 2 * num_players + 1


def personal_zone(num_players: int, seat: int) -> int:
    """Absolute index of the seat's personal zone (the bottom side of its stage)."""
    return 1 if num_players == 1 else 1 + num_players + seat


def seat_zones(num_players: int, seat: int) -> tuple[int, int, int, int]:
    """Absolute zones on the seat's top, bottom, left and right sides (docs/rules.md §2;
    solo §8.1), in the order of ``actions.SIDES``."""
    if num_players == 1:
        return (0, 1, 2, 3)
    return (CENTRAL_ZONE, personal_zone(num_players, seat), 1 + seat, 1 + (seat - 1) % num_players)


def egocentric_zone(num_players: int, seat: int, zone_id: int) -> int:
    """Absolute zone of fallback zone id ``zone_id`` (0..8, ``actions.ZONE_NAMES``) seen
    from ``seat``; -1 when that zone does not exist (in solo there is no fallback)."""
    if num_players == 1:
        return -1
    if zone_id == 0:
        return CENTRAL_ZONE
    k = (zone_id - 1) % 4
    if k >= num_players:
        return -1
    owner = (seat + k) % num_players
    return 1 + owner if zone_id <= 4 else personal_zone(num_players, owner)


def zone_keys(num_players: int) -> tuple[tuple[str, int | None], ...]:
    """Where each absolute zone sits in the state dict's ``zones``: ``(key, index)``,
    index None for a key holding one zone (docs/state.md)."""
    if num_players == 1:
        return (("top", None), ("personal", None), ("left", None), ("right", None))
    P = num_players
    return (("central", None), *(("side", i) for i in range(P)), *(("personal", i) for i in range(P)))


def seat_zone_strings(d: Mapping[str, Any], seat: int) -> tuple[str, str, str, str]:
    """The umbrellas of the seat's top, bottom, left and right zones in a state dict."""
    keys = zone_keys(d["num_players"])
    zones = d["zones"]
    out = []
    for z in seat_zones(d["num_players"], seat):
        key, index = keys[z]
        out.append(zones[key] if index is None else zones[key][index])
    return out[0], out[1], out[2], out[3]


# --------------------------------------------------------------------------- turn order (§2, §4)
def receiver(current: Any, num_players: int) -> Any:
    """The seat a validated tile goes to: the left neighbour (docs/rules.md §4.3); in solo
    the player keeps it (§8.2)."""
    return (current + 1) % num_players


def actor(current: Any, phase: Any, num_players: int) -> Any:
    """The seat that decides now: the receiver chooses the slot to cover (phase ``cover``,
    §4.3), the current player takes every other decision."""
    return _where(phase == PHASE_COVER, receiver(current, num_players), current)


def next_turn(current: Any, num_players: int, end_triggered_by: Any, extra_turn: Any) -> tuple[Any, Any]:
    """``(next seat, game over)`` after a whole turn (docs/rules.md §4.4, §5.1, decision 5).

    Seats play in order.  Once the end is triggered (``end_triggered_by`` >= 0, -1 when
    not) the game is over when the turn would come back to the triggering seat, and no
    extra turn is granted; before that an extra-turn power (``extra_turn``) keeps the seat.
    In solo the next seat is always the player and the game never ends here (§8.3).
    """
    following = (current + 1) % num_players
    over = (end_triggered_by >= 0) & (following == end_triggered_by)
    again = (end_triggered_by < 0) & extra_turn
    return _where(again, current, following), over


# --------------------------------------------------------------------------- end (§5.1, §8.3)
def end_triggered(supply: Any, a_board_without_tiles: Any, most_tokens: Any) -> Any:
    """The end trigger checked after each turn at 2-4 players (docs/rules.md §5.1): the
    supply is empty, some player has no figure tile left, or some plate is full
    (``most_tokens``: the most tokens on one plate)."""
    return (supply == 0) | a_board_without_tiles | (most_tokens >= NUM_SPACES)


#: Solo: umbrellas of each colour in the game (stage, zones and discard; §8.1).
SOLO_UMBRELLAS_PER_COLOUR = 9
#: Cells of a figure: a colour with fewer umbrellas on the stage and in the zones is dead.
FIGURE_CELLS = 4


def colour_completable(discarded: Any) -> Any:
    """Solo: whether a colour still has a figure's worth of umbrellas on the stage and in
    the zones, i.e. at most 5 of its 9 umbrellas discarded (§8.3)."""
    return discarded <= SOLO_UMBRELLAS_PER_COLOUR - FIGURE_CELLS


def scoreable_colours(free_spaces: int, slots_with_tiles: int, colour_spaces: Any, white_slots: Any) -> int:
    """Solo: 4-bit mask of the colours that could still be scored (docs/rules.md §8.3): a
    free plate space accepts the colour, or a free white space's slot holds a tile (then
    every colour).  ``free_spaces`` / ``slots_with_tiles`` are bit masks; ``colour_spaces``
    [10][4] says whether a space accepts a colour, ``white_slots`` [10] the slot of a
    white space (-1 for a colour space)."""
    mask = 0
    for s in range(NUM_SPACES):
        if not free_spaces >> s & 1:
            continue
        if white_slots[s] >= 0 and slots_with_tiles >> int(white_slots[s]) & 1:
            return (1 << NUM_COLOURS) - 1
        for c in range(NUM_COLOURS):
            if colour_spaces[s][c]:
                mask |= 1 << c
    return mask


def solo_over(tokens: Any, solo_tokens: int, zones_empty: Any, board_empty: Any, open_colours: Any) -> Any:
    """The solo end, checked after each turn (docs/rules.md §8.3, decision 11): the last
    token is placed, no slide is possible (the four zones are empty), or no figure can be
    completed any more (no tile on the board, or ``open_colours`` -- the mask of colours
    both scoreable and completable -- is empty)."""
    return (tokens >= solo_tokens) | zones_empty | board_empty | (open_colours == 0)


# --------------------------------------------------------------------------- scores (§5, §8.4)
#: Points per token on the plate.
TOKEN_POINTS = 2


def personal_points(umbrellas: Any) -> Any:
    """The personal-zone part of a 2-4 player score: +2 when empty, else -1 per umbrella (§5.2)."""
    return _where(umbrellas == 0, 2, -umbrellas)


def score(num_players: int, tokens: Any, bonus: Any, umbrellas: Any, solo_tokens: int) -> Any:
    """A score by the end-of-game formula (docs/rules.md §5.2, §8.4; decision 14: at any moment).

    ``tokens`` on the plate, ``bonus`` the plate bonus of their spaces, ``umbrellas`` the
    ones the score counts: the seat's personal zone at 2-4 players, the four zones in solo
    (+1 each, only once all ``solo_tokens`` are placed).
    """
    points = TOKEN_POINTS * tokens + bonus
    if num_players == 1:
        return points + _where(tokens >= solo_tokens, umbrellas, 0)
    return points + personal_points(umbrellas)


def scored_umbrellas_bound(num_players: int) -> int:
    """The most umbrellas :func:`score` can count: every umbrella off the stages (4 per
    zone at 2-4 players, 20 in solo)."""
    if num_players == 1:
        return NUM_COLOURS * (SOLO_UMBRELLAS_PER_COLOUR - FIGURE_CELLS)
    return NUM_COLOURS * num_zones(num_players)


def ranks(scores: Any, personal: Any) -> np.ndarray:
    """Ranks of the seats (decision 13), along the last axis of ``scores`` / ``personal``
    ([..., P]): the number of players strictly better -- a higher score, or an equal score
    and fewer umbrellas in the personal zone.  Rank 0 is best; several 0 share the victory."""
    s = np.asarray(scores)
    n = np.asarray(personal)
    higher = s[..., None, :] > s[..., :, None]  # [..., p, q]: q scores more than p
    tie_won = (s[..., None, :] == s[..., :, None]) & (n[..., None, :] < n[..., :, None])
    better = higher | tie_won
    return better.sum(axis=-1)


def win_credits(ranks: Any, truncated: Any = False) -> np.ndarray:
    """Win credits of the seats along the last axis of ``ranks`` ([..., P]; ``truncated``
    [...]): ``1/k`` for each of the ``k`` seats of rank 0 (a shared victory is split), else
    0; a truncated game (decision 12) is a draw, ``1/P`` each; a solo game has no winner (0).
    What a result counts as wherever wins are counted (evaluation, training, the demo)."""
    r = np.asarray(ranks)
    if r.shape[-1] == 1:
        return np.zeros(r.shape)
    first = (r == 0) | np.asarray(truncated, dtype=bool)[..., None]
    return first / first.sum(axis=-1, keepdims=True)


#: The rulebook's solo merit table (§8.4): (lowest score, highest score, verdict).
MERIT_BANDS: tuple[tuple[float, float, str], ...] = (
    (-math.inf, 14, "try again"),
    (15, 18, "a start"),
    (19, 23, "not bad"),
    (24, 26, "well played"),
    (27, 30, "impressive"),
    (31, math.inf, "big respect"),
)


def merit_band(score: float) -> str:
    """The verdict of the solo merit table for a final score, or for a mean score: a mean
    between two bands belongs to the lower one (26.5 has not reached 27, "impressive")."""
    if math.isnan(score):
        raise ArgumentError(f"score {score!r} is not a number")
    for _, high, name in MERIT_BANDS:
        if score < high + 1:
            return name
    return MERIT_BANDS[-1][2]


# --------------------------------------------------------------------------- setup (§3, §8.1)
#: The slots the setup stacks go on (the two top slots, §3.3).
SETUP_SLOTS = (0, 1)
#: Solo: umbrellas dealt to each of the four zones, from 5 of each colour shuffled (§8.1).
SOLO_ZONE_DEAL = 5


def setup_stack_height(num_players: int) -> int:
    """Tiles per setup stack: 2 (4 tiles per player, §3.3), 3 in solo (6 tiles, §8.1)."""
    return 3 if num_players == 1 else 2


def setup_black_faces(num_players: int) -> bool:
    """Whether the setup deals every tile black face up (solo, §8.1) instead of random faces."""
    return num_players == 1
