"""Component data (docs/rules.md §1, §6, §7): the default set, every validator invariant, file
loading (JSON and TOML), rotation helpers and plate bonuses."""

from __future__ import annotations

import copy
import json
import pickle
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from umbrella_env.core import batch_io, single, tables
from umbrella_env.core import engine as E
from umbrella_env.core.components import (
    COLOURS,
    LEVELS,
    NUM_TILES,
    ComponentSet,
    PlateSpec,
    components_from_dict,
    components_of,
    connected_group_sizes,
    default_components,
    load_components,
    parse_face,
    parse_space,
    plate_neighbours,
    rotate_cell,
    rotate_cells,
    validate_components,
)
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import ComponentError, ConfigError
from umbrella_env.core.reference import ReferenceGame, player_score, solo_score
from umbrella_env.core.single import SingleGame

DEFAULT = default_components()


def default_dict() -> dict[str, Any]:
    return copy.deepcopy(DEFAULT.to_dict())


def face_string(cells: tuple[int, ...]) -> str:
    return "/".join("".join("X" if r * 4 + c in cells else "." for c in range(4)) for r in range(4))


def occupied(*spaces: int) -> list[bool]:
    return [s in spaces for s in range(10)]


# --------------------------------------------------------------------------- default set
def test_default_set_validates() -> None:
    validate_components(DEFAULT)
    assert sorted(DEFAULT.layouts) == ["A", "B", "C", "D"]
    assert len(DEFAULT.tiles) == NUM_TILES
    assert set(DEFAULT.plates) == set(LEVELS)
    assert dict(DEFAULT.supply) == {2: 11, 3: 17, 4: 22}
    assert (DEFAULT.reserve, DEFAULT.solo_tokens) == (28, 6)


def test_default_set_matches_rules_tables() -> None:
    # docs/rules.md §6 / §7, spot checks against the printed tables.
    assert DEFAULT.layouts["A"] == ("BGRY", "RYBG", "GBYR", "YRGB")
    assert DEFAULT.tiles[0] == ("..../..../.X../.XXX", "X.X./...X/.X../....")
    assert DEFAULT.tiles[23] == ("..X./.XX./.X../....", ".X.X/X.../..../..X.")
    assert DEFAULT.plates[2].spaces[2] == "G/Y"
    assert DEFAULT.plates[4].powers == {"extra_turn": (0, 1), "swap_stage": (3, 4), "swap_zone": (5, 6)}


def test_the_default_set_is_the_whole_catalogue_of_docs_rules_md() -> None:
    """docs/rules.md §6.1, §6.2, §7.2 and §7.4, every entry: the spot checks above let six
    single-cell changes of tile faces (tiles 2, 4, 5, 9) and changes of layouts B and D pass
    every rule test (rules audit, 2026-12-07)."""
    import re

    text = (Path(__file__).resolve().parents[1] / "docs" / "rules.md").read_text(encoding="utf-8")
    tiles = re.findall(r"^\|\s*(\d+) \| `([.X/]+)` \| `([.X/]+)` \|$", text, re.M)
    assert [(int(t), white, black) for t, white, black in tiles] == [
        (t, *DEFAULT.tiles[t]) for t in range(NUM_TILES)
    ]  # fmt: skip
    layouts = re.findall(r"^\| ([A-Z]) \| ([BGRY]{4}) \| ([BGRY]{4}) \| ([BGRY]{4}) \| ([BGRY]{4}) \|$", text, re.M)
    assert {name: tuple(rows) for name, *rows in layouts} == dict(DEFAULT.layouts)
    plates = re.findall(r"^\| ([1-4]) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", text, re.M)
    assert [int(level) for level, *_ in plates] == list(LEVELS)
    groups = tuple(
        (tuple(int(x) for x in g.split(", ")), int(v)) for g, v in re.findall(r"\{([\d, ]+)\} \+(\d+)", text)
    )
    for level, top, bottom, bonus in plates:
        plate = DEFAULT.plates[int(level)]
        assert plate.spaces == tuple(top.split() + bottom.split())
        if "fixed groups" in bonus or "same fixed groups" in bonus:
            assert plate.groups == groups[:3] and plate.adjacency_bonus is None
        else:
            assert plate.groups is None and plate.adjacency_bonus == (3, 5, 8) and "+3 / +5 / +8" in bonus
        assert bool(plate.powers) == ("powers" in bonus)
    assert DEFAULT.plates[4].powers == {"extra_turn": (0, 1), "swap_stage": (3, 4), "swap_zone": (5, 6)}
    for power, pair in (("extra turn", "0 and 1"), ("stage swap", "3 and 4"), ("zone swap", "5 and 6")):
        assert f"**{power}**, between spaces {pair}" in text


def test_every_default_face_has_four_cells_and_no_two_match_under_rotation() -> None:
    seen = set()
    for t in range(NUM_TILES):
        for f in (0, 1):
            cells = DEFAULT.face_cells(t, f)
            assert len(cells) == 4
            for k in range(4):
                assert rotate_cells(cells, k) not in seen
            seen.add(cells)


def test_empty_override_is_the_default_and_to_dict_is_json_able() -> None:
    cs = components_from_dict({})
    assert cs.to_dict() == DEFAULT.to_dict()
    assert json.loads(json.dumps(DEFAULT.to_dict())) == DEFAULT.to_dict()
    assert components_from_dict(default_dict()).to_dict() == DEFAULT.to_dict()


def test_two_faces_may_be_the_same_figure() -> None:
    """docs/rules.md §6.1: the data may repeat a figure (rotated or not): the real tiles must load
    whatever they hold.  Every engine plays such a set alike: seeded random games from the same
    deals end in the same states."""
    cs = components_from_dict({"tiles": _tiles_with(7, 0, _ROTATED_TILE0)})
    assert cs.face_cells(7, 0) == rotate_cells(cs.face_cells(0, 0), 1)
    for players in (1, 3):
        for seed in range(3):
            start = SingleGame.new(GameConfig(num_players=players, plate_level=1, components=cs), seed).to_dict()
            games = [
                SingleGame.from_dict(start, cs),
                ReferenceGame.from_dict(start, components=cs),
            ]
            batch = batch_io.from_dict(start, cs)
            rng = random.Random(seed)
            while games[0].legal_actions():
                action = rng.choice(sorted(games[0].legal_actions()))
                for g in games:
                    g.step(action)
                E.step(batch, np.array([action]))
            ends = [g.to_dict() for g in games] + [batch_io.to_dict(batch, 0)]
            assert ends[1] == ends[0] and ends[2] == ends[0] and ends[0]["phase"] == "game_over"


def test_override_keeps_other_defaults() -> None:
    cs = components_from_dict({"reserve": 40, "supply": {"2": 12, "3": 17, "4": 22}})
    assert cs.reserve == 40 and cs.supply[2] == 12
    assert cs.tiles == DEFAULT.tiles and cs.plates == DEFAULT.plates


# --------------------------------------------------------------------------- invariants
def _tiles_with(t: int, face: int, text: Any) -> list[list[Any]]:
    tiles = [list(pair) for pair in DEFAULT.tiles]
    tiles[t][face] = text
    return tiles


def _plate(level: int, **changes: Any) -> dict[str, Any]:
    entry = default_dict()["plates"][str(level)]
    entry.update(changes)
    return {"plates": {str(level): entry}}


_L1_SPACES = list(DEFAULT.plates[1].spaces)
_L4_SPACES = list(DEFAULT.plates[4].spaces)
_ROTATED_TILE0 = face_string(rotate_cells(parse_face(DEFAULT.tiles[0][0]), 1))

BAD_SETS: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    # layouts
    (
        "layout five of a colour",
        {"layouts": {"A": ["BBRY", "RYBG", "GBYR", "YRGB"]}},
        ("layouts['A']", "colour B appears 5 times"),
    ),
    ("layout unknown letter", {"layouts": {"X": ["BGRQ", "RYBG", "GBYR", "YRGB"]}}, ("layouts['X']", "'Q'")),
    ("layout short row", {"layouts": {"A": ["BGR", "RYBG", "GBYR", "YRGB"]}}, ("layouts['A']", "4 strings")),
    ("layout three rows", {"layouts": {"A": ["BGRY", "RYBG", "GBYR"]}}, ("layouts['A']", "4 strings")),
    ("no layouts", {"layouts": {}}, ("layouts", "at least 4")),
    ("three layouts", {"layouts": {k: list(v) for k, v in list(DEFAULT.layouts.items())[:3]}}, ("layouts", "got 3")),
    ("layouts not a table", {"layouts": ["A"]}, ("layouts",)),
    # tiles
    ("23 tiles", {"tiles": [list(p) for p in DEFAULT.tiles[:23]]}, ("tiles", "expected 24 tiles, got 23")),
    ("face with 3 cells", {"tiles": _tiles_with(5, 1, ".X../..X./.X../....")}, ("tiles[5].black", "exactly 4 cells")),
    ("face with 5 cells", {"tiles": _tiles_with(9, 0, "XXXX/X.../..../....")}, ("tiles[9].white", "got 5")),
    ("face bad character", {"tiles": _tiles_with(2, 0, "..../.O../XX../X...")}, ("tiles[2].white", "'O'")),
    ("face bad shape", {"tiles": _tiles_with(4, 1, "X.X./...X/....")}, ("tiles[4].black", "4 rows")),
    (
        "tile with one face",
        {"tiles": [[DEFAULT.tiles[0][0]]] + [list(p) for p in DEFAULT.tiles[1:]]},
        ("tiles[0]", "[white face, black face]"),
    ),
    ("tiles not a list", {"tiles": "XX"}, ("tiles", "expected a list")),
    # plates: spaces
    ("9 plate spaces", _plate(1, spaces=_L1_SPACES[:9]), ("plates[1].spaces", "expected 10 spaces, got 9")),
    ("11 plate spaces", _plate(3, spaces=list(DEFAULT.plates[3].spaces) + ["B"]), ("plates[3].spaces", "got 11")),
    *[
        (f"bad space {text!r}", _plate(1, spaces=[text] + _L1_SPACES[1:]), ("plates[1].spaces[0]", repr(text)))
        for text in ("X", "b", "B/B", "B/G/R", "W4", "W", "W01", "", "G-Y")
    ],
    ("space not a string", _plate(2, spaces=_L1_SPACES[:9] + [3]), ("plates[2].spaces[9]",)),
    # plates: groups / adjacency
    (
        "groups not partitioning (missing)",
        _plate(1, groups=[[[0, 5], 3], [[1, 2, 6], 5], [[3, 4, 7, 8], 8]]),
        ("plates[1].groups", "partition"),
    ),
    (
        "groups not partitioning (overlap)",
        _plate(2, groups=[[[0, 5], 3], [[1, 2, 5, 6], 5], [[3, 4, 7, 8, 9], 8]]),
        ("plates[2].groups", "partition"),
    ),
    (
        "group space out of range",
        _plate(1, groups=[[[0, 5, 10], 3], [[1, 2, 6], 5], [[3, 4, 7, 8, 9], 8]]),
        ("plates[1].groups[0]", "0..9"),
    ),
    (
        "group negative value",
        _plate(1, groups=[[[0, 5], -3], [[1, 2, 6], 5], [[3, 4, 7, 8, 9], 8]]),
        ("plates[1].groups[0]", "value"),
    ),
    ("groups and adjacency", _plate(1, adjacency_bonus=[3, 5, 8]), ("plates[1]", "exactly one")),
    (
        "neither groups nor adjacency",
        {"plates": {"3": {"spaces": list(DEFAULT.plates[3].spaces)}}},
        ("plates[3]", "exactly one"),
    ),
    ("adjacency of two values", _plate(3, adjacency_bonus=[3, 5]), ("plates[3].adjacency_bonus",)),
    ("adjacency negative", _plate(4, adjacency_bonus=[3, -5, 8]), ("plates[4].adjacency_bonus",)),
    # plates: powers
    ("unknown power", _plate(4, powers={"teleport": [0, 1]}), ("plates[4].powers", "'teleport'")),
    ("power not adjacent", _plate(4, powers={"extra_turn": [0, 2]}), ("plates[4].powers['extra_turn']", "adjacent")),
    ("power diagonal", _plate(4, powers={"swap_zone": [0, 6]}), ("plates[4].powers['swap_zone']", "adjacent")),
    ("power out of range", _plate(4, powers={"swap_stage": [9, 10]}), ("plates[4].powers['swap_stage']", "0..9")),
    ("power three spaces", _plate(4, powers={"swap_stage": [3, 4, 5]}), ("plates[4].powers['swap_stage']",)),
    (
        "powers overlap",
        _plate(4, powers={"extra_turn": [0, 1], "swap_stage": [1, 2]}),
        ("plates[4].powers['swap_stage']", "overlap"),
    ),
    # plates: entries
    ("plate level 5", {"plates": {"5": {"spaces": _L4_SPACES, "adjacency_bonus": [3, 5, 8]}}}, ("plates['5']", "1..4")),
    ("plate level not a number", {"plates": {"one": {}}}, ("plates['one']",)),
    ("plate unknown key", _plate(1, colour="red"), ("plates[1]", "unknown key", "colour")),
    ("plate without spaces", {"plates": {"1": {"groups": []}}}, ("plates[1].spaces", "list")),
    (
        "plate spaces as one string",
        {"plates": {"1": {"spaces": "BGRYBGYBRG", "groups": []}}},
        ("plates[1].spaces", "list"),
    ),
    (
        "powers as a list",
        {"plates": {"4": {"spaces": list(DEFAULT.plates[4].spaces), "adjacency_bonus": [3, 5, 8], "powers": [[0, 1]]}}},
        ("plates[4]",),
    ),
    (
        "powers below level 4",
        {
            "plates": {
                "3": {
                    "spaces": list(DEFAULT.plates[3].spaces),
                    "adjacency_bonus": [3, 5, 8],
                    "powers": {"extra_turn": [0, 1]},
                }
            }
        },
        ("plates[3].powers", "level-4"),
    ),
    (
        "face not a string",
        {"tiles": [[[1, 2], "X.X./...X/.X../...."]] + [list(p) for p in DEFAULT.tiles[1:]]},
        ("tiles[0].white", "string"),
    ),
    ("supply as a bool", {"supply": {"2": True, "3": 17, "4": 22}}, ("supply[2]",)),
    ("solo tokens as a bool", {"solo_tokens": True}, ("solo_tokens",)),
    ("plate not a table", {"plates": {"1": [1, 2]}}, ("plates[1]", "table")),
    ("plates not a table", {"plates": [1]}, ("plates",)),
    # token counts
    ("supply zero", {"supply": {"2": 0, "3": 17, "4": 22}}, ("supply[2]", "integer 1..64")),
    ("supply not an int", {"supply": {"2": 11, "3": "17", "4": 22}}, ("supply[3]",)),
    # above the observation's bounds (the batched engine's counters overflowed at 40,000)
    ("supply above 64", {"supply": {"2": 300, "3": 17, "4": 22}}, ("supply[2]", "integer 1..64, got 300")),
    ("reserve above 64", {"reserve": 65}, ("reserve", "integer 3..64")),
    (
        "plate bonus above 64",
        _plate(1, groups=[[[0, 5], 3], [[1, 2, 6], 5], [[3, 4, 7, 8, 9], 60]]),
        ("plates[1]", "the largest plate bonus is 68; at most 64"),
    ),
    (
        "adjacency bonus above 64",
        _plate(3, adjacency_bonus=[25, 5, 8]),  # three separate pairs
        ("plates[3]", "the largest plate bonus is 75"),
    ),
    ("supply missing a count", {"supply": {"2": 11, "3": 17}}, ("supply", "2, 3 and 4")),
    ("supply extra count", {"supply": {"2": 11, "3": 17, "4": 22, "5": 30}}, ("supply", "2, 3 and 4")),
    ("supply not a table", {"supply": 11}, ("supply", "table")),
    # table keys: ints or strings of digits, each once (True and 1.7 were level 1; "1" beside 1 won)
    ("plate key a bool", {"plates": {True: default_dict()["plates"]["1"]}}, ("plates[True]", "level 1..4")),
    ("plate key a float", {"plates": {1.7: default_dict()["plates"]["1"]}}, ("plates[1.7]", "level 1..4")),
    (
        "plate level twice",
        {"plates": {1: default_dict()["plates"]["1"], "1": default_dict()["plates"]["1"]}},
        ("plates['1']", "level 1 is given twice"),
    ),
    ("supply key a bool", {"supply": {True: 11, "3": 17, "4": 22}}, ("supply", "got the key True")),
    ("supply count twice", {"supply": {2: 11, "2": 11, "3": 17, "4": 22}}, ("supply", "given twice")),
    ("reserve too small", {"reserve": 2}, ("reserve", "integer 3..64")),
    ("reserve not an int", {"reserve": 28.0}, ("reserve",)),
    ("solo tokens zero", {"solo_tokens": 0}, ("solo_tokens", "1..10")),
    ("solo tokens eleven", {"solo_tokens": 11}, ("solo_tokens", "1..10")),
    # top level
    ("unknown top-level key", {"tokens": 3}, ("unknown key", "'tokens'")),
]


@pytest.mark.parametrize(("override", "fragments"), [(o, f) for _, o, f in BAD_SETS], ids=[n for n, _, _ in BAD_SETS])
def test_bad_component_set_is_refused_naming_the_entry(override: dict[str, Any], fragments: tuple[str, ...]) -> None:
    with pytest.raises(ComponentError) as info:
        components_from_dict(override)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_top_level_must_be_a_table() -> None:
    with pytest.raises(ComponentError, match="top level"):
        components_from_dict([1, 2])  # type: ignore[arg-type]


def test_validate_components_requires_every_level() -> None:
    cs = ComponentSet(
        layouts=DEFAULT.layouts,
        tiles=DEFAULT.tiles,
        plates={k: v for k, v in DEFAULT.plates.items() if k != 4},
        supply=DEFAULT.supply,
        reserve=DEFAULT.reserve,
        solo_tokens=DEFAULT.solo_tokens,
    )
    with pytest.raises(ComponentError, match=r"plates: expected levels \[1, 2, 3, 4\]"):
        validate_components(cs)


def test_component_error_is_a_value_error() -> None:
    assert issubclass(ComponentError, ValueError)


# --------------------------------------------------------------------------- files
def _toml_value(value: Any) -> str:
    """A tiny TOML writer for the component file's shapes (inline tables and arrays)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


def _toml(data: dict[str, Any]) -> str:
    return "".join(f"{key} = {_toml_value(value)}\n" for key, value in data.items())


def test_load_json_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "components.json"
    path.write_text(json.dumps(DEFAULT.to_dict(), indent=2), encoding="utf-8")
    assert load_components(path).to_dict() == DEFAULT.to_dict()
    assert load_components(str(path)).to_dict() == DEFAULT.to_dict()


def test_load_toml_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "components.toml"
    path.write_text(_toml(DEFAULT.to_dict()), encoding="utf-8")
    assert load_components(path).to_dict() == DEFAULT.to_dict()


def test_load_partial_override(tmp_path: Path) -> None:
    layout = ["YYYY", "GGGG", "RRRR", "BBBB"]
    layouts = {k: list(v) for k, v in DEFAULT.layouts.items() if k != "D"} | {"Z": layout}
    (tmp_path / "part.json").write_text(json.dumps({"layouts": layouts, "reserve": 30}), encoding="utf-8")
    cs = load_components(tmp_path / "part.json")
    assert dict(cs.layouts) == {k: tuple(v) for k, v in layouts.items()}
    assert cs.reserve == 30
    assert cs.tiles == DEFAULT.tiles and cs.supply == DEFAULT.supply

    # a file loaded again is the same set, sharing the tables built for it: every load built
    # and kept new tables (about 0.6 MB per env made from a load_components result)
    assert load_components(tmp_path / "part.json") is cs
    from umbrella_env.core import tables

    config = GameConfig(num_players=2, components=cs)
    tables.tables_for(config)
    cached = len(tables._CACHE)
    tables.tables_for(GameConfig(num_players=2, components=load_components(tmp_path / "part.json")))
    assert len(tables._CACHE) == cached

    (tmp_path / "part.toml").write_text('solo_tokens = 8\n\n[supply]\n"2" = 12\n"3" = 18\n"4" = 23\n', encoding="utf-8")
    cs = load_components(tmp_path / "part.toml")
    assert cs.solo_tokens == 8 and dict(cs.supply) == {2: 12, 3: 18, 4: 23}
    assert cs.layouts == DEFAULT.layouts


def test_load_bad_file_names_the_file_and_the_entry(tmp_path: Path) -> None:
    data = default_dict()
    data["plates"]["2"]["spaces"][4] = "W9"
    for suffix, text in ((".json", json.dumps(data)), (".toml", _toml(data))):
        path = tmp_path / f"bad{suffix}"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ComponentError) as info:
            load_components(path)
        assert str(path) in str(info.value)
        assert "plates[2].spaces[4]" in str(info.value)


@pytest.mark.parametrize("rows", [5, None, "BGRY"])
def test_a_layout_that_is_not_a_list_of_rows_is_named(rows, tmp_path: Path) -> None:
    """``{"layouts": {"a": 5}}`` raised ``TypeError: 'int' object is not iterable``."""
    (tmp_path / "c.json").write_text(json.dumps({"layouts": {"a": rows}}), encoding="utf-8")
    with pytest.raises(ComponentError, match=r"layouts\['a'\]: expected 4 strings of 4 colour letters, got "):
        load_components(tmp_path / "c.json")


def test_load_text_that_is_not_json_or_toml(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ComponentError, match="not valid JSON"):
        load_components(tmp_path / "broken.json")
    (tmp_path / "broken.toml").write_text("reserve = = 3", encoding="utf-8")
    with pytest.raises(ComponentError, match="not valid TOML"):
        load_components(tmp_path / "broken.toml")


def test_load_json_that_is_not_an_object(tmp_path: Path) -> None:
    (tmp_path / "list.json").write_text("[1, 2, 3]", encoding="utf-8")
    with pytest.raises(ComponentError, match="top level"):
        load_components(tmp_path / "list.json")


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ComponentError, match="does not exist"):
        load_components(tmp_path / "nope.json")
    with pytest.raises(ComponentError, match="is a directory"):
        load_components(tmp_path)  # a directory is not a component file


def test_load_unknown_extension(tmp_path: Path) -> None:
    path = tmp_path / "components.yaml"
    path.write_text("reserve: 30\n", encoding="utf-8")
    with pytest.raises(ComponentError, match=r"expected a \.json or \.toml file"):
        load_components(path)


# --------------------------------------------------------------------------- geometry helpers
def test_parse_face() -> None:
    assert parse_face("..../..../.X../.XXX") == (9, 13, 14, 15)
    assert parse_face("XXXX/..../..../....") == (0, 1, 2, 3)
    with pytest.raises(ComponentError):
        parse_face("XXXX/....")


def test_rotate_cell_is_a_clockwise_quarter_turn() -> None:
    # docs/rules.md §6: one step is (r, c) -> (c, 3 - r): corners go round clockwise.
    assert [rotate_cell(0, k) for k in range(4)] == [0, 3, 15, 12]
    assert rotate_cell(1, 1) == 7  # r0c1 -> r1c3
    assert rotate_cell(5, 1) == 6  # r1c1 -> r1c2 (the centre 2x2 turns too)
    for cell in range(16):
        assert rotate_cell(cell, 4) == cell
        assert rotate_cell(cell, -1) == rotate_cell(cell, 3)
        assert rotate_cell(rotate_cell(cell, 1), 3) == cell


def test_rotate_cells_sorted_and_drawn() -> None:
    cells = parse_face("XXXX/..../..../....")  # tile 15 white: the top row
    assert rotate_cells(cells, 1) == (3, 7, 11, 15)  # -> the right column
    assert rotate_cells(cells, 2) == (12, 13, 14, 15)  # -> the bottom row
    assert rotate_cells(cells, 3) == (0, 4, 8, 12)  # -> the left column
    assert face_string(rotate_cells(parse_face("..../..../.X../.XXX"), 1)) == "..../XX../X.../X..."


def test_plate_geometry() -> None:
    assert sorted(plate_neighbours(0)) == [1, 5]
    assert sorted(plate_neighbours(2)) == [1, 3, 7]
    assert sorted(plate_neighbours(6)) == [1, 5, 7]
    assert connected_group_sizes(occupied()) == []
    assert sorted(connected_group_sizes(occupied(0, 1, 9, 4, 3))) == [2, 3]
    assert connected_group_sizes(occupied(*range(10))) == [10]


def test_parse_space_and_accepts() -> None:
    assert parse_space("B") == (frozenset({0}), None)
    assert parse_space("G/Y") == (frozenset({1, 3}), None)
    assert parse_space("W2") == (frozenset(), 2)
    level2, level3 = DEFAULT.plates[2], DEFAULT.plates[3]
    assert level2.accepts(2, COLOURS.index("G"), 0) and level2.accepts(2, COLOURS.index("Y"), 3)
    assert not level2.accepts(2, COLOURS.index("R"), 0)
    # A white space Wk takes any colour, but only from slot k.
    assert all(level3.accepts(2, c, 0) for c in range(4))
    assert not any(level3.accepts(2, c, k) for c in range(4) for k in (1, 2, 3))


# --------------------------------------------------------------------------- plate bonus
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize(
    ("spaces", "bonus"),
    [
        ((), 0),
        ((0,), 0),
        ((0, 5), 3),
        ((1, 2, 6), 5),
        ((1, 2), 0),
        ((3, 4, 7, 8, 9), 8),
        ((0, 5, 1, 2, 6), 8),  # the rulebook example: two complete groups +3 and +5
        (tuple(range(10)), 16),
    ],
)
def test_plate_bonus_fixed_groups(level: int, spaces: tuple[int, ...], bonus: int) -> None:
    assert DEFAULT.plates[level].bonus(occupied(*spaces)) == bonus


@pytest.mark.parametrize("level", [3, 4])
@pytest.mark.parametrize(
    ("spaces", "bonus"),
    [
        ((), 0),
        ((0,), 0),
        ((0, 2, 4, 6, 8), 0),  # no two orthogonally adjacent
        ((0, 6), 0),  # diagonal is not adjacent
        ((0, 1), 3),
        ((0, 5), 3),
        ((0, 1, 2), 5),
        ((0, 1, 6), 5),
        ((0, 1, 5, 6), 8),
        ((0, 1, 2, 3, 4), 8),  # 4+ pays 8, not more
        ((0, 1, 3, 4), 6),  # two pairs
        ((0, 1, 3, 4, 9), 8),  # a pair and a triple
        (tuple(range(10)), 8),
    ],
)
def test_plate_bonus_adjacency(level: int, spaces: tuple[int, ...], bonus: int) -> None:
    assert DEFAULT.plates[level].bonus(occupied(*spaces)) == bonus


def test_plate_spec_custom_adjacency_values() -> None:
    plate = PlateSpec(spaces=DEFAULT.plates[3].spaces, adjacency_bonus=(1, 10, 100))
    assert plate.bonus(occupied(0, 1)) == 1
    assert plate.bonus(occupied(0, 1, 2)) == 10
    assert plate.bonus(occupied(0, 1, 2, 3, 4, 9)) == 100


def test_non_utf8_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ComponentError, match="UTF-8"):
        load_components(path)


def test_a_file_saved_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    """Windows editors (PowerShell 5.1's ``Out-File -Encoding utf8``, older Notepad) start a
    UTF-8 file with a byte-order mark: it was refused as "not valid JSON: Unexpected UTF-8
    BOM" (TOML: "Invalid statement")."""
    for name, text in [("set.json", '{"reserve": 28}'), ("set.toml", "reserve = 28\r\n")]:
        path = tmp_path / name
        path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
        assert load_components(path).reserve == 28


def test_score_bounds_of_the_default_plates() -> None:
    """The score ranges of ``core.engine``'s doc: every token pattern of the default plates, an
    empty personal zone (+2) at 2-4 players; in solo six tokens and at most 15 umbrellas left
    in the zones (20 at setup, one leaves per slide, the extra turn returns one)."""
    patterns = [[bool(b >> s & 1) for s in range(10)] for b in range(1024)]
    best = {level: max(player_score(DEFAULT.plates[level], o, 0) for o in patterns) for level in LEVELS}
    assert best == {1: 38, 2: 38, 3: 34, 4: 34}
    solo = [o for o in patterns if sum(o) <= DEFAULT.solo_tokens]
    best = {level: max(solo_score(DEFAULT.plates[level], o, 15, DEFAULT.solo_tokens) for o in solo) for level in LEVELS}
    assert best == {1: 35, 2: 35, 3: 38, 4: 38}


def test_a_pickled_configuration_shares_the_tables_of_the_process() -> None:
    """A process pool's job carries its configuration pickled; each unpickled component set
    was a new object, the table caches (keyed by the set object) missed, and a worker kept
    a set of tables per job: 200 evaluation chunks grew a worker by 260 MB."""
    config = GameConfig(num_players=2)
    for _ in range(3):
        again = pickle.loads(pickle.dumps(config))
        assert again.components is config.components
        assert single.single_tables(again) is single.single_tables(config)
        assert tables.tables_for(again) is tables.tables_for(config)
    game = SingleGame.new(config, 7)
    assert pickle.loads(pickle.dumps(game)).tables is game.tables
    assert copy.deepcopy(config).components is config.components
    custom = components_from_dict({**default_dict(), "reserve": 30})
    first, second = (pickle.loads(pickle.dumps(custom)) for _ in range(2))
    assert first is second and first == custom and first.reserve == 30
    assert pickle.loads(pickle.dumps(default_components())) is default_components()


def test_threads_reading_one_set_at_once_get_the_one_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """The set of a content was looked up, built and stored without a lock: threads loading
    the same file at once each kept a set of their own ("the process's one set" broken), and
    a game of one could not be written into a batch of another (``to_batch`` then printed two
    identical configurations as the difference)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from umbrella_env.core import components

    data = {**default_dict(), "reserve": 29}
    barrier = threading.Barrier(4)
    build = components.components_from_dict

    def build_together(given: Any) -> Any:  # every thread between the lookup and the store
        built = build(given)
        if given.get("reserve") == 29:
            barrier.wait(timeout=10)
        return built

    monkeypatch.setattr(components, "components_from_dict", build_together)
    with ThreadPoolExecutor(4) as pool:
        sets = list(pool.map(lambda _: components._restore_components(dict(data)), range(4)))
    monkeypatch.setattr(components, "components_from_dict", build)
    assert all(cs is sets[0] for cs in sets) and components_of(data) is sets[0]

    twin = build(data)  # an equal set built apart from the process's one
    assert twin == sets[0] and twin is not sets[0]
    batch = E.init(GameConfig(num_players=2, components=sets[0]), 1, seed=0)
    with pytest.raises(ConfigError, match="the game uses another ComponentSet object than the batch"):
        SingleGame.new(GameConfig(num_players=2, components=twin), 5).to_batch(batch, 0)


def test_the_layouts_order_survives_pickling_and_the_dict_form() -> None:
    """A game's key picks layouts by index, so the order is part of a set; sets were cached by
    ``json.dumps(..., sort_keys=True)``, which drops it: the default set's layouts reversed
    came back from a pickle (or a dict) as the default set, and dealt its games."""
    data = default_dict()
    data["layouts"] = dict(reversed(list(data["layouts"].items())))
    reordered = components_from_dict(data)
    assert reordered != default_components()  # the same layouts, another order: other deals
    for again in (pickle.loads(pickle.dumps(reordered)), components_of(data), components_of(reordered.to_dict())):
        assert list(again.layouts) == list(reordered.layouts) and again == reordered
        assert again is not default_components()
    configs = [GameConfig(num_players=2, components=cs) for cs in (reordered, default_components())]
    stages = [SingleGame.new(config, 11).to_dict()["stages"] for config in configs]
    assert stages[0] != stages[1]


def test_the_tables_cache_stays_one_entry_over_many_pickled_jobs() -> None:
    config = GameConfig(num_players=3, plate_level=2)
    single.single_tables(config)
    tables.tables_for(config)
    before = (len(single._CACHE), len(tables._CACHE))
    for _ in range(20):
        job = pickle.loads(pickle.dumps({"config": config}))
        single.single_tables(job["config"])
        tables.tables_for(job["config"])
    assert (len(single._CACHE), len(tables._CACHE)) == before
