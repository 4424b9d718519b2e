"""The env docstrings are the spec: their sections exist and their promises hold."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import umbrella_env
from umbrella_env.core import actions as A
from umbrella_env.core.config import DEFAULT_MAX_TURNS
from umbrella_env.core.errors import IllegalActionWarning
from umbrella_env.core.observation import OBS_SIZE, observation_layout
from umbrella_env.envs import common
from umbrella_env.envs.solo import UmbrellaSoloEnv

SECTIONS = (
    "Description",
    "Action Space",
    "Observation Space",
    "Rewards",
    "Starting State",
    "Episode End",
    "Arguments",
    "Version History",
    "Action table",
    "Observation table",
)


@pytest.mark.parametrize("cls", [umbrella_env.raw_env, UmbrellaSoloEnv], ids=["aec", "solo"])
def test_docstring_has_every_section_and_generated_tables(cls) -> None:
    doc = cls.__doc__
    for section in SECTIONS:
        assert f"## {section}" in doc, section
    assert f"Discrete({A.NUM_ACTIONS})" in doc
    assert f"Box({OBS_SIZE},)" in doc
    for phase, start, count in A.PHASE_RANGES:
        assert f"| {A.PHASES[phase]} | {start} | {start + count - 1} | {count} |" in doc
    for start, stop, name, _ in observation_layout():
        assert f"| {start} | {stop} | `{name}` |" in doc


def test_documented_spaces_and_defaults_hold() -> None:
    e = umbrella_env.raw_env()
    assert e.action_space("player_0").n == A.NUM_ACTIONS
    assert e.observation_space("player_0")["observation"].shape == (OBS_SIZE,)
    assert e.observation_space("player_0")["action_mask"].dtype == np.int8
    assert e.observation_space("player_0") is e.observation_space("player_0")  # cached
    assert f"(default {DEFAULT_MAX_TURNS})" in umbrella_env.raw_env.__doc__
    assert e.config.max_turns == DEFAULT_MAX_TURNS and e.reward_mode == "win" and e.illegal_action == "loss"
    s = gym.make("umbrella_env/Solo-v0").unwrapped
    assert s.action_space.n == A.NUM_ACTIONS and s.observation_space.shape == (OBS_SIZE,)
    assert s.reward_mode == "dense"


def test_documented_reward_values_are_the_ones_paid() -> None:
    doc = umbrella_env.raw_env.__doc__
    win = re.search(r"\+1 for the sole winner, \+0\.5\s+for each player sharing the victory, -1 for the others", doc)
    assert win, "the win-mode values are documented"
    # what a finished game pays (ranks: a sole winner; two sharing the win), one game and a batch
    paid = common.step_rewards("win", [0, 0, 0], [9, 5, 5], True, True, lambda: [0, 1, 1])
    shared = common.step_rewards("win", [0, 0, 0], [9, 9, 5], True, True, lambda: [0, 0, 2])
    assert (paid, shared) == ([1.0, -1.0, -1.0], [0.5, 0.5, -1.0])
    batch = common.step_rewards("win", None, np.array([[9, 5, 5], [9, 9, 5]]), np.array([True, True]),
                                np.array([True, True]), lambda: np.array([[0, 1, 1], [0, 0, 2]]))  # fmt: skip
    np.testing.assert_array_equal(batch, [paid, shared])
    assert "the mover gets -1" in doc
    e = umbrella_env.raw_env(num_players=2, illegal_action="loss")
    e.reset(seed=0)
    mover = e.agent_selection
    with pytest.warns(IllegalActionWarning):
        e.step(int(np.flatnonzero(e.observe(mover)["action_mask"] == 0)[0]))
    assert e.rewards == {a: (-1.0 if a == mover else 0.0) for a in e.possible_agents}
    solo = UmbrellaSoloEnv(illegal_action="loss")
    _, info = solo.reset(seed=0)
    with pytest.warns(IllegalActionWarning):
        _, reward, terminated, _, _ = solo.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert "ends the episode with reward -1" in " ".join(UmbrellaSoloEnv.__doc__.split())
    assert (reward, terminated) == (-1.0, True)
