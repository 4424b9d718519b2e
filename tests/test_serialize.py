"""The state dict (docs/state.md): validation and canonical form,
consistency checks, scores, JSON text and the text renderer."""

from __future__ import annotations

import copy
import functools
import json
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from umbrella_env.core.components import default_components, rotate_cells
from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig
from umbrella_env.core.errors import StateError
from umbrella_env.core.render import render_text
from umbrella_env.core.serialize import (
    STATE_KEYS,
    state_from_json,
    state_to_json,
    validate_state_dict,
    zone_counts,
    zone_string,
)


def tile(t: int, face: str = "white") -> dict[str, Any]:
    return {"tile": t, "face": face}


# --------------------------------------------------------------------------- hand-written states
# A 2-player game at its start (docs/rules.md §3): layouts A and B, one umbrella of each colour
# in each of the 5 zones (letters deliberately unsorted), two stacks of two per player.
TWO_PLAYER: dict[str, Any] = {
    "num_players": 2,
    "plate_level": 1,
    "current_player": 0,
    "phase": "slide",
    "turn": 0,
    "stages": [["BGRY", "RYBG", "GBYR", "YRGB"], ["RBGY", "YGBR", "BRYG", "GYRB"]],
    "zones": {"central": "YRGB", "side": ["BGRY", "GBYR"], "personal": ["RGBY", "BGRY"]},
    "slots": [
        [[tile(0), tile(1, "black")], [tile(2), tile(3)], [], []],
        [[tile(4, "black"), tile(5)], [tile(6), tile(7, "black")], [], []],
    ],
    "plates": [[None] * 10, [None] * 10],
    "supply": 11,
    "reserve_used": 0,
    "end_triggered_by": None,
}

# The solo game at its start (docs/rules.md §8): 20 umbrellas, 5 per zone, 2 stacks of 3 black tiles.
SOLO: dict[str, Any] = {
    "num_players": 1,
    "plate_level": 3,
    "current_player": 0,
    "phase": "slide",
    "turn": 0,
    "stages": [["BGRY", "RYBG", "GBYR", "YRGB"]],
    "zones": {"left": "BGRYB", "right": "GRYBG", "top": "RYBGR", "personal": "YBGRY", "discard": ""},
    "slots": [[[tile(t, "black") for t in (8, 9, 10)], [tile(t, "black") for t in (11, 12, 13)], [], []]],
    "plates": [[None] * 10],
    "supply": 6,
    "reserve_used": 0,
    "end_triggered_by": None,
}


def two_player(**changes: Any) -> dict[str, Any]:
    d = copy.deepcopy(TWO_PLAYER)
    d.update(copy.deepcopy(changes))
    return d


def solo(**changes: Any) -> dict[str, Any]:
    d = copy.deepcopy(SOLO)
    d.update(copy.deepcopy(changes))
    return d


def start_state(num_players: int) -> dict[str, Any]:
    """A valid start position for 2-4 players, built from the default layouts."""
    layouts = default_components().layouts
    return {
        "num_players": num_players,
        "plate_level": 1,
        "current_player": 0,
        "phase": "slide",
        "turn": 0,
        "stages": [list(layouts["ABCD"[p]]) for p in range(num_players)],
        "zones": {"central": "BGRY", "side": ["BGRY"] * num_players, "personal": ["BGRY"] * num_players},
        "slots": [
            [[tile(4 * p), tile(4 * p + 1)], [tile(4 * p + 2), tile(4 * p + 3)], [], []] for p in range(num_players)
        ],
        "plates": [[None] * 10 for _ in range(num_players)],
        "supply": GameConfig(num_players=num_players).initial_supply,
        "reserve_used": 0,
        "end_triggered_by": None,
    }


# --------------------------------------------------------------------------- valid states
def test_two_player_state_is_canonicalised() -> None:
    d = two_player()
    before = copy.deepcopy(d)
    out = validate_state_dict(d)
    assert d == before  # the input is not modified
    assert tuple(out) == STATE_KEYS
    assert out["zones"] == {"central": "BGRY", "side": ["BGRY", "BGRY"], "personal": ["BGRY", "BGRY"]}
    assert out["max_turns"] == DEFAULT_MAX_TURNS
    assert (out["passing"], out["extra_turn"], out["last_slide"]) == (None, False, None)
    assert (out["terminated"], out["truncated"]) == (False, False)
    assert out["scores"] == [-4, -4]  # 4 umbrellas in each personal zone, nothing else
    assert out["slots"] == d["slots"] and out["stages"] == d["stages"]


def test_solo_state_is_canonicalised() -> None:
    out = validate_state_dict(solo())
    assert tuple(out) == STATE_KEYS
    assert out["zones"] == {"left": "BBGRY", "right": "BGGRY", "top": "BGRRY", "personal": "BGRYY", "discard": ""}
    assert out["scores"] == [0]  # no personal-zone penalty in solo (docs/rules.md §8)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_start_states_for_every_player_count(num_players: int) -> None:
    out = validate_state_dict(start_state(num_players))
    assert out["scores"] == [-4] * num_players


def test_canonical_form_is_a_deep_copy_with_plain_types() -> None:
    d = two_player(
        num_players=np.int64(2),
        turn=np.int32(3),
        stages=tuple(tuple(rows) for rows in TWO_PLAYER["stages"]),
        slots=[tuple(tuple(stack) for stack in board) for board in TWO_PLAYER["slots"]],
        plates=[tuple([None] * 10), [None] * 10],
        extra_turn=np.bool_(False),
    )
    out = validate_state_dict(d)
    assert out == validate_state_dict(two_player(turn=3))
    assert type(out["num_players"]) is int and type(out["turn"]) is int and type(out["extra_turn"]) is bool
    assert isinstance(out["stages"][0], list) and isinstance(out["slots"][0], list)
    assert isinstance(out["slots"][0][0], list) and isinstance(out["plates"][0], list)
    # No aliasing: changing the output leaves the input alone and vice versa.
    src = two_player()
    out = validate_state_dict(src)
    out["slots"][0][0][0]["tile"] = 99
    out["plates"][0][0] = "B"
    assert src["slots"][0][0][0]["tile"] == 0 and src["plates"][0][0] is None


def test_validation_is_idempotent() -> None:
    for d in (two_player(), solo(), start_state(4)):
        once = validate_state_dict(d)
        assert validate_state_dict(once) == once


def test_given_scores_are_checked() -> None:
    assert validate_state_dict(two_player(scores=[-4, -4]))["scores"] == [-4, -4]
    with pytest.raises(StateError, match=r"scores: expected \[-4, -4\].*got \[-4, -3\]"):
        validate_state_dict(two_player(scores=[-4, -3]))


def test_rulebook_scoring_example() -> None:
    # docs/rules.md §5: 6 tokens, 1 umbrella in the personal zone, two complete groups worth
    # +3 ({0,5}) and +5 ({1,2,6}) -> 12 + 3 + 5 - 1 = 19.
    plate = ["B", "G", "R", "Y", None, "G", "Y", None, None, None]
    d = two_player(
        plates=[plate, [None] * 10],
        supply=5,
        turn=6,
        zones={"central": "BGRYBGY", "side": ["BGRY", "BGRY"], "personal": ["R", "BGRY"]},
    )
    assert validate_state_dict(d)["scores"] == [19, -4]


def test_empty_personal_zone_scores_plus_two() -> None:
    d = two_player(zones={"central": "BGRY", "side": ["BBGGRRYY", "BGRY"], "personal": ["", "BGRY"]})
    assert validate_state_dict(d)["scores"] == [2, -4]


def test_level_3_adjacency_scoring() -> None:
    plates = [["B", "G", "R", None, None, "R", None, None, None, None], [None] * 10]  # one group of 4
    d = two_player(plate_level=3, plates=plates, supply=7, turn=4)
    assert validate_state_dict(d)["scores"] == [2 * 4 + 8 - 4, -4]


def _solo_finished(tokens: int) -> dict[str, Any]:
    # All 6 tokens placed, or fewer and the four zones empty (both end a solo game, §8.3);
    # one umbrella discarded per turn (§8.2).
    spaces = [0, 5, 1, 2, 6, 3][:tokens]
    plate = [("BGRYBGYBRG"[s] if s in spaces else None) for s in range(10)]
    zones = {"left": "B", "right": "", "top": "GG", "personal": "Y", "discard": "RYBGRRRBYYRBBGGY"}
    if tokens < 6:
        zones = {"left": "", "right": "", "top": "", "personal": "", "discard": "RYBGRRRBYYRBBGGYBGGY"}
    return solo(
        plate_level=1,
        phase="game_over",
        terminated=True,
        turn=len(zones["discard"]),
        plates=[plate],
        supply=6 - tokens,
        slots=[[[tile(8, "black")], [tile(11)], [], []]],
        zones=zones,
    )


def test_solo_scores_count_zone_umbrellas_only_when_all_tokens_are_placed() -> None:
    # docs/rules.md §8: +2 per token, plate bonus, +1 per umbrella in the four zones (not the
    # discard) once all 6 tokens are placed.
    assert validate_state_dict(_solo_finished(6))["scores"] == [12 + 3 + 5 + 4]
    assert validate_state_dict(_solo_finished(5))["scores"] == [10 + 3 + 5]


def test_mid_turn_states() -> None:
    # 2 players, level 4: the receiver (seat 1) covers; the extra-turn power fired.
    cover = two_player(
        plate_level=4,
        phase="cover",
        turn=7,
        extra_turn=True,
        slots=[
            [[tile(1, "black")], [tile(2)], [], []],
            [[tile(4), tile(5, "black")], [tile(6)], [tile(7)], [tile(15)]],
        ],
        passing=tile(3, "black"),
        plates=[["G", "R"] + [None] * 8, [None] * 10],
        supply=9,
    )
    assert validate_state_dict(cover)["passing"] == {"tile": 3, "face": "black"}
    # Solo: validating after a slide from the top that ejected a blue umbrella.
    d = solo(phase="validate", last_slide={"side": "top", "colour": "B"}, stages=[SOLO_FIGURE_STAGE])
    d["zones"] = {"left": "GRYB", "right": "GRYBG", "top": "RYBGR", "personal": "YBGRY", "discard": "B"}
    assert validate_state_dict(d)["last_slide"] == {"side": "top", "colour": "B"}
    # Final round: the supply is empty and a reserve token was used.
    final = two_player(
        plates=[list("BGRYBG") + [None] * 4, list("BGRYBG") + [None] * 4],
        supply=0,
        turn=13,
        reserve_used=1,
        end_triggered_by=0,
        current_player=1,
    )
    assert validate_state_dict(final)["reserve_used"] == 1
    # Fallback: all four of seat 0's zones are empty, every loose umbrella is in seat 1's personal zone.
    fallback = two_player(phase="fallback", zones={"central": "", "side": ["", ""], "personal": ["", "BGRY" * 5]})
    assert validate_state_dict(fallback)["scores"] == [2, -20]


# --------------------------------------------------------------------------- corruptions
Mutation = Callable[[dict[str, Any]], None]


def put(path: str, value: Any) -> Mutation:
    """Set the entry at a dotted path (``"slots.0.1.0.face"``) to ``value``."""

    def mutate(d: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = d
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def drop(key: str) -> Mutation:
    return lambda d: d.pop(key)


def both(*mutations: Mutation) -> Mutation:
    def mutate(d: dict[str, Any]) -> None:
        for m in mutations:
            m(d)

    return mutate


# Seat 0 validated its tile 3 (from the top of slot 1): the tile is in transit.
_IN_TRANSIT = [put("passing", tile(3)), put("slots.0.1", [tile(2)])]
# A solo stage on which the visible figure of slot 0 (tile 10, black: cells 6 7 14 15) is green.
SOLO_FIGURE_STAGE = ["BBRY", "RYGG", "BBYR", "YRGG"]
_SOLO_VALIDATE = [
    put("phase", "validate"),
    put("last_slide", {"side": "top", "colour": "B"}),
    put("stages.0", SOLO_FIGURE_STAGE),
    put("zones.left", "GRYB"),
    put("zones.discard", "B"),
]

# (id, base state, mutation, fragments the message must contain)
CORRUPTIONS: list[tuple[str, Callable[[], dict[str, Any]], Mutation, tuple[str, ...]]] = [
    # shape and types
    ("missing key", two_player, drop("stages"), ("missing key", "'stages'")),
    ("validate with nothing scorable", two_player, put("phase", "validate"), ("phase", "no complete figure")),
    ("fallback with own zones full", two_player, put("phase", "fallback"), ("phase", "all empty")),
    ("unknown key", two_player, put("colour", "B"), ("unknown key", "'colour'")),
    ("num_players bool", two_player, put("num_players", True), ("num_players", "expected an int in 1..4")),
    ("num_players 5", two_player, put("num_players", 5), ("num_players", "1..4", "got 5")),
    ("num_players str", two_player, put("num_players", "2"), ("num_players",)),
    ("plate_level 0", two_player, put("plate_level", 0), ("plate_level", "1..4")),
    ("max_turns 0", two_player, put("max_turns", 0), ("max_turns", "1..2147483647")),
    ("max_turns past int32", two_player, put("max_turns", 2**31), ("max_turns", "1..2147483647")),
    ("max_turns null", two_player, put("max_turns", None), ("max_turns",)),
    ("current_player out of range", two_player, put("current_player", 2), ("current_player", "0..1")),
    ("current_player negative", two_player, put("current_player", -1), ("current_player",)),
    ("current_player bool", two_player, put("current_player", False), ("current_player",)),
    ("solo current_player 1", solo, put("current_player", 1), ("current_player", "0..0")),
    ("unknown phase", two_player, put("phase", "sliding"), ("phase", "'slide'", "'sliding'")),
    ("turn negative", two_player, put("turn", -1), ("turn", ">= 0")),
    ("turn float", two_player, put("turn", 1.0), ("turn",)),
    ("one stage for two players", two_player, put("stages", [TWO_PLAYER["stages"][0]]), ("stages", "2 entries")),
    ("stage of three rows", two_player, put("stages.0", ["BGRY", "RYBG", "GBYR"]), ("stages[0]", "4 entries")),
    ("stage as one string", two_player, put("stages.0", "BGRYRYBGGBYRYRGB"), ("stages[0]", "a list of 4")),
    ("row of three", two_player, put("stages.0.1", "RYB"), ("stages[0][1]", "4 colour letters")),
    ("row with unknown letter", two_player, put("stages.1.2", "BRXG"), ("stages[1][2]", "'BRXG'")),
    ("row lower case", two_player, put("stages.1.0", "rbgy"), ("stages[1][0]",)),
    ("zones not a dict", two_player, put("zones", ["BGRY"]), ("zones", "dict")),
    (
        "zones missing side",
        two_player,
        put("zones", {"central": "BGRY", "personal": ["BGRY", "BGRY"]}),
        ("zones", "'side'"),
    ),
    ("solo zones at 2 players", two_player, put("zones", SOLO["zones"]), ("zones",)),
    ("side zones count", two_player, put("zones.side", ["BGRY"] * 3), ("zones.side", "2 entries")),
    ("side zone bad letter", two_player, put("zones.side.1", "BXQ"), ("zones.side[1]", "colour letters")),
    ("personal zone as list", two_player, put("zones.personal.0", ["B"]), ("zones.personal[0]",)),
    ("central zone int", two_player, put("zones.central", 4), ("zones.central",)),
    (
        "solo zone missing",
        solo,
        put("zones", {k: v for k, v in SOLO["zones"].items() if k != "discard"}),
        ("zones", "'discard'"),
    ),
    ("solo zone extra", solo, put("zones.central", ""), ("zones", "unknown key", "'central'")),
    ("solo zone bad letter", solo, put("zones.top", "RYBGW"), ("zones.top",)),
    ("slots count", two_player, put("slots", TWO_PLAYER["slots"][:1]), ("slots", "2 entries")),
    ("three slots", two_player, put("slots.0", [[tile(0)], [tile(1)], [tile(2), tile(3)]]), ("slots[0]", "4 entries")),
    ("stack not a list", two_player, put("slots.1.2", tile(9)), ("slots[1][2]", "a list")),
    ("bad face", two_player, put("slots.0.1.1.face", "grey"), ("slots[0][1][1].face", "'white'", "'grey'")),
    ("tile 24", two_player, put("slots.1.0.0.tile", 24), ("slots[1][0][0].tile", "0..23")),
    ("tile bool", two_player, put("slots.1.0.0.tile", True), ("slots[1][0][0].tile",)),
    ("tile entry extra key", two_player, put("slots.0.0.0.hidden", True), ("slots[0][0][0]", "unknown key")),
    ("tile entry missing face", two_player, put("slots.0.0.0", {"tile": 0}), ("slots[0][0][0]", "'face'")),
    ("plate of 9", two_player, put("plates.0", [None] * 9), ("plates[0]", "10 entries")),
    ("plate letter W", two_player, put("plates.1.3", "W"), ("plates[1][3]", "colour letter")),
    ("plate letter lower", two_player, put("plates.0.0", "b"), ("plates[0][0]",)),
    ("plate token true", two_player, put("plates.0.0", True), ("plates[0][0]",)),
    ("supply negative", two_player, put("supply", -1), ("supply", ">= 0")),
    ("reserve_used above reserve", two_player, put("reserve_used", 29), ("reserve_used", "0..28")),
    ("end_triggered_by out of range", two_player, put("end_triggered_by", 2), ("end_triggered_by", "0..1")),
    ("passing not a dict", two_player, put("passing", 3), ("passing", "dict")),
    (
        "passing bad face",
        two_player,
        both(put("phase", "give_face"), put("passing", {"tile": 9, "face": "red"}), put("slots.0.0", [tile(0)])),
        ("passing.face",),
    ),
    ("extra_turn int", two_player, put("extra_turn", 1), ("extra_turn", "true or false")),
    ("terminated str", two_player, put("terminated", "yes"), ("terminated",)),
    ("truncated null", two_player, put("truncated", None), ("truncated",)),
    (
        "last_slide bad side",
        solo,
        both(*_SOLO_VALIDATE[:1], put("last_slide", {"side": "up", "colour": "B"})),
        ("last_slide.side", "'top'"),
    ),
    (
        "last_slide bad colour",
        solo,
        both(*_SOLO_VALIDATE[:1], put("last_slide", {"side": "top", "colour": "W"})),
        ("last_slide.colour",),
    ),
    ("scores wrong length", two_player, put("scores", [-4]), ("scores", "2 entries")),
    ("scores wrong value", two_player, put("scores", [0, 0]), ("scores", "[-4, -4]", "[0, 0]")),
    ("scores bool", two_player, put("scores", [True, -4]), ("scores[0]",)),
    # consistency: umbrellas, tiles, tokens
    ("umbrella moved between colours", two_player, put("stages.0.0", "BBRY"), ("colour B", "expected 6P+1 = 13")),
    ("umbrella missing", two_player, put("zones.central", "BGR"), ("colour Y", "12")),
    ("umbrella extra", two_player, put("zones.personal.1", "BGRYY"), ("colour Y", "14")),
    ("solo umbrella missing", solo, put("zones.discard", "B"), ("colour B", "9 in solo")),
    (
        "duplicate tile",
        two_player,
        put("slots.1.0.0.tile", 0),
        ("slots[1][0][0].tile", "tile 0", "slots[0][0][0].tile"),
    ),
    (
        "duplicate tile in passing",
        two_player,
        both(put("phase", "give_face"), put("passing", tile(3, "black")), put("slots.0.0", [tile(0)])),
        ("passing.tile", "tile 3", "slots[0][1][1].tile"),
    ),
    ("tile lost", two_player, put("slots.0.1", [tile(2)]), ("slots", "7 tiles", "expected 4 per player = 8")),
    ("tile added", two_player, put("slots.0.2", [tile(20)]), ("slots", "9 tiles")),
    ("solo seven tiles", solo, put("slots.0.2", [tile(0)]), ("slots", "7 tiles", "at most 6")),
    ("supply too high", two_player, put("supply", 12), ("supply", "expected the initial supply 11")),
    ("token without supply change", two_player, put("plates.0.0", "B"), ("supply", "= 12")),
    ("solo supply", solo, put("supply", 5), ("supply", "initial supply 6")),
    (
        "reserve used with supply left",
        two_player,
        both(put("reserve_used", 1), put("supply", 12)),
        ("reserve_used", "supply 12"),
    ),
    (
        "reserve used before the end",
        two_player,
        both(
            put("reserve_used", 1),
            put("supply", 0),
            put("plates.0", list("BGRYBGYBRG")),
            put("plates.1", ["B", "G"] + [None] * 8),
            put("turn", 12),
        ),
        ("reserve_used", "end_triggered_by None"),
    ),
    (
        "reserve used in solo",
        solo,
        both(put("reserve_used", 1), put("supply", 1), put("plates.0", list("BGBRYR") + [None] * 4)),
        ("reserve_used", "solo"),
    ),
    # consistency: phase
    ("passing in slide", two_player, both(*_IN_TRANSIT), ("passing", "null in phase 'slide'")),
    (
        "no passing in cover",
        two_player,
        both(put("phase", "cover"), put("slots.1", [[tile(k)] for k in (4, 5, 6, 7)])),
        ("passing", "expected the tile in transit", "'cover'"),
    ),
    (
        "cover with an empty receiver slot",
        two_player,
        both(put("phase", "cover"), *_IN_TRANSIT),
        ("slots[1]", "cover", "[2, 3]"),
    ),
    (
        "give_face at 3 players",
        lambda: start_state(3),
        both(put("phase", "give_face"), *_IN_TRANSIT),
        ("phase", "2 players only"),
    ),
    ("fallback in solo", solo, put("phase", "fallback"), ("phase", "solo")),
    ("swap at level 1", two_player, both(put("phase", "swap_stage"), *_IN_TRANSIT), ("phase", "level 4")),
    ("game_over without end", two_player, put("phase", "game_over"), ("phase", "terminated or truncated")),
    ("terminated mid-turn", two_player, put("terminated", True), ("phase", "'game_over'", "'slide'")),
    (
        "terminated and truncated",
        two_player,
        both(
            put("phase", "game_over"), put("terminated", True), put("truncated", True), put("turn", DEFAULT_MAX_TURNS)
        ),
        ("truncated", "both"),
    ),
    (
        "truncated early",
        two_player,
        both(put("phase", "game_over"), put("truncated", True), put("turn", 5)),
        ("truncated", "turn == max_turns"),
    ),
    (
        "turn beyond the limit",
        two_player,
        both(put("max_turns", 10), put("turn", 11)),
        ("turn", "at most max_turns = 10"),
    ),
    ("turn limit reached in play", two_player, both(put("max_turns", 10), put("turn", 10)), ("turn", "limit 10")),
    ("extra turn below level 4", two_player, put("extra_turn", True), ("extra_turn", "level 4")),
    ("extra turn in solo", solo, both(put("extra_turn", True), put("plate_level", 4)), ("extra_turn",)),
    ("trigger seat plays on", two_player, put("end_triggered_by", 0), ("current_player", "seat 0 triggered the end")),
    ("end trigger in solo", solo, put("end_triggered_by", 0), ("end_triggered_by", "null in solo")),
    (
        "last_slide at 2 players",
        two_player,
        put("last_slide", {"side": "top", "colour": "B"}),
        ("last_slide", "solo only"),
    ),
    (
        "solo last_slide kept into the next turn",
        solo,
        put("last_slide", {"side": "top", "colour": "B"}),
        ("last_slide", "'slide'"),
    ),
    (
        "solo validate without last_slide",
        solo,
        both(*_SOLO_VALIDATE, put("last_slide", None)),
        ("last_slide", "'validate'"),
    ),
    # top level
    ("state not a dict", lambda: [], lambda d: None, ("state", "dict")),
]


@pytest.mark.parametrize(("make", "mutate", "fragments"), [c[1:] for c in CORRUPTIONS], ids=[c[0] for c in CORRUPTIONS])
def test_corrupt_state_raises_state_error_naming_the_field(
    make: Callable[[], Any], mutate: Mutation, fragments: tuple[str, ...]
) -> None:
    d = make()
    mutate(d)
    with pytest.raises(StateError) as info:
        validate_state_dict(d)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def test_corruption_bases_are_valid() -> None:
    # Each corruption above must be the only thing wrong: the helpers it combines are valid.
    for name, make, _mutate, _ in CORRUPTIONS:
        if name == "state not a dict":
            continue
        validate_state_dict(make())
    d = solo()
    both(*_SOLO_VALIDATE)(d)
    validate_state_dict(d)


def test_state_error_is_a_value_error() -> None:
    assert issubclass(StateError, ValueError)


# --------------------------------------------------------------------------- zone strings
def test_zone_string_and_counts() -> None:
    assert zone_string([2, 0, 1, 3]) == "BBRYYY"
    assert zone_string([0, 0, 0, 0]) == ""
    assert zone_string(np.array([1, 1, 0, 0], dtype=np.int8)) == "BG"
    assert zone_counts("YRBB") == [2, 0, 1, 1]
    assert zone_counts("") == [0, 0, 0, 0]


@given(st.lists(st.integers(0, 12), min_size=4, max_size=4))
def test_zone_string_counts_round_trip(counts: list[int]) -> None:
    s = zone_string(counts)
    assert zone_counts(s) == counts
    assert zone_string(zone_counts("".join(reversed(s)))) == s


@pytest.mark.parametrize("counts", [[1, 2, 3], [1, 2, 3, 4, 5], [1, -1, 0, 0], [1.0, 0, 0, 0], [True, 0, 0, 0], "BGRY"])
def test_zone_string_rejects_bad_counts(counts: Any) -> None:
    with pytest.raises(StateError, match="zone counts"):
        zone_string(counts)


@pytest.mark.parametrize("text", ["BX", "bgry", "B G", 3, None])
def test_zone_counts_rejects_bad_strings(text: Any) -> None:
    with pytest.raises(StateError, match="zone"):
        zone_counts(text)


# --------------------------------------------------------------------------- JSON
def test_json_round_trip() -> None:
    for d in (two_player(), solo(), start_state(3), _solo_finished(6)):
        text = state_to_json(d)
        assert json.loads(text) == validate_state_dict(d)
        assert state_from_json(text) == validate_state_dict(d)
        assert state_from_json(text.encode()) == validate_state_dict(d)
    assert "\n" in state_to_json(two_player(), indent=2)


def test_state_to_json_validates() -> None:
    with pytest.raises(StateError, match="supply"):
        state_to_json(two_player(supply=3))


def test_state_from_json_rejects_bad_text() -> None:
    with pytest.raises(StateError, match="not valid JSON"):
        state_from_json("{'num_players': 2}")
    with pytest.raises(StateError, match="not valid JSON"):
        state_from_json(b"\xff\xfe")
    with pytest.raises(StateError, match="state: expected a dict"):
        state_from_json("[1, 2]")
    with pytest.raises(StateError, match="zones.side"):
        bad = two_player()
        bad["zones"]["side"] = ["BGRY"]
        state_from_json(json.dumps(bad))


# --------------------------------------------------------------------------- reference engine
@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_reference_engine_states_are_canonical(num_players: int) -> None:
    """Every state the reference engine writes is already canonical and scores alike."""
    from umbrella_env.core import reference  # the package's own module: an import failure fails the test

    rng = random.Random(num_players)
    game = reference.ReferenceGame.new(GameConfig(num_players=num_players, plate_level=4, max_turns=60), seed=7)
    for _ in range(400):
        d = game.to_dict()
        assert validate_state_dict(d) == d
        if game.done:
            break
        game.step(rng.choice(game.legal_actions()))


# --------------------------------------------------------------------------- render
def grid(cells: tuple[int, ...]) -> list[str]:
    return ["".join("X" if r * 4 + c in cells else "." for c in range(4)) for r in range(4)]


def has_block(text: str, rows: list[str]) -> bool:
    """Whether ``rows`` appear on consecutive lines of ``text``, starting at the same column."""
    lines = text.splitlines()
    for i in range(len(lines) - len(rows) + 1):
        start = lines[i].find(rows[0])
        while start >= 0:
            if all(lines[i + j][start : start + len(row)] == row for j, row in enumerate(rows)):
                return True
            start = lines[i].find(rows[0], start + 1)
    return False


def test_render_two_player_state() -> None:
    d = two_player(
        plate_level=2,
        plates=[["R", None, "Y"] + [None] * 7, [None] * 10],
        supply=9,
        turn=2,
        zones={"central": "YRGB", "side": ["BBGGRRYY", "G"], "personal": ["RGBY", "BRY"]},
    )
    text = render_text(d)
    assert text.isascii()
    assert max(len(line) for line in text.splitlines()) <= 100
    for stage in d["stages"]:
        assert has_block(text, ["| " + " ".join(row) + " |" for row in stage])
    # Zones, sorted, with their counts; seat 0's left is side 0, its right side 1; seat 1 the reverse.
    for piece in (
        "central BGRY (4)",
        "BBGGRRYY (8)",
        "G (1)",
        "personal BGRY (4)",
        "personal BRY (3)",
        "left: side 0",
        "right: side 1",
        "left: side 1",
        "right: side 0",
    ):
        assert piece in text, piece
    # Plate requirements (level 2) with the tokens on them.
    for piece in ("plate (level 2)", "R:R", "B:.", "G/Y:Y", "B/R:."):
        assert piece in text, piece
    # Slots: headers, visible tile and face, heights with the hidden count.
    for piece in (
        "slot 0 (rot 0)",
        "slot 3 (rot 270)",
        "tile 1 black",
        "tile 5 white",
        "height 2, 1 hidden",
        "height 0",
    ):
        assert piece in text, piece
    for piece in (
        "phase: slide",
        "to act: 0",
        "supply: 9",
        "reserve used: 0",
        "turns played: 2 / 3000",
        "end triggered by: -",
        "tile in transit: -",
        "score 0 ===",
        "score -3 ===",
        "scores: seat 0 0, seat 1 -3",
    ):
        assert piece in text, piece


def test_render_four_player_seating() -> None:
    # docs/rules.md §2: seat i's left is side zone i, its right side zone i-1 (mod P).
    text = render_text(start_state(4))
    blocks = text.split("=== seat ")[1:]
    assert len(blocks) == 4
    for i, block in enumerate(blocks):
        assert block.startswith(str(i))
        assert f"left: side {i}" in block and f"right: side {(i - 1) % 4}" in block
        assert "| " + " ".join(start_state(4)["stages"][i][0]) + " |" in block


def test_render_cover_marks_the_receiver_and_the_tile_in_transit() -> None:
    d = two_player(
        plate_level=4,
        phase="cover",
        slots=[
            [[tile(1, "black")], [tile(2)], [], []],
            [[tile(4), tile(5, "black")], [tile(6)], [tile(7)], [tile(15)]],
        ],
        passing=tile(3, "black"),
    )
    text = render_text(d, seat=1)
    assert "to act: 1" in text and "current player: 0" in text
    assert "tile in transit: tile 3 black" in text
    seat1 = text[text.index("=== seat 1") :].splitlines()[0]
    assert "[you]" in seat1 and "[to act: cover]" in seat1
    assert "powers extra_turn 0-1, swap_stage 3-4, swap_zone 5-6" in text
    assert "W1:." in text and "W3:." in text


def test_render_solo_state() -> None:
    d = _solo_finished(6)
    text = render_text(d)
    assert text.isascii()
    assert "solo" in text and "board" in text
    for piece in (
        "top: GG (2)",
        "left:",
        "B (1)",
        "right:",
        "- (0)",
        "personal Y (1)",
        "discard: BBBBGGGRRRRRYYYY (16)",
        "phase: game_over",
        "status: terminated",
        "to act: -",
        "last slide: -",
        "scores: board 24",
        "plate (level 1)",
        "groups {0,5} +3, {1,2,6} +5, {3,4,7,8,9} +8",
    ):
        assert piece in text, piece
    assert has_block(text, ["| B G R Y |", "| R Y B G |", "| G B Y R |", "| Y R G B |"])
    mid = solo(phase="validate", last_slide={"side": "left", "colour": "B"}, stages=[SOLO_FIGURE_STAGE])
    mid["zones"] = {"left": "GRYB", "right": "GRYBG", "top": "RYBGR", "personal": "YBGRY", "discard": "B"}
    text = render_text(mid)
    assert "last slide: from left, ejected B" in text
    assert "height 3, 2 hidden" in text


@pytest.mark.parametrize("slot", [0, 1, 2, 3])
def test_render_draws_the_visible_tile_rotated_by_its_slot(slot: int) -> None:
    # Tile 0 white "..../..../.X../.XXX" on top of a stack of 4 in `slot`.
    expected = [
        ["....", "....", ".X..", ".XXX"],
        ["....", "XX..", "X...", "X..."],  # a quarter turn clockwise
        ["XXX.", "..X.", "....", "...."],
        ["...X", "...X", "..XX", "...."],
    ][slot]
    assert expected == grid(rotate_cells(default_components().face_cells(0, 0), slot))
    board = [[], [], [], []]
    board[slot] = [tile(1), tile(2), tile(3), tile(0)]
    d = two_player(slots=[board, TWO_PLAYER["slots"][1]])
    text = render_text(d)
    assert has_block(text, expected)
    assert "height 4, 3 hidden" in text and "tile 0 white" in text
    assert not any(
        has_block(text, other)
        for k, other in enumerate(
            [
                ["....", "....", ".X..", ".XXX"],
                ["....", "XX..", "X...", "X..."],
                ["XXX.", "..X.", "....", "...."],
                ["...X", "...X", "..XX", "...."],
            ]
        )
        if k != slot
    )


def test_render_marks_a_complete_figure() -> None:
    # Layout A with the top-left 2x2 made blue (three swaps inside the stage keep the counts).
    stage0 = ["BBRY", "BBGG", "GRYR", "YRGY"]
    d = two_player(
        stages=[stage0, TWO_PLAYER["stages"][1]],
        slots=[[[tile(0), tile(1)], [tile(2), tile(3)], [], []], TWO_PLAYER["slots"][1]],
    )
    text = render_text(d)  # tile 1 white is the 2x2 square "XX../XX../..../...."
    assert "complete: B" in text


def test_render_validates_and_checks_seat() -> None:
    with pytest.raises(StateError, match="supply"):
        render_text(two_player(supply=1))
    with pytest.raises(ValueError, match="seat"):
        render_text(two_player(), seat=2)
    assert render_text(two_player()) == render_text(validate_state_dict(two_player()))


def test_slide_phase_with_empty_own_zones_is_refused() -> None:
    from umbrella_env.tools.differential import stress_start

    d = stress_start(two_player())
    assert validate_state_dict(d)["phase"] == "fallback"
    d["phase"] = "slide"
    with pytest.raises(StateError, match="phase: seat 0's four zones are empty"):
        validate_state_dict(d)


# --------------------------------------------------------------------------- every reachable state validates
@functools.cache
def _playout_dicts(num_players: int, level: int, seed: int, games: int = 12, steps: int = 150) -> list[dict[str, Any]]:
    """The state dicts of seeded playouts on the batched engine (half of the games moved
    close to their end by ``late_start``), every game at every step until it is over."""
    from umbrella_env.core import batch_io
    from umbrella_env.core import engine as E
    from umbrella_env.tools.differential import late_start, policy_actions

    rng = np.random.default_rng(seed)
    state = E.init(GameConfig(num_players=num_players, plate_level=level, max_turns=60), games, seed=seed)
    for b in range(0, games, 2):
        batch_io.load_dict(state, b, late_start(batch_io.to_dict(state, b), rng))
    out = []
    for _ in range(steps):
        out += [batch_io.to_dict(state, b) for b in range(games) if not state.done[b]]
        live = ~state.done
        if not live.any():
            break
        _step_live(state, policy_actions(state, rng, greedy=0.9), live)
    out += [batch_io.to_dict(state, b) for b in range(games) if state.done[b]]  # each finished game once
    return out


def _step_live(state: Any, acts: np.ndarray, live: np.ndarray) -> None:
    from umbrella_env.core import engine as E

    idx = np.flatnonzero(live)
    sub = E.take(state, idx)
    E.step_unchecked(sub, acts[idx])
    E.put(state, idx, sub)


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_every_reachable_state_validates_and_round_trips(num_players: int, level: int) -> None:
    """Seeded random playouts: every state the engines reach is valid, canonical, and
    reads back unchanged into all three engines (validate -> from_dict -> to_dict)."""
    from umbrella_env.core import batch_io
    from umbrella_env.core.reference import ReferenceGame
    from umbrella_env.core.single import SingleGame

    seen = set()
    for d in _playout_dicts(num_players, level, seed=10 * num_players + level, games=8, steps=120):
        assert validate_state_dict(d) == d
        assert SingleGame.from_dict(d).to_dict() == d
        assert ReferenceGame.from_dict(d).to_dict() == d
        assert batch_io.to_dict(batch_io.from_dict(d), 0) == d
        seen.add(d["phase"])
    assert "validate" in seen and "game_over" in seen


# --------------------------------------------------------------------------- rules a dict can break (docs/state.md)
def _reached(num_players: int, level: int, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first state of the seeded playouts that satisfies ``pred`` (a legal state)."""
    for seed in range(20):
        for d in _playout_dicts(num_players, level, seed, games=16, steps=200):
            if pred(d):
                return copy.deepcopy(d)
    raise AssertionError("no such state in the seeded playouts")


def _swap(phase: str) -> Callable[[], dict[str, Any]]:
    return lambda: _reached(2, 4, lambda d: d["phase"] == phase)


def _final_round() -> dict[str, Any]:
    return _reached(3, 1, lambda d: d["end_triggered_by"] is not None and d["phase"] == "slide")


def _terminated(num_players: int) -> Callable[[], dict[str, Any]]:
    return lambda: _reached(num_players, 1, lambda d: d["terminated"])


def _mid_turn_empty_board() -> dict[str, Any]:
    return two_player(
        phase="give_face",
        turn=3,
        passing=tile(1, "black"),
        slots=[
            [[], [], [], []],
            [[tile(4, "black"), tile(5)], [tile(6), tile(7, "black")], [tile(0), tile(3)], [tile(2)]],
        ],
        plates=[["B"] + [None] * 9, [None] * 10],
        supply=10,
    )


def _lift_validated_tile(d: dict[str, Any]) -> None:
    """Take the validated tile of a swap phase off its slot (as the engines once did)."""
    for stack in d["slots"][d["current_player"]]:
        if stack and stack[-1] == d["passing"]:
            stack.pop()
            return


def _break_validated_figure(d: dict[str, Any]) -> None:
    """Exchange two stage cells (one in the validated figure) of different colours and
    keep everything else: the validated figure is no longer complete."""
    from umbrella_env.core.serialize import validated_slot

    seat, k = d["current_player"], validated_slot(d)
    assert k is not None
    cells = rotate_cells(
        default_components().face_cells(d["passing"]["tile"], ["white", "black"].index(d["passing"]["face"])), k
    )
    flat = list("".join(d["stages"][seat]))
    other = next(c for c in range(16) if flat[c] != flat[cells[0]])
    flat[cells[0]], flat[other] = flat[other], flat[cells[0]]
    d["stages"][seat] = ["".join(flat[r * 4 : r * 4 + 4]) for r in range(4)]


def _empty_plates_to_supply(d: dict[str, Any]) -> None:
    placed = sum(v is not None for p in d["plates"] for v in p)
    d["supply"] += placed - d["reserve_used"]
    d["reserve_used"] = 0
    d["plates"] = [[None] * 10 for _ in d["plates"]]


# (id, legal base state, mutation breaking one rule, fragments the message must contain)
RULE_BREAKS: list[tuple[str, Callable[[], dict[str, Any]], Mutation, tuple[str, ...]]] = [
    (
        "token on a space refusing its colour",
        two_player,
        both(put("plates.0.1", "B"), put("supply", 10), put("turn", 1)),
        ("plates[0][1]", "(G) accepts", "'B'"),
    ),
    (
        "turn lower than the tokens allow",
        two_player,
        both(put("plates.0.0", "B"), put("plates.1.1", "G"), put("supply", 9), put("turn", 1)),
        ("turn", "at least 2", "got 1"),
    ),
    (
        "turn lower than the tokens allow mid-turn",
        _mid_turn_empty_board,
        both(put("plates.1.0", "B"), put("supply", 9), put("turn", 0)),
        ("turn", "at least 1", "this turn's included"),
    ),
    (
        "reserve beyond the final round",
        _final_round,
        lambda d: d.update(reserve_used=3, supply=0, plates=[list("BGRYBGYBRG")] * 2 + [[None] * 10], turn=40),
        ("reserve_used", "at most 2"),
    ),
    (
        "terminated without an end",
        two_player,
        both(put("phase", "game_over"), put("terminated", True), put("turn", 5)),
        ("terminated", "not triggered"),
    ),
    (
        "terminated before the final round is over",
        _terminated(3),
        lambda d: d.update(current_player=(d["current_player"] + 1) % 3),
        ("terminated", "final round is over"),
    ),
    (
        "truncated although the final round is over",
        _terminated(2),
        lambda d: d.update(terminated=False, truncated=True, turn=d["max_turns"]),
        ("truncated", "terminated, not truncated"),
    ),
    (
        "end triggered without an end condition",
        _final_round,
        _empty_plates_to_supply,
        ("end_triggered_by", "no end condition"),
    ),
    (
        "no tiles while the end is not triggered",
        two_player,
        both(
            put("slots.0", [[], [], [], []]), put("slots.1.2", [tile(0), tile(1)]), put("slots.1.3", [tile(2), tile(3)])
        ),
        ("end_triggered_by", "seat 0 has no figure tile", "slots[0]"),
    ),
    (
        "empty supply while the end is not triggered",
        _final_round,
        put("end_triggered_by", None),
        ("end_triggered_by", "got null"),
    ),
    (
        "full plate while the end is not triggered",
        two_player,
        both(put("plates.1", list("BGRYBGYBRG")), put("supply", 1), put("turn", 10)),
        ("end_triggered_by", "seat 1's plate is full"),
    ),
    (
        "swap power without its pair of spaces",
        _swap("swap_stage"),
        lambda d: d["plates"][d["current_player"]].__setitem__(3, None) or d.update(supply=d["supply"] + 1),
        ("phase", "swap_stage power", "spaces 3 and 4"),
    ),
    (
        "validated tile already off its slot",
        _swap("swap_zone"),
        _lift_validated_tile,
        ("passing", "still on top of its slot"),
    ),
    (
        "validated figure no longer complete",
        _swap("swap_stage"),
        _break_validated_figure,
        ("passing", "must still be complete"),
    ),
    (
        "extra turn outside a pass",
        two_player,
        both(
            put("plate_level", 4),
            put("extra_turn", True),
            put("plates.0.0", "G"),
            put("plates.0.1", "R"),
            put("supply", 9),
            put("turn", 2),
        ),
        ("extra_turn", "phase 'slide'"),
    ),
    (
        "extra turn without its pair of spaces",
        _mid_turn_empty_board,
        both(put("plate_level", 4), put("extra_turn", True), put("plates.0.0", "G")),
        ("extra_turn", "power fires"),
    ),
    (
        "solo terminated without an end",
        solo,
        both(put("phase", "game_over"), put("terminated", True)),
        ("terminated", "no solo end condition"),
    ),
    (
        "solo truncated although it ended",
        lambda: _solo_finished(6),
        both(put("terminated", False), put("truncated", True), put("max_turns", 16)),
        ("truncated", "last token"),
    ),
    (
        "solo play goes on after the end",
        lambda: _solo_finished(5),
        both(put("terminated", False), put("phase", "slide")),
        ("phase", "four zones are empty"),
    ),
    (
        "solo play goes on after the last token",
        lambda: _solo_finished(6),
        both(put("terminated", False), put("phase", "slide")),
        ("phase", "'game_over'", "last token"),
    ),
    ("solo turn count and discard disagree", solo, put("turn", 1), ("turn", "1 umbrella(s) in zones.discard, got 0")),
]


@pytest.mark.parametrize(("make", "mutate", "fragments"), [c[1:] for c in RULE_BREAKS], ids=[c[0] for c in RULE_BREAKS])
def test_a_state_breaking_a_rule_is_refused_naming_the_field(
    make: Callable[[], Any], mutate: Mutation, fragments: tuple[str, ...]
) -> None:
    d = make()
    validate_state_dict(d)  # the base is legal
    mutate(d)
    d.pop("scores", None)
    with pytest.raises(StateError) as info:
        validate_state_dict(d)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


@pytest.mark.parametrize("num_players", [1, 2])
@pytest.mark.parametrize("phase", ["swap_stage", "swap_zone"])
def test_swap_decision_state_round_trips(num_players: int, phase: str) -> None:
    """Decision 2: during a swap decision the validated tile (``passing``) still lies on top
    of its slot; the dict says so and reads back unchanged through JSON and all three
    engines, whose observations agree."""
    from umbrella_env.core import batch_io
    from umbrella_env.core import engine as E
    from umbrella_env.core.observation import observe
    from umbrella_env.core.reference import ReferenceGame
    from umbrella_env.core.serialize import validated_slot
    from umbrella_env.core.single import SingleGame

    d = _reached(num_players, 4, lambda d: d["phase"] == phase)
    k = validated_slot(d)
    assert k is not None and d["slots"][d["current_player"]][k][-1] == d["passing"]
    assert state_from_json(state_to_json(d)) == d
    single = SingleGame.from_dict(d)
    assert single.to_dict() == d and single.validated_slot() == k
    assert ReferenceGame.from_dict(d).to_dict() == d
    batch = batch_io.from_dict(d)
    assert batch_io.to_dict(batch, 0) == d
    seats = np.arange(num_players)
    np.testing.assert_array_equal(
        observe(E.take(batch, np.zeros(num_players, dtype=np.intp)), seats=seats),
        np.array([single.observe(int(s)) for s in seats]),
    )


def test_a_finished_solo_game_has_no_last_slide() -> None:
    """docs/state.md: ``last_slide`` lives from the slide to the end of the turn, and a game
    ends at the end of a turn, so a finished solo game has none; a dict that says otherwise
    is refused (the engines never write one)."""
    from umbrella_env.core.single import SingleGame

    game = SingleGame.new(GameConfig(num_players=1), 3)
    rng = np.random.default_rng(3)
    while not game.done:
        game.step(int(rng.choice(game.legal_actions())))
    d = game.to_dict()
    assert d["phase"] == "game_over" and d["last_slide"] is None
    d["last_slide"] = {"side": "top", "colour": "B"}
    with pytest.raises(StateError, match="last_slide: expected null in phase 'game_over'"):
        validate_state_dict(d)
