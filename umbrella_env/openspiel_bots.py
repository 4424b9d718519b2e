"""umbrella-env's agents as OpenSpiel bots, to measure an OpenSpiel algorithm against them.

::

    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts
    from umbrella_env.envs.openspiel import load_game
    from umbrella_env.openspiel_bots import AgentBot

    game = load_game(players=2)
    rollouts = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0))
    bots = [ismcts.ISMCTSBot(game, rollouts, uct_c=2.0, max_simulations=100), AgentBot("heuristic", game, seed=1)]
    returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, 2)  # C++ loop, seed 2

An :class:`AgentBot` asks its agent for a move as every command does
(:func:`umbrella_env.match.agent_action`): the agent is handed a copy of the game whose
never-seen hidden tiles are redrawn, and an illegal choice raises ``AgentError``.  Its agent
is reset at every ``restart`` or ``restart_at`` (each game of ``evaluate_bots``), with the
seeds ``seed``, ``seed + 1``, ... in turn; a state of another player count or plate level
than the bot's game is refused.
"""

from __future__ import annotations

from typing import Any

from umbrella_env.cli_args import missing_extra

try:
    import pyspiel
except ImportError as exc:  # one line naming the extra, not a bare ModuleNotFoundError
    missing_extra(__name__, exc, "umbrella_env.openspiel_bots", extra="openspiel")

from umbrella_env.core.config import GameConfig
from umbrella_env.core.engine import check_seed
from umbrella_env.envs.openspiel import UmbrellaGame, UmbrellaState
from umbrella_env.match import AgentSpecError, agent_action, build_agent

__all__ = ["AgentBot"]


def _described(config: GameConfig) -> str:
    players = "solo" if config.num_players == 1 else f"{config.num_players} players"
    return f"{players}, plate level {config.plate_level}"


class AgentBot(pyspiel.Bot):
    """An OpenSpiel bot playing an umbrella-env agent.

    Args:
        agent: an agent spec (``"heuristic"``, ``"az-2p"``, a checkpoint path, ... as
            ``evaluate.py --agents`` takes) or an agent object (``act`` and ``reset``).
        game: the OpenSpiel game (:func:`umbrella_env.envs.openspiel.load_game`); a spec is
            built for its player count and plate level, and a checkpoint of another
            configuration is refused.
        seed: the agent's seed for the first game (an int >= 0; each restart adds one), or
            None for fresh entropy at every game.
        options: keyword options of a registry agent (``{"simulations": 64}``).
    """

    def __init__(
        self, agent: Any, game: UmbrellaGame, seed: int | None = 0, options: dict[str, Any] | None = None
    ) -> None:
        pyspiel.Bot.__init__(self)
        if not isinstance(game, UmbrellaGame):
            raise TypeError(
                f"game: expected an Umbrella OpenSpiel game (umbrella_env.envs.openspiel.load_game), got {game!r}"
            )
        self._seed = check_seed(seed)
        self._games = 0
        self.config = game.config
        if isinstance(agent, str):
            self.agent = build_agent(agent, game.config, seed=self._seed, options=options)
        elif options:
            raise AgentSpecError("options apply to an agent spec string, not to an agent object")
        elif callable(getattr(agent, "act", None)) and callable(getattr(agent, "reset", None)):
            self.agent = agent
        else:
            raise TypeError(
                f"agent: expected an agent spec string or an agent with act() and reset(), got {type(agent).__name__}"
            )

    def step(self, state: UmbrellaState) -> int:
        if state.game is None or state.is_terminal():
            raise ValueError("an AgentBot moves only at a player's decision, not at the deal or after the end")
        config = state.game.config
        if (config.num_players, config.plate_level) != (self.config.num_players, self.config.plate_level):
            raise ValueError(
                f"this AgentBot plays {_described(self.config)}, and the state is of {_described(config)}: "
                "build the bot with the state's game"
            )
        return agent_action(self.agent, state.game)

    def restart(self) -> None:
        """A new game (``pyspiel.evaluate_bots`` calls it): the agent is reset with the next seed."""
        self.agent.reset(None if self._seed is None else self._seed + self._games)
        self._games += 1

    def restart_at(self, state: UmbrellaState) -> None:
        self.restart()

    def inform_action(self, state: UmbrellaState, player_id: int, action: int) -> None:
        pass  # the agent reads the whole game at each step

    def provides_policy(self) -> bool:
        return False

    def is_clonable(self) -> bool:
        return False
