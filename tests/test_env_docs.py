"""The env docstrings are the spec: their sections exist and their promises hold."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import umbrella_env
from umbrella_env.core import actions as A
from umbrella_env.core.config import DEFAULT_MAX_TURNS
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
    assert (common.WIN_REWARD, common.SHARED_WIN_REWARD, common.LOSS_REWARD) == (1.0, 0.5, -1.0)
    assert "the mover gets -1" in doc and common.ILLEGAL_REWARD == -1.0
