"""The Gymnasium solo env passes Gymnasium's checker and follows its conventions."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import umbrella_env  # noqa: F401 - registers umbrella_env/Solo-v0
from umbrella_env.core.errors import ActionError, IllegalActionError


@pytest.mark.parametrize("plate_level", [1, 2, 3, 4])
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


def test_rgb_array_render_changes_with_the_state() -> None:
    env = gym.make("umbrella_env/Solo-v0", render_mode="rgb_array")
    obs, info = env.reset(seed=5)
    first = env.render()
    assert first.dtype == np.uint8 and first.shape[2] == 3
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert not np.array_equal(first, env.render())
