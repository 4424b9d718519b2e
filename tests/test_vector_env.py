"""The native vector env: Gymnasium conventions, equality with single envs, masks."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import umbrella_env  # noqa: F401 - registers umbrella_env/Solo-v0
from umbrella_env.core import engine as E
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import ActionError, ConfigError, IllegalActionError
from umbrella_env.envs.vector import UmbrellaSoloVectorEnv


def make_native(n: int, **kw):
    return gym.make_vec("umbrella_env/Solo-v0", num_envs=n, vectorization_mode="vector_entry_point", **kw)


def random_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in mask])


@pytest.mark.parametrize("plate_level, auto_forced", [(1, False), (4, False), (1, True), (4, True)])
def test_native_vector_env_equals_sync_vector_of_single_envs(plate_level: int, auto_forced: bool) -> None:
    """``auto_forced`` too: the native env refused it (a TypeError for an unexpected
    keyword, env API audit, 2026-12-07) while every single env took it."""
    n = 6
    native = make_native(n, plate_level=plate_level, auto_forced=auto_forced)
    sync = gym.make_vec(
        "umbrella_env/Solo-v0", num_envs=n, vectorization_mode="sync", plate_level=plate_level, auto_forced=auto_forced
    )
    assert native.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs_n, info_n = native.reset(seed=11)
    obs_s, info_s = sync.reset(seed=11)
    np.testing.assert_array_equal(obs_n, obs_s)
    rng = np.random.default_rng(0)
    episodes = single = 0
    for _ in range(120):
        np.testing.assert_array_equal(info_n["action_mask"], info_s["action_mask"])
        single += int((info_n["action_mask"].sum(axis=1) == 1).sum())  # a forced decision shown
        np.testing.assert_array_equal(info_n["score"], info_s["score"])
        assert info_n["phase"].tolist() == info_s["phase"].tolist()
        actions = random_actions(info_n["action_mask"], rng)
        obs_n, r_n, term_n, trunc_n, info_n = native.step(actions)
        obs_s, r_s, term_s, trunc_s, info_s = sync.step(actions)
        np.testing.assert_array_equal(obs_n, obs_s)
        np.testing.assert_array_equal(r_n, r_s)
        np.testing.assert_array_equal(term_n, term_s)
        np.testing.assert_array_equal(trunc_n, trunc_s)
        episodes += int(term_n.sum())
    assert episodes >= n  # several autoresets happened
    assert single == 0 or not auto_forced  # (solo rarely has one: play_forced_rows is tested at 2-4 players)


def test_spaces_masks_and_dtypes() -> None:
    env = make_native(4)
    obs, info = env.reset(seed=0)
    assert obs.shape == (4, env.single_observation_space.shape[0]) and obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (4, 968)
    np.testing.assert_array_equal(info["action_mask"].astype(bool), env.unwrapped.action_masks())
    assert env.action_space.shape == (4,)


def test_same_step_autoreset_reports_final_observation_and_score() -> None:
    env = UmbrellaSoloVectorEnv(num_envs=4, autoreset_mode="same_step", reward_mode="score")
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(1)
    seen = 0
    for _ in range(80):
        obs, reward, term, trunc, info = env.step(random_actions(info["action_mask"], rng))
        done = term | trunc
        if done.any():
            seen += int(done.sum())
            assert (info["_final_obs"] == done).all()
            np.testing.assert_array_equal(reward[done], info["final_score"][done])
            # The returned observation is already the new game's (turn 0, nothing on the plate).
            assert (env._state.turn[done] == 0).all()
            assert info["action_mask"][done].any(axis=1).all()
    assert seen > 0


def test_same_step_final_observations_equal_the_single_envs_last_ones() -> None:
    # Gymnasium's own vector env over the single env, in the same mode, is the reference for
    # what info["final_obs"] holds (the finished game's last observation, for bootstrapping).
    n = 4
    native = make_native(n, autoreset_mode="same_step")
    sync = gym.make_vec(
        "umbrella_env/Solo-v0", num_envs=n, vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
    )  # fmt: skip
    obs_n, info_n = native.reset(seed=21)
    obs_s, _ = sync.reset(seed=21)
    rng = np.random.default_rng(2)
    finals = 0
    for _ in range(100):
        actions = random_actions(info_n["action_mask"], rng)
        obs_n, _, term, trunc, info_n = native.step(actions)
        obs_s, _, term_s, trunc_s, info_s = sync.step(actions)
        np.testing.assert_array_equal(obs_n, obs_s)  # the new games' observations
        np.testing.assert_array_equal(term | trunc, term_s | trunc_s)
        if (term | trunc).any():  # SyncVectorEnv's layout: observations of the finished ones, None elsewhere
            assert info_n["final_obs"].dtype == info_s["final_obs"].dtype == object
            assert [o is None for o in info_n["final_obs"]] == [o is None for o in info_s["final_obs"]]
        for i in np.flatnonzero(term | trunc):
            np.testing.assert_array_equal(info_n["final_obs"][i], info_s["final_obs"][i])
            assert not np.array_equal(info_n["final_obs"][i], obs_n[i])
            # the last info too, under Gymnasium's key (code written for SyncVectorEnv reads it)
            assert info_n["_final_info"][i] and info_s["_final_info"][i]
            final_n, final_s = info_n["final_info"], info_s["final_info"]
            for key in ("action_mask", "score", "phase", "illegal_action"):
                assert final_n[f"_{key}"][i] and final_s[f"_{key}"][i]
                np.testing.assert_array_equal(final_n[key][i], final_s[key][i])
            finals += 1
    assert finals >= n


def assert_info_as_sync(native: dict, sync: dict, every_row: bool = False) -> None:
    """Every key of SyncVectorEnv's info is in the native one, with the same ``_key`` mask
    and the same values where the mask is set, or in ``every_row`` (final_info compared key
    by key, every row: its unfinished sub-envs' rows are SyncVectorEnv's zeros and None)."""
    assert set(sync) == set(native) or not every_row, f"{set(sync) ^ set(native)}"
    assert set(sync) <= set(native), f"missing {set(sync) - set(native)}"
    assert "illegal_action" in native and "illegal_action" in sync  # in every info, as every key
    for key in (k for k in sync if not k.startswith("_")):
        np.testing.assert_array_equal(native[f"_{key}"], sync[f"_{key}"], err_msg=key)
        rows = np.ones_like(sync[f"_{key}"]) if every_row else sync[f"_{key}"]
        if key == "final_info":
            assert_info_as_sync(native[key], sync[key], every_row=True)
        else:  # row by row: SyncVectorEnv's final_obs is an object array of observations
            for i in np.flatnonzero(rows):
                np.testing.assert_array_equal(native[key][i], sync[key][i], err_msg=f"{key}[{i}]")


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_info_keys_and_their_masks_are_sync_vector_envs(mode: AutoresetMode) -> None:
    """The native env's info had no ``_key`` masks: code reading SyncVectorEnv's
    ``info["_score"]`` failed on it."""
    n = 3
    native = make_native(n, autoreset_mode=mode)
    sync = gym.make_vec(
        "umbrella_env/Solo-v0", num_envs=n, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}
    )
    info_n = native.reset(seed=8)[1]
    assert_info_as_sync(info_n, sync.reset(seed=8)[1])
    rng = np.random.default_rng(3)
    ends = illegal_ends = 0
    for t in range(160):
        actions = random_actions(info_n["action_mask"], rng)
        live = info_n["action_mask"].any(axis=1)
        if t % 25 == 12 and live[t % n]:  # now and then an illegal action ends a game (the single env's info says so)
            actions[t % n] = int(np.flatnonzero(info_n["action_mask"][t % n] == 0)[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the illegal action's warning, from both envs
            *_, term, trunc, info_n = native.step(actions)
            *_, info_s = sync.step(actions)
        assert_info_as_sync(info_n, info_s)
        ends += int((term | trunc).sum())
        ended_info = info_n["final_info"] if "final_info" in info_n else info_n  # same_step: the last info
        illegal_ends += int(ended_info["illegal_action"].sum())
        if t % 40 == 39:
            mask = np.array([True, False, t % 80 == 39])
            info_n = native.reset(options={"reset_mask": mask})[1]
            info_s = sync.reset(options={"reset_mask": mask})[1]
            assert_info_as_sync(info_n, info_s)
            assert (info_n["_score"] == mask).all()  # the others' rows hold their current values:
            np.testing.assert_array_equal(info_n["action_mask"][~mask], native.unwrapped.action_masks()[~mask])
    assert ends > illegal_ends >= 4
    native.close()
    sync.close()


def test_seeding_reproducible_and_distinct() -> None:
    a, _ = make_native(3).reset(seed=5)
    b, _ = make_native(3).reset(seed=5)
    c, _ = make_native(3).reset(seed=6)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_per_env_seeds_take_any_sequence_of_ints_but_not_text_or_bytes() -> None:
    # only lists, tuples and arrays were read as one seed per env; a range was refused
    listed, _ = make_native(3).reset(seed=[4, 5, 6])
    for same in ((4, 5, 6), range(4, 7), np.arange(4, 7), [4, 5, np.int64(6)]):
        np.testing.assert_array_equal(make_native(3).reset(seed=same)[0], listed)
    for text in ("456", b"\x04\x05\x06", bytearray(b"\x04\x05\x06"), memoryview(b"\x04\x05\x06")):
        with pytest.raises(ConfigError, match="seed must be None or a non-negative int, got"):
            make_native(3).reset(seed=text)


def test_every_view_of_the_games_before_the_first_reset_is_refused() -> None:
    # Before reset() the batch holds zeros, not a position: a picture, a state dict or a
    # mask of it would be garbage (an all-False mask, a dict no env can load).
    env = make_native(2, render_mode="ansi")
    for call, name in (
        (env.render, "render"),
        (lambda: env.get_state(0), "get_state"),
        (env.action_masks, "action_masks"),
    ):
        with pytest.raises(RuntimeError, match=f"call reset\\(\\) before {name}\\(\\)"):
            call()
    env.reset(seed=0)
    assert "--- env 1 ---" in env.render() and env.action_masks().any(axis=1).all()
    assert env.get_state(1)["phase"] == "slide"


def test_rgb_array_pictures_equal_sync_vector_envs() -> None:
    native = make_native(3, render_mode="rgb_array")
    sync = gym.make_vec("umbrella_env/Solo-v0", num_envs=3, vectorization_mode="sync", render_mode="rgb_array")
    assert native.metadata["render_fps"] == sync.metadata["render_fps"]
    rng = np.random.default_rng(2)
    _, info = native.reset(seed=8)
    sync.reset(seed=8)
    for _ in range(3):
        for a, b in zip(native.render(), sync.render(), strict=True):
            np.testing.assert_array_equal(a, b)
        actions = random_actions(info["action_mask"], rng)
        _, _, _, _, info = native.step(actions)
        sync.step(actions)


def test_bad_input() -> None:
    env = make_native(3, illegal_action="raise")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(3, int))
    obs, info = env.reset(seed=0)
    with pytest.raises(ActionError, match=r"shape \(3,\)"):
        env.step(np.zeros(2, int))
    with pytest.raises(ActionError, match="integer"):
        env.step(np.zeros(3))
    with pytest.raises(ActionError, match="out of range"):
        env.step(np.array([0, 5000, 0]))
    illegal = np.array([int(np.flatnonzero(row == 0)[0]) for row in info["action_mask"]])
    with pytest.raises(IllegalActionError, match="not legal"):
        env.step(illegal)
    with pytest.raises(ValueError, match="num_envs"):
        UmbrellaSoloVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="autoreset_mode"):
        UmbrellaSoloVectorEnv(num_envs=2, autoreset_mode="later")
    with pytest.raises(ValueError, match="AutoresetMode.DISABLED: .*use vectorization_mode='sync'"):
        UmbrellaSoloVectorEnv(num_envs=2, autoreset_mode=AutoresetMode.DISABLED)  # was "got 'Disabled'"
    with pytest.raises(TypeError, match="options must be a dict or None, got int"):
        env.reset(seed=0, options=5)


def test_an_unsigned_action_out_of_range_is_named_as_given() -> None:
    env = make_native(2)
    env.reset(seed=0)
    with pytest.raises(ActionError, match=f"env 0: action id {2**64 - 1} is out of range"):  # was "-1"
        env.step(np.array([2**64 - 1, 0], dtype=np.uint64))
    # the core named it -1 (its int64 copy), and took it as -1, "leave this game", for a
    # finished game (the SB3 adapter: tests/test_sb3.py)
    state = E.init(GameConfig(num_players=2), 2, seed=0)
    state.truncated[0] = True
    with pytest.raises(ActionError, match=f"game 0: action id {2**64 - 1} is out of range"):
        E.step(state, np.array([2**64 - 1, 0], dtype=np.uint64))


def test_a_vector_env_of_one_takes_an_array_not_a_scalar() -> None:
    """The shared batch check took a scalar for one game, which the core's step accepts; the
    vector env's action space is an array ([1])."""
    env = make_native(1)
    _, info = env.reset(seed=0)
    action = int(np.flatnonzero(info["action_mask"][0])[0])
    with pytest.raises(ActionError, match=r"shape \(1,\), got int64 array of shape \(\)"):
        env.step(np.int64(action))
    env.step(np.array([action]))


def test_gymnasium_autoreset_enum_names_the_same_modes() -> None:
    for mode, name in ((AutoresetMode.NEXT_STEP, "next_step"), (AutoresetMode.SAME_STEP, "same_step")):
        for given in (mode, name):
            env = UmbrellaSoloVectorEnv(num_envs=2, autoreset_mode=given)
            # the attribute too, as SyncVectorEnv's (TorchRL's GymWrapper read it: AttributeError)
            assert env.metadata["autoreset_mode"] == env.autoreset_mode == mode
            sync = gym.make_vec(
                "umbrella_env/Solo-v0", num_envs=2, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}
            )
            assert sync.autoreset_mode == env.autoreset_mode


@pytest.mark.parametrize("call", ["call", "get_attr", "set_attr"])
def test_sync_vector_envs_sub_env_calls_are_refused_naming_what_to_use(call: str) -> None:
    env = gym.make_vec("umbrella_env/Solo-v0", num_envs=2, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    before = env.unwrapped.action_masks()
    args = ("reward_mode", "score") if call == "set_attr" else ("action_masks",)
    with pytest.raises(NotImplementedError, match=rf"^{call}\('.*rows of one batch.*action_masks\(\).*'sync'"):
        getattr(env.unwrapped, call)(*args)
    np.testing.assert_array_equal(env.unwrapped.action_masks(), before)
    assert env.unwrapped.reward_mode == "dense"


def test_editing_the_returned_mask_cannot_change_what_step_accepts() -> None:
    env = make_native(2, illegal_action="raise")
    _, info = env.reset(seed=0)
    mask = info["action_mask"]
    illegal = np.array([int(np.flatnonzero(row == 0)[0]) for row in mask])
    legal = np.array([int(np.flatnonzero(row)[0]) for row in mask])
    mask[:] = 1  # e.g. a training loop masking logits in place
    with pytest.raises(IllegalActionError, match="not legal"):
        env.step(illegal)
    _, info = env.reset(seed=0)
    info["action_mask"][:] = 0
    env.step(legal)  # still legal: the env judged with its own mask
    assert env.action_masks().any(axis=1).all()


def test_illegal_action_in_loss_mode_ends_only_that_episode() -> None:
    env = UmbrellaSoloVectorEnv(num_envs=3)
    obs, info = env.reset(seed=0)
    actions = np.array([int(np.flatnonzero(row)[0]) for row in info["action_mask"]])
    actions[1] = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    with pytest.warns(UserWarning, match="env 1"):
        obs, reward, term, trunc, info = env.step(actions)
    assert term.tolist() == [False, True, False] and reward[1] == -1.0
    assert not info["action_mask"][1].any()
    assert info["phase"][1] == "game_over" and "game_over" not in (info["phase"][0], info["phase"][2])


def test_async_vector_env_over_the_single_env() -> None:
    env = gym.make_vec("umbrella_env/Solo-v0", num_envs=2, vectorization_mode="async")
    try:
        obs, info = env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in range(30):
            obs, reward, term, trunc, info = env.step(random_actions(info["action_mask"], rng))
        assert obs.shape == (2, 899)
    finally:
        env.close()


def test_vector_env_steps_all_games_in_one_core_call(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = E.step_unchecked

    def counting(state, actions):
        calls.append(state.batch_size)
        return original(state, actions)

    monkeypatch.setattr(E, "step_unchecked", counting)
    env = UmbrellaSoloVectorEnv(num_envs=64)
    obs, info = env.reset(seed=0)
    env.step(random_actions(info["action_mask"], np.random.default_rng(0)))
    assert calls == [64]


def test_reset_mask_resets_only_the_masked_sub_envs_as_sync_does() -> None:
    """options={"reset_mask": ...} used to be ignored: every sub-env was reset, drawing from
    its seed stream."""
    runs = {}
    for mode in ("sync", "vector_entry_point"):
        v = gym.make_vec("umbrella_env/Solo-v0", num_envs=3, vectorization_mode=mode)
        obs, info = v.reset(seed=4)
        obs, *_ = v.step(np.array([np.flatnonzero(m)[0] for m in info["action_mask"]]))
        mask = np.array([True, False, True])
        after, _ = v.reset(options={"reset_mask": mask})
        assert np.array_equal(after[1], obs[1]) and not np.array_equal(after[0], obs[0])
        again, _ = v.reset(seed=[9, None, None], options={"reset_mask": np.array([False, True, False])})
        runs[mode] = (after, again)
        v.close()
    assert all(np.array_equal(a, b) for a, b in zip(runs["sync"], runs["vector_entry_point"]))
    env = UmbrellaSoloVectorEnv(num_envs=2)
    with pytest.raises(RuntimeError, match="call reset\\(\\) before options\\['reset_mask'\\]"):
        env.reset(options={"reset_mask": np.array([True, False])})
    env.reset(seed=0)
    for bad, message in (
        ([True, False], "must be a bool NumPy array of shape \\(2,\\)"),
        (np.array([1, 0]), "must be a bool NumPy array"),
        (np.array([False, False]), "at least one sub-env"),
    ):
        with pytest.raises(ValueError, match=message):
            env.reset(options={"reset_mask": bad})
    before = env.get_state(0)
    with pytest.raises(ValueError, match="options\\['state'\\] starts a single-game env"):  # not silently ignored
        env.reset(seed=3, options={"state": before})
    assert env.get_state(0) == before


def test_a_step_limit_is_refused_with_the_argument_named() -> None:
    with pytest.raises(ValueError, match="max_episode_steps=5: the native vector env limits episodes in whole turns"):
        gym.make_vec("umbrella_env/Solo-v0", num_envs=2, vectorization_mode="vector_entry_point", max_episode_steps=5)


def test_reset_mask_keeps_the_observation_of_a_sub_env_an_illegal_action_ended() -> None:
    runs = []
    for mode in ("sync", "vector_entry_point"):
        v = gym.make_vec("umbrella_env/Solo-v0", num_envs=2, vectorization_mode=mode, illegal_action="loss")
        _, info = v.reset(seed=1)
        legal = np.flatnonzero(info["action_mask"][1])[0]
        illegal = np.flatnonzero(info["action_mask"][0] == 0)[0]
        with pytest.warns(UserWarning):
            obs, _, terminated, *_ = v.step(np.array([illegal, legal]))
        assert terminated[0]
        after, _ = v.reset(options={"reset_mask": np.array([False, True])})
        assert np.array_equal(after[0], obs[0])  # the ended game's observation, as the step returned it
        runs.append(after)
        v.close()
    assert np.array_equal(runs[0], runs[1])


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_play_forced_rows_takes_each_games_forced_decisions_as_play_forced(num_players: int) -> None:
    """The native vector env's ``auto_forced`` (:func:`play_forced_rows`) against the single
    envs' (:func:`play_forced`), game by game, on batches where forced decisions happen."""
    from umbrella_env.core import batch_io
    from umbrella_env.core import engine as E
    from umbrella_env.core.config import GameConfig
    from umbrella_env.core.single import SingleGame
    from umbrella_env.envs.common import play_forced, play_forced_rows

    config, n = GameConfig(num_players=num_players), 6
    keys = np.arange(100, 100 + n, dtype=np.uint64)
    state = E.allocate(config, n)
    E.reset(state, np.arange(n), keys=keys)
    games = [SingleGame.new(config, int(k)) for k in keys]
    rng, forced, held = np.random.default_rng(num_players), 0, 0
    while not state.done.all():  # forced decisions (validations) come late in a game
        mask = E.legal_action_mask(state)
        acts = random_actions(mask, rng)
        acts[state.done] = -1
        E.step_unchecked(state, acts)
        rows = rng.random(n) < 0.8  # some games held back: their forced decisions wait
        play_forced_rows(state, rows)
        for b, game in enumerate(games):
            if acts[b] >= 0:
                game.step(int(acts[b]))
                if rows[b]:
                    forced += play_forced(game)
                else:
                    held += int(len(game.legal_actions()) == 1 and not game.done)
            assert batch_io.to_dict(state, b) == game.to_dict()
    assert forced > 0 and held > 0


@pytest.mark.parametrize("auto_forced", [False, True])
def test_auto_forced_steps_a_forced_position_as_the_single_env(auto_forced: bool) -> None:
    """A sub-env at a position whose slide leaves one legal validation: with
    ``auto_forced`` the native step takes it (reward, score, observation and mask as the
    single env's), without it the mask shows the one option (diff review, 2026-12-07:
    random solo play has almost no forced decision, so the sync comparison could not fail)."""
    from tests.test_solo_env import _position_with_a_forced_validation
    from umbrella_env.core import batch_io

    d, slide = _position_with_a_forced_validation()
    single = gym.make("umbrella_env/Solo-v0", plate_level=1, auto_forced=auto_forced).unwrapped
    single.reset(seed=0)
    single.set_state(d)
    obs_1, reward_1, _, _, info_1 = single.step(slide)
    vec = make_native(3, plate_level=1, auto_forced=auto_forced).unwrapped
    _, info = vec.reset(seed=0)
    batch_io.load_dict(vec._state, 1, d)  # the position, in the middle of a batch
    vec._scores[1] = d["scores"][0]  # the score the step's reward counts from
    vec._update_mask()
    actions = np.array([np.flatnonzero(info["action_mask"][0])[0], slide, np.flatnonzero(info["action_mask"][2])[0]])
    obs, reward, _, _, info = vec.step(actions)
    np.testing.assert_array_equal(obs[1], obs_1)
    assert reward[1] == reward_1 and info["score"][1] == info_1["score"]
    np.testing.assert_array_equal(info["action_mask"][1], info_1["action_mask"])
    assert (info["action_mask"][1].sum() == 1) == (not auto_forced)
