"""The core's public functions refuse bad arguments with a clear error, and a refused call
changes nothing (a review found each of these reaching NumPy, or silently reading or writing
the wrong game)."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.components import components_from_dict, default_components
from umbrella_env.core.config import MAX_TURNS_LIMIT, GameConfig
from umbrella_env.core.errors import ConfigError, StateError, UmbrellaError
from umbrella_env.core.image import image_regions
from umbrella_env.core.observation import observe
from umbrella_env.core.reference import ReferenceGame
from umbrella_env.core.render import render_text
from umbrella_env.core.serialize import state_from_json, state_to_json, validate_state_dict
from umbrella_env.core.single import SingleGame
from umbrella_env.core.svg import state_to_svg


def _snapshot(state: E.BatchState) -> list[dict[str, Any]]:
    return [batch_io.to_dict(state, b) for b in range(state.batch_size)]


@pytest.mark.parametrize("b", [True, -1, 3, 1.0, np.bool_(False)])
def test_single_game_refuses_a_batch_index_out_of_the_batch(b: Any) -> None:
    state = E.init(GameConfig(), 3, 0)
    before = _snapshot(state)
    with pytest.raises(IndexError, match=r"game index must be an int in \[0, 3\)"):
        SingleGame.new(GameConfig(), 9).to_batch(state, b)  # True used to overwrite every game
    with pytest.raises(IndexError, match=r"game index must be an int in \[0, 3\)"):
        SingleGame.from_batch(state, b)  # -1 used to read the last game
    assert _snapshot(state) == before


def test_take_and_put_refuse_masks_floats_and_out_of_range_indices() -> None:
    state = E.init(GameConfig(), 3, 0)
    before = _snapshot(state)
    for idx in ([True, False, True], [0.5], [3], [-1], [[0, 1]], True):
        with pytest.raises(IndexError, match="game indices"):
            E.take(state, idx)
        with pytest.raises(IndexError, match="game indices"):
            E.put(state, idx, E.init(GameConfig(), 1, 99))
    rebuilt = GameConfig(components=components_from_dict(default_components().to_dict()))  # equal, not the same
    with pytest.raises(ConfigError, match="another ComponentSet object"):
        E.put(state, [0], E.init(rebuilt, 1, 99))
    with pytest.raises(IndexError, match=r"1 slot\(s\) for the 2 game\(s\) of the source"):
        E.put(state, [0], E.init(GameConfig(), 2, 99))
    assert _snapshot(state) == before
    E.put(state, np.array([2]), E.take(state, [0]))  # the indices themselves still work
    assert batch_io.to_dict(state, 2) == before[0]
    pickled = pickle.loads(pickle.dumps(E.init(GameConfig(), 1, 99)))  # a pickled batch shares the set
    E.put(state, [1], pickled)
    assert batch_io.to_dict(state, 1) == batch_io.to_dict(pickled, 0)


def test_put_refuses_a_game_of_another_configuration() -> None:
    state = E.init(GameConfig(plate_level=1), 2, 0)
    before = _snapshot(state)
    for other in (GameConfig(plate_level=4), GameConfig(max_turns=50), GameConfig(num_players=3)):
        with pytest.raises(ConfigError, match="put: the source batch is configured as"):
            E.put(state, [0], E.init(other, 1, 1))
    assert _snapshot(state) == before


def test_a_turn_beyond_the_int32_counter_is_refused_before_the_load() -> None:
    config = GameConfig(max_turns=MAX_TURNS_LIMIT)
    d = batch_io.to_dict(E.init(config, 1, 0), 0)
    for key, value in (("turn", 2**33), ("max_turns", 2**40)):
        bad = {**d, key: value}
        with pytest.raises(StateError, match=key):
            validate_state_dict(bad)
        target = E.init(config, 2, 1)
        before = _snapshot(target)
        with pytest.raises(StateError):
            batch_io.load_dict(
                target, 0, bad
            )  # with max_turns 2**40 (a config now refused) it wrote half, then overflowed
        assert _snapshot(target) == before
        with pytest.raises(StateError):
            SingleGame.from_dict(bad)


@pytest.mark.parametrize(
    ("idx", "kwargs", "error", "message"),
    [
        ([2.9], {"keys": [1]}, IndexError, "game indices"),
        ([True], {"keys": [1]}, IndexError, "game indices"),
        ([-1], {"keys": [1]}, IndexError, "game indices"),
        ([0], {"keys": [1.7]}, ConfigError, "a game key must be an int"),
        ([0], {"keys": [True]}, ConfigError, "a game key must be an int"),
        ([0], {"keys": ["x"]}, ConfigError, "a game key must be an int"),
        ([0], {"keys": [2**64]}, ConfigError, "a game key must be an int"),
        ([0], {"keys": [1, 2]}, ConfigError, r"expected 1 game key\(s\)"),
        ([5], {"rng": np.random.default_rng(0)}, IndexError, "game indices"),
        ([0], {"rng": 5}, TypeError, "reset needs a numpy Generator"),
    ],
)
def test_reset_checks_its_indices_keys_and_generator(idx: Any, kwargs: dict, error: type, message: str) -> None:
    state = E.init(GameConfig(), 3, 0)
    before = _snapshot(state)
    with pytest.raises(error, match=message):
        E.reset(state, idx, **kwargs)
    assert _snapshot(state) == before


@pytest.mark.parametrize("key", [1.5, True, None, "abc", 2**64, -(2**63) - 1])
def test_single_game_new_refuses_a_key_that_is_not_a_64_bit_int(key: Any) -> None:
    with pytest.raises(ConfigError, match="game key"):
        SingleGame.new(GameConfig(), key)


@pytest.mark.parametrize("key", [-1, -(2**63), 2**64 - 1, np.uint64(2**64 - 1), np.int64(-5)])
def test_the_two_engines_deal_the_same_game_for_every_64_bit_key(key: Any) -> None:
    state = E.allocate(GameConfig(num_players=2), 1)
    E.reset(state, [0], keys=[key])
    assert SingleGame.new(GameConfig(num_players=2), key).to_dict() == batch_io.to_dict(state, 0)


def test_bad_seeds_and_generators_get_clear_errors() -> None:
    state = E.init(GameConfig(), 2, 0)
    with pytest.raises(TypeError, match="random_legal_actions needs a numpy Generator"):
        E.random_legal_actions(state, 5)
    for seed in (1.5, "abc", True):
        with pytest.raises(ConfigError, match="seed must be an int or None"):
            ReferenceGame.new(GameConfig(), seed)
    assert ReferenceGame.new(GameConfig(), np.int64(3)).to_dict() == ReferenceGame.new(GameConfig(), 3).to_dict()


def test_state_to_json_writes_a_game_of_a_custom_component_set() -> None:
    cs = components_from_dict({"supply": {"2": 15, "3": 17, "4": 22}})
    d = SingleGame.new(GameConfig(num_players=2, components=cs), 1).to_dict()
    with pytest.raises(StateError, match="supply"):
        state_to_json(d)  # checked against the built-in set, the supply is wrong
    assert state_from_json(state_to_json(d, components=cs), components=cs) == validate_state_dict(d, components=cs)


def test_the_shared_component_set_cannot_be_changed() -> None:
    cs = default_components()
    for change in (
        lambda: cs.supply.__setitem__(2, 200),
        lambda: cs.plates.pop(1),
        lambda: cs.layouts.clear(),
        lambda: cs.plates[4].powers.update(extra_turn=(1, 2)),
    ):
        with pytest.raises(TypeError, match="a component set cannot be changed"):
            change()
    assert E.init(GameConfig(num_players=2), 1, 0).supply.tolist() == [11]
    assert pickle.loads(pickle.dumps(cs)) == cs  # process pools still ship it


def test_single_game_reads_refuse_another_seats_slot_or_zone() -> None:
    g = SingleGame.new(GameConfig(num_players=2), 0)
    before = g.to_dict()
    for call, message in (
        (lambda: g.top_tile(0, 4), r"slot must be an int in \[0, 4\)"),  # used to read seat 1's slot 0
        (lambda: g.stack_height(0, 4), r"slot must be an int in \[0, 4\)"),
        (lambda: g.stage(-1), r"seat must be an int in \[0, 2\)"),
        (lambda: g.zone(-1), r"zone must be an int in \[0, 5\)"),
        (lambda: g.plate(2), r"seat must be an int in \[0, 2\)"),
        (lambda: g.personal_umbrellas(-1), r"seat must be an int in \[0, 2\)"),
        (lambda: g.score(1.0), r"seat must be an int in \[0, 2\)"),
        (lambda: g.discarded(4), r"colour must be an int in \[0, 4\)"),
        (lambda: g.set_hidden_tile(-1, 0, 0, 7), r"seat must be an int in \[0, 2\)"),
    ):
        with pytest.raises(IndexError, match=message):
            call()
    seat, slot, depth, code = g.hidden_tiles()[0]
    with pytest.raises(TypeError, match="set_hidden_tile: code must be an int, got 3.5"):
        g.set_hidden_tile(seat, slot, depth, 3.5)
    empty = next(k for k in range(4) if g.stack_height(0, k) == 0)
    with pytest.raises(ValueError, match=f"seat 0's slot {empty} holds no tile: nothing is hidden there"):
        g.set_hidden_tile(0, empty, 0, 7)  # it said "depths 0..-2 are under the top"
    assert g.to_dict() == before
    assert g.top_tile(np.int64(1), np.int8(0)) == g.top_tile(1, 0)  # NumPy ints are ints


def test_batched_observe_refuses_seats_that_are_not_one_int_per_game() -> None:
    state = E.init(GameConfig(num_players=2), 3, 0)
    for seats in (1.5, [True, False, True], [[0, 1, 0]]):
        with pytest.raises(ValueError, match="observer seats must be an int or 3 ints"):
            observe(state, seats)
    with pytest.raises(ValueError, match=r"expected one seat per game \(3\), got 2"):
        observe(state, [0, 1])
    assert np.array_equal(observe(state, np.int64(1)), observe(state, [1, 1, 1]))


def test_renderers_take_numpy_ints_and_refuse_what_they_cannot_draw() -> None:
    d = SingleGame.new(GameConfig(num_players=2), 0).to_dict()
    assert render_text(d, np.int64(0)) == render_text(d, 0)
    assert image_regions(np.int64(2)) == image_regions(2)
    with pytest.raises(ValueError, match="description: expected text without control characters"):
        state_to_svg(d, description="\x00x")
    assert "<desc>made by\ta test</desc>" in state_to_svg(d, description="made by\ta test")
    with pytest.raises(StateError, match="nested too deeply"):
        state_from_json("[" * 100_000 + "]" * 100_000)


def _bad_calls() -> dict[str, tuple[Any, type[Exception]]]:
    import gymnasium as gym

    import umbrella_env
    from umbrella_env.core.config import GameConfig
    from umbrella_env.core.single import SingleGame

    def started(make: Any) -> Any:
        env = make()
        env.reset(seed=0)
        return env

    vec = lambda **kw: gym.make_vec("umbrella_env/Solo-v0", num_envs=2, vectorization_mode="vector_entry_point", **kw)  # noqa: E731
    return {
        "a reward mode": (lambda: umbrella_env.env(reward_mode="x"), ValueError),
        "a flag": (lambda: umbrella_env.env(auto_forced=1), TypeError),
        "max_cycles": (lambda: umbrella_env.env(max_cycles=5), TypeError),
        "reset options": (lambda: umbrella_env.env().reset(options=[1]), TypeError),
        "an agent": (lambda: started(umbrella_env.env).observe("player_9"), ValueError),
        "an agent's space": (lambda: umbrella_env.env().observation_space("x"), ValueError),
        "a parallel step before reset": (lambda: umbrella_env.parallel_env().step({}), RuntimeError),
        "an autoreset mode": (lambda: vec(autoreset_mode="x"), ValueError),
        "a vector step before reset": (lambda: vec().step(np.zeros(2, dtype=np.int64)), RuntimeError),
        "a game index": (lambda: E.check_index(E.init(GameConfig(num_players=2), 1, 0), 9), IndexError),
        "an observer seat": (lambda: SingleGame.new(GameConfig(num_players=2), 0).observe(7), ValueError),
    }


@pytest.mark.parametrize("case", list(_bad_calls()))
def test_every_bad_argument_of_the_environment_library_is_an_umbrella_error(case: str) -> None:
    """core/errors.py says every error on bad input derives from UmbrellaError; an unknown
    reward mode, a flag that is not a bool, an unknown agent, a game index, a step before
    reset and more were plain ValueError / TypeError / IndexError / RuntimeError (env API
    audit, 2026-12-07).  Each still is one of those too, for code that catches them."""
    call, builtin = _bad_calls()[case]
    with pytest.raises(UmbrellaError) as info:
        call()
    kinds = [k for k in (ValueError, TypeError, IndexError, RuntimeError) if isinstance(info.value, k)]
    assert kinds == [builtin]  # the built-in error the call raised before, and only that one
