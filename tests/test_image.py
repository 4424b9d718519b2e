"""The RGB picture (umbrella_env/core/image.py): shape and determinism, that it follows the
state (slides, tokens, the acting seat), the public-information promise (tiles under a
stack's top are only counted) and that a bad dict is refused."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.components import COLOURS, default_components, rotate_cells
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import StateError
from umbrella_env.core.image import ACTOR_FRAME, UMBRELLA_RGB, image_regions, render_rgb

CS = default_components()


# --------------------------------------------------------------------------- helpers
def start_dict(num_players: int, plate_level: int = 1, seed: int = 0) -> dict[str, Any]:
    return batch_io.to_dict(E.init(GameConfig(num_players=num_players, plate_level=plate_level), 1, seed=seed), 0)


def crop(img: np.ndarray, num_players: int, name: str) -> np.ndarray:
    y0, y1, x0, x1 = image_regions(num_players)[name]
    return img[y0:y1, x0:x1]


def has_colour(img: np.ndarray, rgb: tuple[int, int, int]) -> bool:
    return bool(np.all(img == np.array(rgb, dtype=np.uint8), axis=-1).any())


def framed_by_actor(img: np.ndarray, num_players: int, seat: int) -> bool:
    """The seat panel's outer frame is drawn in the actor colour (checked on all four edges)."""
    panel = crop(img, num_players, f"seat{seat}")
    edges = (panel[1, :], panel[-2, :], panel[:, 1], panel[:, -2])
    return all(bool(np.all(edge == np.array(ACTOR_FRAME, dtype=np.uint8))) for edge in edges)


def reach_phase(num_players: int, phase: int, seed: int, plate_level: int = 1) -> tuple[E.BatchState, int]:
    """A seeded random batch played until one of its games is in ``phase``: (batch, game)."""
    state = E.init(GameConfig(num_players=num_players, plate_level=plate_level), 32, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(5000):
        hit = np.flatnonzero(state.phase == phase)
        if hit.size:
            return state, int(hit[0])
        E.step(state, E.random_legal_actions(state, rng))
    raise AssertionError(f"no game reached phase {A.PHASES[phase]!r}")


# --------------------------------------------------------------------------- shape and determinism
@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
@pytest.mark.parametrize("plate_level", [1, 4])
def test_picture_is_an_rgb_uint8_array_of_a_fixed_size(num_players: int, plate_level: int) -> None:
    img = render_rgb(start_dict(num_players, plate_level))
    assert img.dtype == np.uint8
    assert img.ndim == 3 and img.shape[2] == 3
    assert img.flags.c_contiguous
    _, height, _, width = image_regions(num_players)["image"]
    assert img.shape == (height, width, 3)
    assert 600 <= width <= 900 and 200 <= height <= 700
    assert height % 16 == 0 and width % 16 == 0  # video encoders (RecordVideo) take it as it is
    # The size depends on the player count only, not on the position.
    state, b = reach_phase(num_players, A.PHASE_VALIDATE, seed=num_players, plate_level=plate_level)
    assert render_rgb(batch_io.to_dict(state, b)).shape == img.shape


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_regions_lie_inside_the_picture_and_seats_do_not_overlap(num_players: int) -> None:
    regions = image_regions(num_players)
    _, height, _, width = regions["image"]
    for name, (y0, y1, x0, x1) in regions.items():
        assert 0 <= y0 < y1 <= height and 0 <= x0 < x1 <= width, name
    boxes = [regions[f"seat{i}"] for i in range(num_players)] + [regions["table"]]
    for j, (a0, a1, b0, b1) in enumerate(boxes):
        for c0, c1, d0, d1 in boxes[j + 1 :]:
            assert a1 <= c0 or c1 <= a0 or b1 <= d0 or d1 <= b0
    with pytest.raises(ValueError):
        image_regions(5)


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_picture_is_deterministic(num_players: int) -> None:
    d = start_dict(num_players, seed=4)
    first = render_rgb(d)
    np.testing.assert_array_equal(first, render_rgb(copy.deepcopy(d)))
    # Any valid form of the same position (zone letters unsorted, optional keys left out) draws the same.
    loose = copy.deepcopy(d)
    del loose["scores"], loose["max_turns"]
    if num_players == 1:
        loose["zones"]["top"] = loose["zones"]["top"][::-1]
    else:
        loose["zones"]["central"] = loose["zones"]["central"][::-1]
    np.testing.assert_array_equal(first, render_rgb(loose))


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_all_four_umbrella_colours_appear_at_the_start(num_players: int) -> None:
    img = render_rgb(start_dict(num_players))
    for rgb in UMBRELLA_RGB:
        assert has_colour(img, rgb), rgb
    for i in range(num_players):
        stage = crop(img, num_players, f"seat{i}.stage")
        assert all(has_colour(stage, rgb) for rgb in UMBRELLA_RGB)


# --------------------------------------------------------------------------- the picture follows the state
@pytest.mark.parametrize("num_players", [1, 2, 4])
def test_a_slide_changes_the_movers_stage(num_players: int) -> None:
    state = E.init(GameConfig(num_players=num_players), 1, seed=7)
    before = render_rgb(batch_io.to_dict(state, 0))
    # Start layouts hold four colours in every line, so any slide changes the stage.
    E.step(state, np.array([A.slide_action(A.TOP, int(np.argmax(state.zones[0, 0] > 0)), 2)]))
    after = render_rgb(batch_io.to_dict(state, 0))
    assert not np.array_equal(crop(before, num_players, "seat0.stage"), crop(after, num_players, "seat0.stage"))
    for i in range(1, num_players):
        name = f"seat{i}.stage"
        np.testing.assert_array_equal(crop(before, num_players, name), crop(after, num_players, name))


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_placing_a_token_changes_the_plate(num_players: int) -> None:
    state, b = reach_phase(num_players, A.PHASE_VALIDATE, seed=10 + num_players)
    seat = int(state.current[b])
    d_before = batch_io.to_dict(state, b)
    E.step(state, E.random_legal_actions(state, np.random.default_rng(0)))
    d_after = batch_io.to_dict(state, b)
    placed = [sum(t is not None for t in d["plates"][seat]) for d in (d_before, d_after)]
    assert placed[1] == placed[0] + 1
    before, after = render_rgb(d_before), render_rgb(d_after)
    name = f"seat{seat}.plate"
    assert not np.array_equal(crop(before, num_players, name), crop(after, num_players, name))
    for i in range(num_players):
        if i != seat:
            other = f"seat{i}.plate"
            np.testing.assert_array_equal(crop(before, num_players, other), crop(after, num_players, other))


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_marker_follows_the_acting_seat(num_players: int) -> None:
    d = start_dict(num_players)
    img = render_rgb(d)
    assert framed_by_actor(img, num_players, 0)
    assert not any(framed_by_actor(img, num_players, i) for i in range(1, num_players))
    moved = copy.deepcopy(d)
    moved["current_player"] = 1
    img = render_rgb(moved)
    assert framed_by_actor(img, num_players, 1)
    assert not any(framed_by_actor(img, num_players, i) for i in range(num_players) if i != 1)


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_receiver_is_marked_in_phase_cover(num_players: int) -> None:
    state, b = reach_phase(num_players, A.PHASE_COVER, seed=20 + num_players)
    receiver = (int(state.current[b]) + 1) % num_players
    img = render_rgb(batch_io.to_dict(state, b))
    assert [framed_by_actor(img, num_players, i) for i in range(num_players)] == [
        i == receiver for i in range(num_players)
    ]


def test_no_seat_is_marked_once_the_game_is_over() -> None:
    state = E.init(GameConfig(num_players=2, max_turns=3), 1, seed=1)
    rng = np.random.default_rng(1)
    while not state.done[0]:
        E.step(state, E.random_legal_actions(state, rng))
    img = render_rgb(batch_io.to_dict(state, 0))
    assert not any(framed_by_actor(img, 2, i) for i in range(2))


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_tile_in_transit_is_shown_on_the_table(num_players: int) -> None:
    state, b = reach_phase(num_players, A.PHASE_COVER, seed=30 + num_players)
    d = batch_io.to_dict(state, b)
    shown = crop(render_rgb(d), num_players, "table")
    d["passing"]["tile"] = next(t for t in range(24) if t not in _tiles_in_play(d))
    assert not np.array_equal(shown, crop(render_rgb(d), num_players, "table"))


def test_a_complete_figure_is_framed_in_its_colour() -> None:
    d = start_dict(2, seed=3)
    top = d["slots"][0][0][-1]
    cells = rotate_cells(CS.face_cells(top["tile"], A.FACES.index(top["face"])), 0)
    stage = list("".join(d["stages"][0]))
    # Make the figure blue by swapping umbrellas inside the figure with blue ones outside it.
    outside_blue = [c for c in range(16) if stage[c] == "B" and c not in cells]
    for c in cells:
        if stage[c] != "B":
            o = outside_blue.pop()
            stage[c], stage[o] = stage[o], stage[c]
    d["stages"][0] = ["".join(stage[r * 4 : r * 4 + 4]) for r in range(4)]
    slot = crop(render_rgb(d), 2, "seat0.slot0")
    blue = np.array(UMBRELLA_RGB[COLOURS.index("B")], dtype=np.uint8)
    assert np.all(slot[0, :] == blue) and np.all(slot[:, 0] == blue)
    plain = crop(render_rgb(start_dict(2, seed=3)), 2, "seat0.slot0")
    assert not np.any(np.all(plain[0, :] == blue, axis=-1))


# --------------------------------------------------------------------------- public information
def _tiles_in_play(d: dict[str, Any]) -> set[int]:
    used = {e["tile"] for board in d["slots"] for stack in board for e in stack}
    if d["passing"] is not None:
        used.add(d["passing"]["tile"])
    return used


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_a_hidden_tile_does_not_change_the_picture(num_players: int) -> None:
    d = start_dict(num_players, seed=5)
    stack = d["slots"][0][0]
    assert len(stack) >= 2
    original = render_rgb(d)
    spare = next(t for t in range(24) if t not in _tiles_in_play(d))
    for face in ("white", "black"):
        hidden = copy.deepcopy(d)
        hidden["slots"][0][0][0] = {"tile": spare, "face": face}
        np.testing.assert_array_equal(original, render_rgb(hidden))


@pytest.mark.parametrize("num_players", [1, 2, 3, 4])
def test_only_the_stack_height_of_hidden_tiles_shows(num_players: int) -> None:
    d = start_dict(num_players, seed=5)
    moved = copy.deepcopy(d)
    bottom = moved["slots"][0][0].pop(0)  # the visible tiles stay the same
    moved["slots"][0][1].insert(0, bottom)
    before, after = render_rgb(d), render_rgb(moved)
    slots = image_regions(num_players)["seat0.slots"]
    assert not np.array_equal(crop(before, num_players, "seat0.slots"), crop(after, num_players, "seat0.slots"))
    outside = np.ones(before.shape[:2], dtype=bool)
    outside[slots[0] : slots[1], slots[2] : slots[3]] = False
    np.testing.assert_array_equal(before[outside], after[outside])
    for k in range(4):
        name = f"seat0.slot{k}"
        np.testing.assert_array_equal(crop(before, num_players, name), crop(after, num_players, name))


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "corrupt",
    [
        lambda d: d.__setitem__("supply", d["supply"] + 1),
        lambda d: d["stages"][0].__setitem__(0, "BGRX"),
        lambda d: d.__setitem__("phase", "dance"),
        lambda d: d.pop("plates"),
        lambda d: d["slots"][0][0].append(dict(d["slots"][0][1][0])),
    ],
    ids=["supply", "stage-letter", "phase", "missing-key", "duplicate-tile"],
)
def test_a_dict_that_fails_validation_raises_state_error(corrupt: Any) -> None:
    d = start_dict(2)
    corrupt(d)
    with pytest.raises(StateError):
        render_rgb(d)


@pytest.mark.parametrize("num_players", [1, 2])
def test_every_stage_cell_carries_its_letter_in_a_contrasting_ink(num_players: int) -> None:
    """Colour alone told the umbrellas apart (WCAG 1.4.1): each cell shows its letter, white
    on blue and red, dark on green and yellow."""
    from umbrella_env.core.image import _CELL, _CELL_GAP, _CELL_LETTER, _PALETTE

    d = start_dict(num_players)
    stage = crop(render_rgb(d), num_players, "seat0.stage")
    for r, row in enumerate(d["stages"][0]):
        for c, letter in enumerate(row):
            y, x = _CELL_GAP + r * (_CELL + _CELL_GAP), _CELL_GAP + c * (_CELL + _CELL_GAP)
            cell = stage[y : y + _CELL, x : x + _CELL]
            ink = _PALETTE[_CELL_LETTER["BGRY".index(letter)]]
            drawn = np.all(cell == ink, axis=-1)
            assert 10 <= drawn.sum() <= 80, (r, c, letter)  # a glyph's pixels, not a fill
            assert has_colour(cell, UMBRELLA_RGB["BGRY".index(letter)])


def test_plate_spaces_carry_the_letters_of_their_colours() -> None:
    from umbrella_env.core.image import _PALETTE, _SPACE, _TEXT, _plate_origin, _space_xy

    d = start_dict(2, plate_level=2)  # 'G/Y' and 'B/R': two letters in a space
    img = render_rgb(d)
    y0, _, x0, _ = image_regions(2)["seat0"]
    qx, qy = _plate_origin((x0, y0))
    dark = _PALETTE[_TEXT]
    for k, text in enumerate(("R", "B", "G/Y", "Y", "G", "Y", "G", "R", "B/R", "B")):
        x, y = _space_xy(qx, qy, k)
        space = img[y : y + _SPACE, x : x + _SPACE]
        drawn = int(np.all(space == dark, axis=-1).sum())
        assert 10 * len(text.split("/")) <= drawn <= 50 * len(text.split("/")), (k, text, drawn)


@pytest.mark.parametrize("num_players", [1, 3])
def test_zone_dots_carry_their_letters(num_players: int) -> None:
    """The zone dots were told apart by hue alone (WCAG 1.4.1): each dot shows its letter in
    the stage cells' ink, so each tray holds exactly the glyph pixels of its umbrellas."""
    from umbrella_env.core.image import _CELL_LETTER, _DOT_GLYPHS, _PALETTE, _TRAY_GAP, _TRAY_T
    from umbrella_env.core.serialize import zone_counts

    d = start_dict(num_players)
    zone = d["zones"]["top" if num_players == 1 else "central"]
    img = render_rgb(d)
    y0, _, x0, x1 = image_regions(num_players)["seat0.stage"]
    tray = img[y0 - _TRAY_GAP - _TRAY_T : y0 - _TRAY_GAP, x0:x1]
    counts = zone_counts(zone)
    for ink in set(_CELL_LETTER):
        wanted = sum(n * int(_DOT_GLYPHS[c].sum()) for c, n in enumerate(counts) if _CELL_LETTER[c] == ink)
        assert int(np.all(tray == _PALETTE[ink], axis=-1).sum()) == wanted


def test_a_game_object_is_drawn_as_its_dict_by_every_renderer() -> None:
    """Review of the notebook user: state_to_svg took a SingleGame, render_rgb refused it."""
    from umbrella_env.core.render import render_text
    from umbrella_env.core.single import SingleGame
    from umbrella_env.core.svg import state_to_svg

    game = SingleGame.new(GameConfig(num_players=2), 123)
    np.testing.assert_array_equal(render_rgb(game), render_rgb(game.to_dict()))
    assert render_text(game, seat=0, layout="lines") == render_text(game.to_dict(), seat=0, layout="lines")
    assert state_to_svg(game) == state_to_svg(game.to_dict())
