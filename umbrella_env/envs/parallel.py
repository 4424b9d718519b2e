"""The PettingZoo Parallel API for 2-4 players, for the libraries that take only parallel
envs (AgileRL, SuperSuit vector envs, BenchMARL, sample-factory).

    env = umbrella_env.parallel_env(num_players=3, plate_level=2)
    observations, infos = env.reset(seed=0)
    observations, rewards, terminations, truncations, infos = env.step(actions)

Umbrella is turn-based, so this is PettingZoo's ``turn_based_aec_to_parallel`` over the
AEC env (:func:`umbrella_env.envs.aec.env`, same arguments, same rewards and
illegal-action policy): every step, every live agent observes and is asked for an
action, but only the agent to move has a non-empty ``action_mask`` and only its action is
played (``infos[agent]["active_agent"]`` names it); the others' actions are ignored.
Rewards are those of the AEC step, so the loser's -1 arrives with the step that ends the
game.
"""

from __future__ import annotations

from typing import Any

from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from umbrella_env.envs.aec import env


def parallel_env(**kwargs: Any) -> ParallelEnv:
    """The Umbrella AEC env (:func:`umbrella_env.envs.aec.env`, same keyword arguments) as a
    PettingZoo ``ParallelEnv``, through ``turn_based_aec_to_parallel`` (see the module doc)."""
    return turn_based_aec_to_parallel(env(**kwargs))
