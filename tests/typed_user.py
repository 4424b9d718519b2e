"""User code that a type checker must accept against the installed package (read by
``tests/test_typing.py``, never imported): the public API as the README and docs show it,
the forms the runtime accepts (NumPy integer actions, seed sequences of any kind) and the
``BatchAgent`` narrowing of ``make_agent``."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

import umbrella_env  # registers the ids
from agents import Agent, BatchAgent, make_agent
from umbrella_env.core.single import SingleGame
from umbrella_env.envs.parallel import parallel_env
from umbrella_env.envs.solo import UmbrellaSoloEnv
from umbrella_env.envs.vector import UmbrellaSoloVectorEnv
from umbrella_env.envs.vector_game import VectorGame


class FirstLegal:
    name = "first"
    needs_game = False

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: SingleGame | None = None) -> np.intp:
        return np.intp(np.flatnonzero(action_mask)[0])


def run() -> float:
    env = UmbrellaSoloEnv()
    obs, info = env.reset(seed=1)
    mask: NDArray[Any] = info["action_mask"]
    n: int = env.action_space.n.item()
    mine: Agent = FirstLegal()
    obs, reward, terminated, truncated, info = env.step(mine.act(obs, mask))
    vec = UmbrellaSoloVectorEnv(4)
    vec.reset(seed=[1, 2, 3, 4])
    vec.reset(seed=range(4))
    vec.reset(seed=np.arange(4))
    games = VectorGame(4, seed=(1, 2, 3, 4))
    games.reset(seed=[5, 6, 7, 8])
    agent = make_agent("random")
    if isinstance(agent, BatchAgent):
        agent.act_batch(np.zeros((1, 899), np.float32), np.ones((1, 968), bool))
    made = gym.make("umbrella_env/Solo-v0")
    made.reset(seed=0)
    aec = umbrella_env.env(num_players=3, reward_mode="score", auto_forced=True)
    aec.reset(seed=2)
    parallel = parallel_env(num_players=2, max_turns=100)
    parallel.reset(seed=3)
    return float(reward) + n
