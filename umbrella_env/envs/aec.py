"""PettingZoo AEC environment for 2-4 players, a thin adapter over the batched core."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from umbrella_env.core import actions as A
from umbrella_env.core import engine as E
from umbrella_env.core.errors import ActionError, IllegalActionError
from umbrella_env.core.observation import observation_bounds
from umbrella_env.core.single import SingleGame
from umbrella_env.tools.gendocs import env_doc_tables
from umbrella_env.envs.common import (
    ILLEGAL_ACTION_MODES,
    ILLEGAL_REWARD,
    REWARD_MODES,
    check_choice,
    end_rewards,
    load_single,
    make_config,
    play_forced,
    render_state,
)


def env(**kwargs: Any) -> AECEnv:
    """The Umbrella AEC env wrapped like PettingZoo's classic games (order enforcing)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention
    """Umbrella for 2-4 players as a PettingZoo AEC environment.

    ## Description
    Players slide coloured umbrellas into their 4x4 stage to complete the figures shown on
    their tiles, score tokens on a plate and pass the tiles to the left. Rules:
    ``shared/RULES.md`` and ``docs/rules-decisions.md``.

    ## Action Space
    ``Discrete(968)``: one id per decision (slide, fallback slide, validate, level-4 swaps,
    2-player face, receiver's cover); table in ``docs/actions.md``. The observation's
    ``action_mask`` (int8) marks the legal ids of the agent to move.

    ## Observation Space
    ``Dict(observation=Box(899,) float32, action_mask=Box(968,) int8)``. The observation is
    egocentric and public only (tiles under a stack's top appear only as a count); index
    table in ``docs/observation.md``. The mask is all zeros for agents not to move.

    ## Rewards
    ``reward_mode="win"`` (default): at the end of the game, +1 for the sole winner, +0.5
    for each player sharing the victory, -1 for the others; 0 for everyone on truncation.
    ``"score"``: each player's final score (RULES.md §5) when the game ends or is
    truncated. ``"dense"``: each step, the change of every player's score.
    With ``illegal_action="loss"`` an illegal action ends the game: the mover gets -1,
    the others 0, and a warning names the action.

    ## Starting State
    RULES.md §3: random boards and tiles, one umbrella of each colour in every zone,
    player_0 to move.

    ## Episode End
    Termination by the rules (RULES.md §5); truncation after ``max_turns`` whole turns.

    ## Arguments
    ``num_players`` (2-4), ``plate_level`` (1-4), ``render_mode`` (None, "ansi", "human", "rgb_array": a uint8 picture of the table),
    ``reward_mode`` ("win", "score", "dense"), ``illegal_action`` ("loss", "raise"),
    ``max_turns`` (default 3000), ``components`` (a ComponentSet), ``auto_forced``
    (default False: when True, a decision with a single legal option, e.g. a level-4 swap
    where only "pass" is legal or a lone scorable figure, is taken automatically and its
    rewards are included in the step that led to it).

    ## Version History
    * v0: initial release.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "name": "umbrella_v0", "is_parallelizable": False}

    def __init__(
        self,
        num_players: int = 2,
        plate_level: int = 1,
        render_mode: str | None = None,
        reward_mode: str = "win",
        illegal_action: str = "loss",
        max_turns: int | None = None,
        components: Any = None,
        auto_forced: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(auto_forced, bool):
            raise TypeError(f"auto_forced must be a bool, got {auto_forced!r}")
        self.auto_forced = auto_forced
        if num_players == 1:
            raise ValueError("num_players must be 2, 3 or 4 for the AEC env; solo is gymnasium.make('umbrella_env/Solo-v0')")
        self.config = make_config(num_players, plate_level, max_turns, components)
        self.reward_mode = check_choice("reward_mode", reward_mode, REWARD_MODES)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        if render_mode is not None:
            check_choice("render_mode", render_mode, tuple(self.metadata["render_modes"]))
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(*observation_bounds(), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (A.NUM_ACTIONS,), np.int8),
            }
        )
        act_space = spaces.Discrete(A.NUM_ACTIONS)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self._game: SingleGame | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ lifecycle
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._game = SingleGame.new(self.config, E.draw_key(self._rng))
        self._mask: np.ndarray | None = None
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._scores = self._game.scores()
        self.agent_selection = self.possible_agents[self._game.actor]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        game = self._require_game()
        seat = self._seat[agent]
        if not game.done and game.actor == seat:
            mask = self._legal().view(np.int8).copy()
        else:
            mask = np.zeros(A.NUM_ACTIONS, np.int8)
        return {"observation": game.observe(seat), "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self._require_game()
        a = self._check_action(action)
        self._cumulative_rewards[agent] = 0.0
        if not self._legal()[a]:
            message = f"{agent}: action {a} ({A.ACTION_STRINGS[a]!r}) is not legal in phase {A.PHASES[game.phase]!r}"
            if self.illegal_action == "raise":
                raise IllegalActionError(message)
            warnings.warn(f"{message}; the game ends and {agent} loses", stacklevel=2)
            self.rewards = {x: 0.0 for x in self.agents}
            self.rewards[agent] = ILLEGAL_REWARD
            self.terminations = {x: True for x in self.agents}
            self.infos[agent]["illegal_action"] = True
            self._accumulate_rewards()
            return
        game.step(a)
        if self.auto_forced:
            play_forced(game)
        self._mask = None
        scores = game.scores()
        if self.reward_mode == "dense":
            self.rewards = {x: float(scores[i] - self._scores[i]) for i, x in enumerate(self.possible_agents)}
        elif game.done:
            final = end_rewards(game.scores(), game.ranks(), game.terminated, self.reward_mode)
            self.rewards = {x: float(v) for x, v in zip(self.possible_agents, final)}
        else:
            self.rewards = dict.fromkeys(self.possible_agents, 0.0)
        self._scores = scores
        if game.done:
            self.terminations = dict.fromkeys(self.agents, game.terminated)
            self.truncations = dict.fromkeys(self.agents, game.truncated)
        else:
            self.agent_selection = self.possible_agents[game.actor]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _check_action(self, action: Any) -> int:
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        try:
            return A.check_action_id(action)
        except ActionError as exc:
            raise ActionError(f"{self.agent_selection}: {exc}") from None

    def _legal(self) -> np.ndarray:
        """The current decision's legal actions, computed once per decision."""
        if self._mask is None:
            self._mask = self._require_game().legal_mask()
        return self._mask

    def _require_game(self) -> SingleGame:
        if self._game is None:
            raise RuntimeError("call reset() before using the environment")
        return self._game

    # ------------------------------------------------------------------ extras
    def state(self) -> dict[str, Any]:
        """The full game state (hidden tiles included) as the core's JSON-able dict."""
        return self._require_game().to_dict()

    def get_state(self) -> dict[str, Any]:
        return self.state()

    def set_state(self, d: dict[str, Any]) -> None:
        """Load a state dict (validated); agent selection follows the dict's decision."""
        self._require_game()
        self._game = load_single(d, self.config)
        self._mask = None
        self._scores = self._game.scores()
        if not self._game.done:
            self.agent_selection = self.possible_agents[self._game.actor]

    def render(self) -> str | np.ndarray | None:
        return render_state(self.render_mode, self.state())

    def close(self) -> None:
        pass


raw_env.__doc__ = ((raw_env.__doc__ or "").rstrip() + "\n") + env_doc_tables()
