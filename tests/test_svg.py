"""The SVG picture (umbrella_env/core/svg.py): well-formed, scalable, deterministic, and it
shows the state: stage cells, zone umbrellas, plate tokens and stack heights in the colours
and numbers the state dict says, the acting seat, the tile in transit; hidden tiles do not
show, a bad dict is refused."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

import numpy as np
import pytest

from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.components import COLOURS, default_components, rotate_cells
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import StateError
from umbrella_env.core.image import ACTOR_FRAME, UMBRELLA_RGB, image_regions
from umbrella_env.core.playout import policy_actions
from umbrella_env.core.reference import ReferenceGame
from umbrella_env.core.serialize import zone_counts
from umbrella_env.core.single import SingleGame
from umbrella_env.core.svg import state_to_svg

CS = default_components()
NS = "{http://www.w3.org/2000/svg}"
HEX = {"#{:02x}{:02x}{:02x}".format(*rgb): letter for rgb, letter in zip(UMBRELLA_RGB, COLOURS)}


# --------------------------------------------------------------------------- helpers
def played(num_players: int, plate_level: int, seed: int, decisions: int) -> dict[str, Any]:
    """A seeded game after ``decisions`` decisions of the greedy playout (or at its end)."""
    state = E.init(GameConfig(num_players=num_players, plate_level=plate_level), 1, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(decisions):
        if state.done[0]:
            break
        E.step(state, policy_actions(state, rng, 0.9))
    return batch_io.to_dict(state, 0)


def reach_phase(num_players: int, phase: int, seed: int) -> dict[str, Any]:
    state = E.init(GameConfig(num_players=num_players), 16, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(3000):
        hit = np.flatnonzero(state.phase == phase)
        if hit.size:
            return batch_io.to_dict(state, int(hit[0]))
        E.step(state, policy_actions(state, rng, 0.9))
    raise AssertionError(f"no game reached phase {A.PHASES[phase]!r}")


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def by_id(root: ET.Element, gid: str) -> ET.Element:
    hits = [e for e in root.iter() if e.get("id") == gid]
    assert len(hits) == 1, f"{len(hits)} elements with id {gid!r}"
    return hits[0]


def of_class(elem: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in elem.iter() if cls in (e.get("class") or "").split()]


def letters(elems: list[ET.Element]) -> list[str]:
    return [HEX[e.get("fill", "")] for e in elems]


def seat_zones(d: dict[str, Any], i: int) -> dict[str, str]:
    """The zones drawn around seat ``i``'s stage (docs/state.md: side zone i is seat i's left)."""
    z = d["zones"]
    if d["num_players"] == 1:
        return {
            "top": z["top"],
            "bottom": z["personal"],
            "left": z["left"],
            "right": z["right"],
            "discard": z["discard"],
        }
    p = d["num_players"]
    return {"top": z["central"], "bottom": z["personal"][i], "left": z["side"][i], "right": z["side"][(i - 1) % p]}


#: (players, plate level, seed, decisions played): every player count at every level.
CASES = [
    (p, level, seed, decisions)
    for p in (1, 2, 3, 4)
    for level, seed, decisions in ((1, 1, 0), (2, 2, 15), (3, 3, 40), (4, 4, 90))
]


# --------------------------------------------------------------------------- the picture shows the state
@pytest.mark.parametrize("num_players,plate_level,seed,decisions", CASES)
def test_the_picture_shows_stages_zones_tokens_and_stacks(
    num_players: int, plate_level: int, seed: int, decisions: int
) -> None:
    d = played(num_players, plate_level, seed, decisions)
    root = parse(state_to_svg(d))
    assert root.tag == f"{NS}svg"
    _, height, _, width = image_regions(num_players)["image"]
    assert root.get("viewBox") == f"0 0 {width} {height}"
    title = root.find(f"{NS}title")
    assert title is not None and f"turn {d['turn']} of {d['max_turns']}" in (title.text or "")
    for i in range(num_players):
        cells = of_class(by_id(root, f"seat{i}-stage"), "cell")
        assert len(cells) == 16
        assert "".join(letters(cells)) == "".join(d["stages"][i])
        for name, zone in seat_zones(d, i).items():
            dots = of_class(by_id(root, f"seat{i}-zone-{name}"), "umbrella")
            assert Counter(letters(dots)) == Counter(zone), (i, name)
            assert [letters(dots).count(c) for c in COLOURS] == zone_counts(zone)
        tokens = {e.get("id"): HEX[e.get("fill", "")] for e in of_class(by_id(root, f"seat{i}-plate"), "token")}
        expected = {f"seat{i}-token{k}": t for k, t in enumerate(d["plates"][i]) if t is not None}
        assert tokens == expected
        for k, stack in enumerate(d["slots"][i]):
            slot = by_id(root, f"seat{i}-slot{k}")
            assert len(of_class(slot, "tick")) == len(stack)
            if stack:
                top = stack[-1]
                face = A.FACES.index(top["face"])
                assert len(of_class(slot, "figure-cell")) == len(CS.face_cells(top["tile"], face))
            else:
                assert len(of_class(slot, "empty")) == 1
        score = [e.text for e in by_id(root, f"seat{i}").iter(f"{NS}text") if (e.text or "").startswith("Score")]
        assert score == [f"Score {d['scores'][i]}"]


def test_the_state_in_the_picture_changes_with_a_slide() -> None:
    state = E.init(GameConfig(num_players=2), 1, seed=7)
    before = batch_io.to_dict(state, 0)
    E.step(state, np.array([A.slide_action(A.TOP, int(np.argmax(state.zones[0, 0] > 0)), 2)]))
    after = batch_io.to_dict(state, 0)
    cells = [letters(of_class(by_id(parse(state_to_svg(x)), "seat0-stage"), "cell")) for x in (before, after)]
    assert cells[0] != cells[1]
    assert "".join(cells[1]) == "".join(after["stages"][0])


def actor_frames(root: ET.Element, num_players: int) -> list[bool]:
    frames = []
    for i in range(num_players):
        found = of_class(by_id(root, f"seat{i}"), "actor-frame")
        assert all(f.get("stroke") == "#{:02x}{:02x}{:02x}".format(*ACTOR_FRAME) for f in found)
        frames.append(len(found) == 1)
    return frames


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_seat_to_act_is_framed(num_players: int) -> None:
    d = played(num_players, 1, seed=5, decisions=0)
    assert actor_frames(parse(state_to_svg(d)), num_players) == [i == 0 for i in range(num_players)]
    d["current_player"] = num_players - 1
    assert actor_frames(parse(state_to_svg(d)), num_players) == [i == num_players - 1 for i in range(num_players)]


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_receiver_is_framed_and_the_tile_in_transit_shown_in_cover(num_players: int) -> None:
    d = reach_phase(num_players, A.PHASE_COVER, seed=30 + num_players)
    root = parse(state_to_svg(d))
    receiver = (d["current_player"] + 1) % num_players
    assert actor_frames(root, num_players) == [i == receiver for i in range(num_players)]
    passing = by_id(root, "passing")
    cells = CS.face_cells(d["passing"]["tile"], A.FACES.index(d["passing"]["face"]))
    assert len(of_class(passing, "figure-cell")) == len(cells)
    start = parse(state_to_svg(played(num_players, 1, seed=0, decisions=0)))
    assert not [e for e in start.iter() if e.get("id") == "passing"]


def test_nobody_is_framed_once_the_game_is_over() -> None:
    state = E.init(GameConfig(num_players=2, max_turns=3), 1, seed=1)
    rng = np.random.default_rng(1)
    while not state.done[0]:
        E.step(state, E.random_legal_actions(state, rng))
    root = parse(state_to_svg(batch_io.to_dict(state, 0)))
    assert actor_frames(root, 2) == [False, False]
    assert "Truncated" in [e.text for e in by_id(root, "table").iter(f"{NS}text")]


def test_a_complete_figure_is_framed_in_its_colour() -> None:
    d = played(2, 1, seed=3, decisions=0)
    top = d["slots"][0][0][-1]
    cells = rotate_cells(CS.face_cells(top["tile"], A.FACES.index(top["face"])), 0)
    stage = list("".join(d["stages"][0]))
    outside_blue = [c for c in range(16) if stage[c] == "B" and c not in cells]
    for c in cells:
        if stage[c] != "B":
            o = outside_blue.pop()
            stage[c], stage[o] = stage[o], stage[c]
    d["stages"][0] = ["".join(stage[r * 4 : r * 4 + 4]) for r in range(4)]
    (tile,) = of_class(by_id(parse(state_to_svg(d)), "seat0-slot0"), "tile")
    assert HEX.get(tile.get("stroke", "")) == "B"
    (plain,) = of_class(by_id(parse(state_to_svg(played(2, 1, seed=3, decisions=0))), "seat0-slot0"), "tile")
    assert plain.get("stroke") not in HEX


# --------------------------------------------------------------------------- output form
@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_output_is_deterministic_whatever_the_input_form(num_players: int) -> None:
    d = played(num_players, num_players, seed=8, decisions=12)
    first = state_to_svg(d)
    assert state_to_svg(copy.deepcopy(d)) == first
    loose = copy.deepcopy(d)
    del loose["scores"], loose["max_turns"]
    key = "top" if num_players == 1 else "central"
    loose["zones"][key] = loose["zones"][key][::-1]
    assert state_to_svg(loose) == first
    assert state_to_svg(SingleGame.from_dict(d)) == first
    assert state_to_svg(ReferenceGame.from_dict(d)) == first


def test_output_is_self_contained_scalable_and_rounded() -> None:
    svg = state_to_svg(played(4, 4, seed=9, decisions=60), description="a <test> & more")
    assert svg.startswith("<svg ") and svg.endswith("</svg>\n")
    for banned in ("href", "<image", "<script", "<style", "url(", "@import", "@font-face", "http://www.w3.org/1999"):
        assert banned not in svg
    root = parse(svg)
    assert root.get("viewBox") and root.get("width") and root.get("height")
    desc = root.find(f"{NS}desc")
    assert desc is not None and desc.text == "a <test> & more"
    numbers = re.findall(r'(?:x|y|cx|cy|r|width|height)="(-?[0-9.]+)"', svg)
    assert numbers and all(re.fullmatch(r"-?\d+(\.\d{1,2})?", n) for n in numbers)


# --------------------------------------------------------------------------- public information, bad input
def test_a_hidden_tile_does_not_change_the_picture() -> None:
    d = played(3, 1, seed=5, decisions=0)
    assert len(d["slots"][0][0]) >= 2
    used = {e["tile"] for board in d["slots"] for stack in board for e in stack}
    spare = next(t for t in range(24) if t not in used)
    hidden = copy.deepcopy(d)
    hidden["slots"][0][0][0] = {"tile": spare, "face": "black"}
    assert state_to_svg(hidden) == state_to_svg(d)


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda d: d.__setitem__("supply", d["supply"] + 1),
        lambda d: d["stages"][0].__setitem__(0, "BGRX"),
        lambda d: d.pop("plates"),
    ],
    ids=["supply", "stage-letter", "missing-key"],
)
def test_a_bad_dict_raises_state_error(corrupt: Any) -> None:
    d = played(2, 1, seed=0, decisions=0)
    corrupt(d)
    with pytest.raises(StateError):
        state_to_svg(d)


def test_something_that_is_not_a_state_raises_state_error() -> None:
    with pytest.raises(StateError, match="state: expected a dict"):
        state_to_svg(42)


def test_every_stage_cell_names_its_colour_by_letter_too() -> None:
    """Colour alone told the umbrellas apart (green and red merge for deuteranopes, blue and
    red in greyscale; WCAG 1.4.1): each cell now carries its letter (review of accessibility)."""
    d = played(2, 1, 6, 30)
    root = parse(state_to_svg(d))
    for i in range(2):
        stage = by_id(root, f"seat{i}-stage")
        texts = [e.text for e in stage.iter(f"{NS}text")]
        assert texts == letters(of_class(stage, "cell")) == list("".join(d["stages"][i]))


@pytest.mark.parametrize(("num_players", "plate_level", "seed", "decisions"), [(1, 1, 3, 25), (4, 1, 6, 60)])
def test_every_zone_dot_names_its_colour_by_letter_too(
    num_players: int, plate_level: int, seed: int, decisions: int
) -> None:
    d = played(num_players, plate_level, seed, decisions)
    root = parse(state_to_svg(d))
    for i in range(num_players):
        for name in seat_zones(d, i):
            zone = by_id(root, f"seat{i}-zone-{name}")
            texts = [e.text for e in zone.iter(f"{NS}text")]
            assert texts == letters(of_class(zone, "umbrella")), (i, name)


def test_plate_spaces_and_tokens_name_their_colours_by_letter_too() -> None:
    from umbrella_env.core.components import default_components, parse_space

    d = played(2, 2, 6, 60)
    root = parse(state_to_svg(d))
    spaces = default_components().plates[2].spaces
    for i in range(2):
        texts = [e.text for e in by_id(root, f"seat{i}-plate").iter(f"{NS}text")]
        wanted = [
            c
            for k, text in enumerate(spaces)
            for c in [
                *(COLOURS[j] for j in sorted(parse_space(text)[0])),
                *([d["plates"][i][k]] if d["plates"][i][k] else []),
            ]
        ]
        assert [t for t in texts if t in COLOURS] == wanted
