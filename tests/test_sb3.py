"""Stable-Baselines3 / sb3-contrib integration (the ``train`` extra).

Marked ``train``: deselect with ``-m "not train"`` on a machine without torch.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import umbrella_env  # noqa: F401 - registers umbrella_env/Solo-v0

pytestmark = pytest.mark.train


def MaskablePPO(*args, **kwargs):  # noqa: N802 - imported lazily so "-m 'not train'" needs no torch
    from sb3_contrib import MaskablePPO as cls

    return cls(*args, **kwargs)


def _load_maskable(path, **kwargs):
    from sb3_contrib import MaskablePPO as cls

    return cls.load(path, **kwargs)


def check_env(*args, **kwargs):
    from stable_baselines3.common.env_checker import check_env as fn

    return fn(*args, **kwargs)


def UmbrellaSB3VecEnv(*args, **kwargs):  # noqa: N802
    from umbrella_env.envs.sb3 import UmbrellaSB3VecEnv as cls

    return cls(*args, **kwargs)


def test_sb3_check_env_on_the_solo_env() -> None:
    with pytest.warns(UserWarning):  # check_env steps random (often illegal) actions
        check_env(gym.make("umbrella_env/Solo-v0").unwrapped, warn=True)


def test_sb3_vec_env_refuses_a_state_option_it_would_ignore() -> None:
    env = UmbrellaSB3VecEnv(num_envs=2)
    env.seed(1)
    first = env.reset()
    state = gym.make("umbrella_env/Solo-v0").unwrapped
    state.reset(seed=9)
    for options in ({"state": state.get_state()}, [{}, {"state": state.get_state()}]):
        with pytest.raises(ValueError, match="options\\['state'\\] starts a single-game env .*UmbrellaSB3VecEnv"):
            env.set_options(options)
    env.set_options({"other": 1})  # other options: SB3's convention, stored and not read
    env.seed(1)
    assert np.array_equal(env.reset(), first)


def test_sb3_vec_env_adapter_conventions() -> None:
    env = UmbrellaSB3VecEnv(num_envs=4, reward_mode="score")
    env.seed(3)
    obs = env.reset()
    assert obs.shape == (4, 899)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(60):
        masks = np.stack(env.env_method("action_masks"))
        assert masks.shape == (4, 968) and masks.any(axis=1).all()
        env.step_async(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        obs, rewards, dones, infos = env.step_wait()
        for i in np.flatnonzero(dones):
            finished += 1
            assert infos[i]["terminal_observation"].shape == (899,)
            assert infos[i]["episode"]["r"] == rewards[i] == infos[i]["score"]
            assert infos[i]["illegal_action"] is False  # every finished game says, as the single env's info
    assert finished > 0
    assert env.has_attr("action_masks")


def test_sb3_vec_env_says_when_an_illegal_action_ended_a_game() -> None:
    """The single env's info says ``illegal_action``; the SB3 infos said nothing (reward -1 only)."""
    env = UmbrellaSB3VecEnv(num_envs=3)
    env.seed(0)
    env.reset()
    masks = env.action_masks()
    actions = np.array([int(np.flatnonzero(m)[0]) for m in masks])
    actions[1] = int(np.flatnonzero(~masks[1])[0])
    env.step_async(actions)
    with pytest.warns(UserWarning, match="env 1"):
        _, rewards, dones, infos = env.step_wait()
    assert dones.tolist() == [False, True, False] and rewards[1] == -1.0
    assert infos[1]["illegal_action"] is True and infos[1]["episode"]["l"] == 1
    assert "illegal_action" not in infos[0] and "illegal_action" not in infos[2]


def test_sb3_vec_env_names_an_unsigned_action_as_given() -> None:
    """Converted to int64 first, 2**63 + 1 was named -9223372036854775807."""
    from umbrella_env.core.errors import ActionError

    env = UmbrellaSB3VecEnv(num_envs=2)
    env.reset()
    with pytest.raises(ActionError, match=f"env 1: action id {2**63 + 1} is out of range"):
        env.step_async(np.array([0, 2**63 + 1], dtype=np.uint64))


def test_maskable_ppo_smoke_on_the_vector_env_and_the_single_env(tmp_path) -> None:
    env = UmbrellaSB3VecEnv(num_envs=8)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(256)
    model.save(tmp_path / "model.zip")
    loaded = _load_maskable(tmp_path / "model.zip", device="cpu")
    single = gym.make("umbrella_env/Solo-v0")
    obs, info = single.reset(seed=0)
    for _ in range(20):
        action, _ = loaded.predict(obs, action_masks=info["action_mask"].astype(bool), deterministic=True)
        assert info["action_mask"][int(action)] == 1
        obs, reward, terminated, truncated, info = single.step(int(action))
        if terminated or truncated:
            obs, info = single.reset()
    single_model = MaskablePPO(
        "MlpPolicy", gym.make("umbrella_env/Solo-v0"), n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu"
    )
    single_model.learn(128)


def test_sb3_vec_env_renders_and_refuses_another_autoreset_mode() -> None:
    from umbrella_env.envs.sb3 import UmbrellaSB3VecEnv

    env = UmbrellaSB3VecEnv(num_envs=2, render_mode="ansi")  # render() used to reach SB3's per-env call
    env.reset()
    text = env.render()
    assert "env 0" in text and "env 1" in text and "solo" in text
    with pytest.raises(ValueError, match="made with render_mode='ansi'"):
        env.render("rgb_array")
    with pytest.raises(ValueError, match="autoreset_mode: an SB3 VecEnv always resets"):
        UmbrellaSB3VecEnv(num_envs=2, autoreset_mode="next_step")  # was "got multiple values for keyword"


def test_sb3_vec_env_counts_as_monitor_wrapped_so_sb3_reads_its_episode_returns() -> None:
    # evaluate_policy and the eval callbacks ask env_is_wrapped(Monitor): False made them warn
    # and sum the step rewards instead of reading Monitor's episode entry, so under
    # VecNormalize they reported normalised returns, not the games' scores.
    import warnings

    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import VecNormalize

    env = UmbrellaSB3VecEnv(num_envs=2)  # dense rewards: an episode's return is its final score
    assert env.env_is_wrapped(Monitor) == [True, True]
    assert env.env_is_wrapped(gym.wrappers.TimeLimit) == [False, False]
    env.seed(5)
    normalised = VecNormalize(env, norm_obs=False, norm_reward=True)
    rng = np.random.default_rng(1)

    class RandomLegal:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]), None

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "not wrapped with a Monitor wrapper" was a UserWarning
        returns, lengths = evaluate_policy(RandomLegal(), normalised, n_eval_episodes=6, return_episode_rewards=True)
    assert len(returns) == 6 and min(lengths) > 0
    assert any(r != 0 for r in returns) and all(r == round(r) for r in returns)  # scores, not normalised sums


def test_sb3_vec_env_renders_every_game_tiled_in_rgb_array_mode() -> None:
    from stable_baselines3.common.vec_env.base_vec_env import tile_images

    from umbrella_env.core.image import render_rgb

    env = UmbrellaSB3VecEnv(num_envs=3, render_mode="rgb_array")
    with pytest.raises(RuntimeError, match="call reset\\(\\) before render\\(\\)"):
        env.render()  # was a StateError about 16 blue umbrellas: the batch before any deal
    env.reset()
    pictures = env.get_images()
    assert len(pictures) == 3
    for i, picture in enumerate(pictures):
        np.testing.assert_array_equal(picture, render_rgb(env.venv.get_state(i)))
    np.testing.assert_array_equal(env.render(), tile_images(pictures))  # what VecVideoRecorder records
    assert env.metadata == {"render_modes": ["rgb_array"], "render_fps": 2}  # the recorder's frame rate (it took 30)
    with pytest.raises(ValueError, match="needs render_mode='rgb_array'"):
        UmbrellaSB3VecEnv(num_envs=2, render_mode="ansi").get_images()


def test_sb3_vec_env_keeps_each_games_reset_info_as_dummy_vec_env_does() -> None:
    """``reset_infos[i]`` is the solo env's reset info of game i's latest deal (it stayed ``{}``)."""
    env = UmbrellaSB3VecEnv(num_envs=3)
    env.seed(5)
    env.reset()
    single = gym.make("umbrella_env/Solo-v0").unwrapped
    for i in range(3):
        _, info = single.reset(seed=5 + i)
        assert env.reset_infos[i].keys() == info.keys()
        assert np.array_equal(env.reset_infos[i]["action_mask"], info["action_mask"])
        assert (env.reset_infos[i]["score"], env.reset_infos[i]["phase"]) == (info["score"], info["phase"])
    rng = np.random.default_rng(0)
    renewed = 0
    for _ in range(80):
        before = [dict(entry) for entry in env.reset_infos]
        env.step_async(np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))
        _, _, dones, _ = env.step_wait()
        masks = env.action_masks()
        for i in range(3):
            if dones[i]:  # the new deal's info: its first decision's legal actions
                renewed += 1
                assert np.array_equal(env.reset_infos[i]["action_mask"], masks[i])
                assert env.reset_infos[i]["score"] == 0
            else:
                assert np.array_equal(env.reset_infos[i]["action_mask"], before[i]["action_mask"])
    assert renewed > 0


def test_a_model_trained_with_your_own_sb3_loop_is_saved_for_every_command(tmp_path) -> None:
    """A MaskablePPO saved by SB3 alone has no sidecar: every command refused it, naming none
    of the ways to write one. The error names agents.policy.save_model, which writes the
    sidecar (checked first: a refused save writes nothing), and the agent then plays."""
    from agents.policy import save_model
    from agents.registry import make_agent
    from umbrella_env.core.config import GameConfig
    from umbrella_env.core.single import SingleGame

    model = MaskablePPO("MlpPolicy", UmbrellaSB3VecEnv(num_envs=2), n_steps=32, batch_size=64, seed=0, device="cpu")
    model.save(tmp_path / "plain.zip")
    with pytest.raises(ValueError, match=r"save it with agents\.policy\.save_model\(model, PATH, num_players=N"):
        make_agent(tmp_path / "plain.zip")
    for bad, words in (
        ({"num_players": 5}, "num_players must be None or an integer in 1-4, got 5"),
        ({"num_players": 1, "plate_level": 0}, "plate_level must be None or an integer in 1-4, got 0"),
        ({"num_players": 1, "max_turns": 0}, "max_turns"),
    ):
        with pytest.raises(ValueError, match=words):
            save_model(model, tmp_path / "saved", **bad)
    with pytest.raises(ValueError, match="a MaskablePPO checkpoint is a .zip file"):
        save_model(model, tmp_path / "saved.pt", num_players=1)
    from stable_baselines3 import PPO

    plain_ppo = PPO("MlpPolicy", UmbrellaSB3VecEnv(num_envs=1), n_steps=32, batch_size=32, device="cpu")
    for not_maskable in (object(), plain_ppo):  # PPO was saved, then refused by every loader
        with pytest.raises(ValueError, match="expected a MaskablePPO model"):
            save_model(not_maskable, tmp_path / "saved", num_players=1)
    with pytest.raises(ValueError, match="obs_size are the checkpoint's own keys"):
        save_model(model, tmp_path / "saved", num_players=1, obs_size=5)  # every loader refused the file
    for wrong in ({"num_players": 2}, {"num_players": 1, "plate_level": 2}):  # written, then played in other games
        with pytest.raises(ValueError, match=r"the model's env plays num_players=1, plate_level=1, but"):
            save_model(model, tmp_path / "saved", **wrong)
    other = MaskablePPO("MlpPolicy", gym.make("CartPole-v1"), n_steps=32, batch_size=32, device="cpu")
    with pytest.raises(ValueError, match=r"Umbrella's are observations of shape \(899,\) and Discrete\(968\)"):
        save_model(other, tmp_path / "saved", num_players=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.zip"]
    path = save_model(model, tmp_path / "saved", num_players=1, timesteps=0)
    assert path == tmp_path / "saved.zip" and (tmp_path / "saved.json").is_file()
    agent = make_agent(path, seed=0)
    game = SingleGame.new(GameConfig(num_players=1), key=3)
    for _ in range(20):
        mask = game.legal_mask()
        action = agent.act(game.observe(), mask, game)
        assert mask[action]
        game.step(action)
    with pytest.raises(ValueError, match="was trained for num_players=1, but"):
        make_agent(path, num_players=2)
