"""The Gymnasium solo env passes Gymnasium's checker and follows its conventions."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import umbrella_env  # noqa: F401 - registers umbrella_env/Solo-v0
from umbrella_env.core.errors import ActionError, IllegalActionError, StateError
from umbrella_env.core.image import render_rgb
from umbrella_env.core.svg import state_to_svg


@pytest.mark.parametrize("plate_level", [1, 2, 3, 4])
@pytest.mark.filterwarnings("ignore:.*is not legal in phase:UserWarning")  # the checker plays random ids
def test_gymnasium_check_env(plate_level: int) -> None:
    env = gym.make("umbrella_env/Solo-v0", plate_level=plate_level)
    check_env(env.unwrapped, skip_render_check=True)


def test_dense_rewards_sum_to_the_final_score_and_masks_are_legal() -> None:
    env = gym.make("umbrella_env/Solo-v0", plate_level=4)
    rng = np.random.default_rng(0)
    for episode in range(5):
        obs, info = env.reset(seed=episode)
        total, done = 0.0, False
        while not done:
            mask = info["action_mask"]
            assert mask.dtype == np.int8 and mask.any()
            np.testing.assert_array_equal(mask.astype(bool), env.unwrapped.action_masks())
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            total += reward
            done = terminated or truncated
        assert total == info["score"]


def test_same_seed_same_episode() -> None:
    def rollout(seed: int) -> list[bytes]:
        env = gym.make("umbrella_env/Solo-v0")
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(1)
        out = [obs.tobytes()]
        for _ in range(15):
            obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            out.append(obs.tobytes() + np.float64(r).tobytes())
            if term or trunc:
                break
        return out

    assert rollout(3) == rollout(3)
    assert rollout(3) != rollout(4)


def test_illegal_actions() -> None:
    env = gym.make("umbrella_env/Solo-v0", illegal_action="raise")
    obs, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="not legal in phase 'slide'"):
        env.step(illegal)
    with pytest.raises(ActionError):
        env.step(-3)
    loose = gym.make("umbrella_env/Solo-v0").unwrapped
    obs, info = loose.reset(seed=0)
    with pytest.warns(UserWarning, match="not legal"):
        _, reward, terminated, _, _ = loose.step(illegal)
    assert terminated and reward == -1.0


def test_a_refused_first_reset_leaves_the_next_reset_and_step_working() -> None:
    """Gymnasium's PassiveEnvChecker (on by default) marked its first reset checked before the
    env refused it; the first step after a good reset was then played and failed inside the
    checker with a TypeError, the move made but no transition returned."""
    from umbrella_env.core.errors import ConfigError

    for bad in ({"seed": -1}, {"options": {"state": {}}}):
        env = gym.make("umbrella_env/Solo-v0")
        with pytest.raises((ConfigError, StateError)):
            env.reset(**bad)
        _, info = env.reset(seed=0)
        action = int(np.flatnonzero(info["action_mask"])[0])
        obs, reward, terminated, truncated, info = env.step(action)
        again = gym.make("umbrella_env/Solo-v0")
        again.reset(seed=0)
        np.testing.assert_array_equal(obs, again.step(action)[0])
        assert env.unwrapped.get_state() == again.unwrapped.get_state()


INFO_KEYS = {"action_mask", "score", "phase", "illegal_action"}


def test_every_info_has_the_same_keys_as_dataset_recorders_require() -> None:
    """Minari's ``DataCollector(record_infos=True)`` refuses a step whose info has other keys
    than the reset's: ``illegal_action`` was there only in the step an illegal action ended."""
    env = gym.make("umbrella_env/Solo-v0")
    _, info = env.reset(seed=0)
    infos = [info]
    rng = np.random.default_rng(0)
    done = False
    while not done:
        *_, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        infos.append(info)
        done = terminated or truncated
    _, info = env.reset(seed=1)
    with pytest.warns(UserWarning, match="not legal"):
        *_, ended_info = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    _, loaded_info = env.reset(options={"state": env.unwrapped.get_state()})  # the illegal end, from its state
    assert all(i.keys() == INFO_KEYS for i in [*infos, info, ended_info, loaded_info])
    assert [i["illegal_action"] for i in infos] == [False] * len(infos)
    assert ended_info["illegal_action"] is True and loaded_info["illegal_action"] is True
    assert info["illegal_action"] is False


def test_the_spec_round_trips_through_json_with_a_component_set() -> None:
    """``EnvSpec.to_json`` writes the component set as its dict; ``gymnasium.make`` of the spec
    read back refused it ("components must be a ComponentSet")."""
    from dataclasses import replace

    from gymnasium.envs.registration import EnvSpec

    from umbrella_env.core.components import default_components

    custom = replace(default_components(), solo_tokens=5)
    for components in (default_components(), custom):
        env = gym.make("umbrella_env/Solo-v0", components=components)
        again = gym.make(EnvSpec.from_json(env.spec.to_json()))
        assert again.unwrapped.config.components == components
        assert (
            again.unwrapped.config.components
            is gym.make(EnvSpec.from_json(env.spec.to_json())).unwrapped.config.components
        )
        np.testing.assert_array_equal(env.reset(seed=3)[0], again.reset(seed=3)[0])
    assert gym.make("umbrella_env/Solo-v0", components=custom.to_dict()).unwrapped.config.components == custom
    with pytest.raises(ValueError, match=r"components: unknown key\(s\) \['bogus'\]"):
        gym.make("umbrella_env/Solo-v0", components={"bogus": 1})
    with pytest.raises(ValueError, match=r"ComponentSet \(see load_components\) or its dict form .*got list"):
        gym.make("umbrella_env/Solo-v0", components=[custom])


@pytest.mark.parametrize("mode", ["ansi", "rgb_array", "human"])
def test_a_game_an_illegal_action_ended_is_drawn_over(mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The picture and the text showed the game still in play (phase slide, "TO ACT"), and
    human mode printed nothing on that step, while the observation said game_over."""
    env = gym.make("umbrella_env/Solo-v0", render_mode=mode).unwrapped
    _, info = env.reset(seed=0)
    before = env.render()
    capsys.readouterr()
    with pytest.warns(UserWarning, match="not legal"):
        env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    shown = capsys.readouterr().out if mode == "human" else env.render()
    if mode == "rgb_array":
        assert not np.array_equal(shown, before)
        core = {k: v for k, v in env.get_state().items() if k != "illegal_action"}
        core.update(phase="slide", terminated=False)  # the game before the illegal action
        np.testing.assert_array_equal(shown, render_rgb(core, over=True))  # drawn over: "Game over"
        assert "Game over" in state_to_svg(core, over=True) and "Game over" not in state_to_svg(core)
        with pytest.raises(TypeError, match="over must be a bool, got 'no'"):
            render_rgb(core, over="no")  # type: ignore[arg-type]
    else:
        assert "status: terminated" in shown and "phase: game_over" in shown and "status: in play" not in shown
        assert "game over: seat 0 played" in shown and shown.endswith("and lost\n" if mode == "human" else "and lost")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="reward_mode"):
        gym.make("umbrella_env/Solo-v0", reward_mode="win")
    with pytest.raises(ValueError, match="plate_level"):
        gym.make("umbrella_env/Solo-v0", plate_level=9)


def test_ansi_render_and_state_round_trip() -> None:
    env = gym.make("umbrella_env/Solo-v0", render_mode="ansi").unwrapped
    obs, info = env.reset(seed=2)
    assert "solo" in env.render() and "phase: slide" in env.render()
    d = env.get_state()
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert env.get_state() != d
    env.set_state(d)
    assert env.get_state() == d


def test_reset_with_the_state_option_passes_through_gymnasium_make() -> None:
    """gymnasium.make's wrappers forward no set_state, and its order enforcing would refuse a
    step after env.unwrapped.set_state: reset(options={"state": d}) is the way through."""
    src = gym.make("umbrella_env/Solo-v0").unwrapped
    obs, info = src.reset(seed=6)
    for _ in range(7):
        obs, _, _, _, info = src.step(int(np.flatnonzero(info["action_mask"])[-1]))
    d = src.get_state()
    env = gym.make("umbrella_env/Solo-v0")
    got, got_info = env.reset(seed=8, options={"state": d})
    assert np.array_equal(got, obs) and np.array_equal(got_info["action_mask"], info["action_mask"])
    assert got_info["score"] == info["score"] and env.unwrapped.get_state() == d
    a = int(np.flatnonzero(info["action_mask"])[0])
    assert np.array_equal(env.step(a)[0], src.step(a)[0])
    with pytest.raises(StateError):
        env.reset(seed=3, options={"state": dict(d, plate_level=2)})
    assert env.unwrapped.get_state() == src.get_state()  # the refused reset changed nothing, its seed included
    env.reset()  # no deal was drawn for the state: this is the deal of reset(seed=8)
    plain = gym.make("umbrella_env/Solo-v0")
    plain.reset(seed=8)
    assert env.unwrapped.get_state() == plain.unwrapped.get_state()


def test_rgb_array_render_changes_with_the_state() -> None:
    env = gym.make("umbrella_env/Solo-v0", render_mode="rgb_array")
    obs, info = env.reset(seed=5)
    first = env.render()
    assert first.dtype == np.uint8 and first.shape[2] == 3
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert not np.array_equal(first, env.render())


def _position_with_a_forced_validation() -> tuple[dict, int]:
    """A solo position and a slide after which exactly one validation is legal."""
    from umbrella_env.core import actions as A
    from umbrella_env.core import batch_io
    from umbrella_env.core import engine as E
    from umbrella_env.core.config import GameConfig
    from umbrella_env.tools.differential import completing_slides, policy_actions

    state = E.init(GameConfig(num_players=1, plate_level=1), 64, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        idx = np.flatnonzero(state.phase == A.PHASE_SLIDE)
        good = completing_slides(state, idx)
        for row, b in enumerate(idx):
            for a in np.flatnonzero(good[row]):
                trial = E.take(state, [b])
                E.step_unchecked(trial, np.array([a]))
                if E.legal_action_mask(trial)[0].sum() == 1:
                    return batch_io.to_dict(state, int(b)), int(a)
        E.step(state, policy_actions(state, rng, 0.5))
        E.reset(state, np.flatnonzero(state.done), rng)
    raise AssertionError("no forced validation found")


def test_auto_forced_takes_single_option_decisions() -> None:
    d, slide = _position_with_a_forced_validation()
    plain = gym.make("umbrella_env/Solo-v0", plate_level=1).unwrapped
    plain.reset(seed=0)
    plain.set_state(d)
    _, reward_plain, _, _, info_plain = plain.step(slide)
    assert info_plain["action_mask"].sum() == 1 and info_plain["phase"] == "validate"
    forced = gym.make("umbrella_env/Solo-v0", plate_level=1, auto_forced=True).unwrapped
    forced.reset(seed=0)
    forced.set_state(d)
    _, reward_forced, _, _, info_forced = forced.step(slide)
    assert info_forced["phase"] != "validate" or info_forced["action_mask"].sum() > 1
    # The forced validation's token (2 points at least) is paid in the same step.
    assert reward_forced >= reward_plain + 2
    assert info_forced["score"] == forced.get_state()["scores"][0]


def test_cloudpickle_round_trip() -> None:
    import cloudpickle

    env = gym.make("umbrella_env/Solo-v0").unwrapped
    obs, info = env.reset(seed=1)
    copy = cloudpickle.loads(cloudpickle.dumps(env))
    a = int(np.flatnonzero(info["action_mask"])[0])
    np.testing.assert_array_equal(env.step(a)[0], copy.step(a)[0])
    assert env.get_state() == copy.get_state()


def test_stepping_a_finished_episode_asks_for_reset() -> None:
    env = gym.make("umbrella_env/Solo-v0").unwrapped
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        done = term or trunc
    assert not info["action_mask"].any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        gym.make("umbrella_env/Solo-v0").unwrapped.step(0)


@pytest.mark.parametrize("bad", [1.5, "slide", None, 10_000, -1])
def test_actions_of_the_wrong_type_or_range_are_refused(bad) -> None:
    env = gym.make("umbrella_env/Solo-v0").unwrapped
    env.reset(seed=0)
    with pytest.raises(ActionError):
        env.step(bad)


def _illegal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask == 0)[0])


def test_illegal_action_warnings_point_at_the_users_line_through_every_wrapper() -> None:
    """The env is reached through gym.make's checkers, PettingZoo's wrappers or the vector
    env; the warning names the caller's file, not a wrapper inside a library."""
    solo = gym.make("umbrella_env/Solo-v0")
    _, info = solo.reset(seed=0)
    aec = umbrella_env.env(num_players=2)
    aec.reset(seed=0)
    vec = gym.make_vec("umbrella_env/Solo-v0", num_envs=2, vectorization_mode="vector_entry_point")
    _, vinfo = vec.reset(seed=0)
    calls = [
        lambda: solo.step(_illegal(info["action_mask"])),
        lambda: aec.step(_illegal(aec.observe(aec.agent_selection)["action_mask"])),
        lambda: vec.step(np.array([_illegal(row) for row in vinfo["action_mask"]])),
        solo.render,  # no render_mode
    ]
    for call in calls:
        with pytest.warns(UserWarning) as record:
            call()
        assert [w.filename for w in record] == [__file__]


def test_warnings_point_at_the_user_also_when_the_package_is_imported_through_a_symlink(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    link = tmp_path / "link"
    link.symlink_to(Path(__file__).resolve().parents[1], target_is_directory=True)
    script = tmp_path / "user.py"
    script.write_text(
        "import warnings, numpy as np, gymnasium as gym, umbrella_env\n"
        "warnings.simplefilter('always')\n"
        "env = gym.make('umbrella_env/Solo-v0'); _, info = env.reset(seed=0)\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    env.step(int(np.flatnonzero(info['action_mask'] == 0)[0]))\n"
        "print(umbrella_env.__file__); print(seen[0].filename)\n"
    )
    out = subprocess.run(
        [sys.executable, str(script)],
        env={**__import__("os").environ, "PYTHONPATH": str(link)},
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    package, filename = out.stdout.split()
    assert package.startswith(str(link)) and filename == str(script)
