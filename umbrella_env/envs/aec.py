"""PettingZoo AEC environment for 2-4 players, a thin adapter over the batched core."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.errors import ActionError, IllegalActionError
from umbrella_env.core.observation import observation_bounds, observe
from umbrella_env.tools.gendocs import env_doc_tables
from umbrella_env.envs.common import (
    ILLEGAL_ACTION_MODES,
    ILLEGAL_REWARD,
    REWARD_MODES,
    check_choice,
    end_rewards,
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
        self._state: E.BatchState | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ lifecycle
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._state = E.init(self.config, 1, seed=self._rng)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._scores = E.scores(self._state)[0].astype(np.float64)
        self.agent_selection = self.possible_agents[int(E.actor(self._state)[0])]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        state = self._require_state()
        seat = self._seat[agent]
        mask = np.zeros(A.NUM_ACTIONS, np.int8)
        if not state.done[0] and int(E.actor(state)[0]) == seat:
            mask[E.legal_action_mask(state)[0]] = 1
        return {"observation": observe(state, seats=seat)[0], "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self._require_state()
        a = self._check_action(action)
        self._cumulative_rewards[agent] = 0.0
        legal = E.legal_action_mask(state)[0]
        if not legal[a]:
            phase = A.PHASES[int(state.phase[0])]
            message = f"{agent}: action {a} ({A.ACTION_STRINGS[a]!r}) is not legal in phase {phase!r}"
            if self.illegal_action == "raise":
                raise IllegalActionError(message)
            warnings.warn(f"{message}; the game ends and {agent} loses", stacklevel=2)
            self.rewards = {x: 0.0 for x in self.agents}
            self.rewards[agent] = ILLEGAL_REWARD
            self.terminations = {x: True for x in self.agents}
            self.infos[agent]["illegal_action"] = True
            self._accumulate_rewards()
            return
        E.step_unchecked(state, np.array([a]))
        if self.auto_forced:
            play_forced(state)
        scores = E.scores(state)[0].astype(np.float64)
        if self.reward_mode == "dense":
            reward = scores - self._scores
        elif state.done[0]:
            reward = end_rewards(state, self.reward_mode)[0]
        else:
            reward = np.zeros(len(self.agents))
        self._scores = scores
        self.rewards = {x: float(reward[i]) for i, x in enumerate(self.possible_agents)}
        if state.done[0]:
            self.terminations = {x: bool(state.terminated[0]) for x in self.agents}
            self.truncations = {x: bool(state.truncated[0]) for x in self.agents}
        else:
            self.agent_selection = self.possible_agents[int(E.actor(state)[0])]
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

    def _require_state(self) -> E.BatchState:
        if self._state is None:
            raise RuntimeError("call reset() before using the environment")
        return self._state

    # ------------------------------------------------------------------ extras
    def state(self) -> dict[str, Any]:
        """The full game state (hidden tiles included) as the core's JSON-able dict."""
        return batch_io.to_dict(self._require_state(), 0)

    def get_state(self) -> dict[str, Any]:
        return self.state()

    def set_state(self, d: dict[str, Any]) -> None:
        """Load a state dict (validated); agent selection follows the dict's decision."""
        state = self._require_state()
        batch_io.load_dict(state, 0, d)
        self._scores = E.scores(state)[0].astype(np.float64)
        self.agent_selection = self.possible_agents[int(E.actor(state)[0])]

    def render(self) -> str | np.ndarray | None:
        return render_state(self.render_mode, self.state())

    def close(self) -> None:
        pass


raw_env.__doc__ = ((raw_env.__doc__ or "").rstrip() + "\n") + env_doc_tables()
