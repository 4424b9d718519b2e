"""The PettingZoo Parallel API for 2-4 players, for the libraries that take only parallel
envs (SuperSuit's vector envs, AgileRL, sample-factory; TorchRL's ``PettingZooWrapper``
takes the AEC env, and BenchMARL through it only with a task of your own:
docs/integrations.md).

    env = umbrella_env.parallel_env(num_players=3, plate_level=2)
    observations, infos = env.reset(seed=0)
    observations, rewards, terminations, truncations, infos = env.step(actions)

Umbrella is turn-based, so this is PettingZoo's ``turn_based_aec_to_parallel`` over the
AEC env (:func:`umbrella_env.envs.aec.env`, same arguments, same rewards and
illegal-action policy): every step, every live agent observes and is asked for an
action, but only the agent to move has a non-empty ``action_mask`` and only its action is
played (``infos[agent]["active_agent"]`` names it, from ``reset`` on while the game goes
on; the infos of the step that ends it have no ``active_agent``); the others' actions
are ignored, and a step without the mover's action raises :class:`ActionError` naming it.
Rewards are those of the AEC step, so the loser's -1 arrives with the step that ends the
game.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from numpy.typing import NDArray
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel_wrapper

from umbrella_env.core.errors import ActionError, GameOverError, NotStartedError, StateError
from umbrella_env.envs.aec import env, raw_env
from umbrella_env.envs.common import state_option, takes_arguments_of


class _TurnBasedParallelEnv(turn_based_aec_to_parallel_wrapper):
    """PettingZoo's turn-based conversion, with the actions dict checked before the step:
    it must be a mapping holding an action for the agent to move (the others' are ignored)."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if isinstance(options, Mapping):
            start = state_option(self.aec_env.unwrapped.config, options)  # checked before any change
            if start is not None and start.over:
                raise StateError(
                    "parallel_env starts only from a game in progress; this state dict's game is over "
                    "(the AEC env, umbrella_env.env(), shows a finished game)"
                )
        observations, infos = super().reset(seed=seed, options=options)
        mover = self.aec_env.agent_selection  # named from the first observation on, as after a step
        return observations, {agent: {**info, "active_agent": mover} for agent, info in infos.items()}

    def step(self, actions: Any) -> Any:
        if getattr(self, "agents", None) is None:
            raise NotStartedError("call reset() before step()")
        if not self.agents:  # PettingZoo's wrapper would return 4 dicts, not the 5 of a step
            raise GameOverError("the game is over (every agent is done): call reset() to start a new one")
        if not isinstance(actions, Mapping):
            raise ActionError(f"actions must be a dict of agent -> action, got {type(actions).__name__}")
        mover = self.aec_env.agent_selection
        if mover not in actions:
            raise ActionError(
                f"actions has no action for {mover!r}, the agent to move "
                f"(the agent with a non-empty action_mask, named by infos[agent]['active_agent']; "
                f"got actions for {sorted(map(str, actions))})"
            )
        observations, rewards, terminations, truncations, infos = super().step(actions)
        # PettingZoo's wrapper hands out (and writes active_agent into) the AEC env's own info
        # dicts, which live for the whole game: a step's infos changed at every later step.
        # Each step returns dicts of its own, and the AEC env's infos are left as they were.
        mover = self.aec_env.agent_selection if self.agents else None
        for info in self.aec_env.unwrapped.infos.values():
            info.pop("active_agent", None)
        infos = {
            agent: {k: v for k, v in info.items() if k != "active_agent"}
            | ({"active_agent": mover} if mover is not None and agent in self.agents else {})
            for agent, info in infos.items()
        }
        return observations, rewards, terminations, truncations, infos


@takes_arguments_of(raw_env)  # a type checker checks the keywords, as raw_env's
def parallel_env(**kwargs: Any) -> ParallelEnv[str, dict[str, NDArray[Any]], int]:
    """The Umbrella AEC env (:func:`umbrella_env.envs.aec.env`, same keyword arguments) as a
    PettingZoo ``ParallelEnv``, through ``turn_based_aec_to_parallel`` (see the module doc);
    a step without an action for the agent to move raises :class:`ActionError` naming it."""
    return _TurnBasedParallelEnv(env(**kwargs))
