"""PettingZoo AEC environment for 2-4 players, a thin adapter over the single-game engine.

The game is a :class:`~umbrella_env.core.single.SingleGame`; option checks, seeds, the
illegal-action policy, rewards, state save/load and rendering are those of the env policy
layer, :mod:`umbrella_env.envs.common`, which every env shares.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from umbrella_env.core import actions as A
from umbrella_env.core.engine import check_seed
from umbrella_env.core.errors import ActionError, ArgumentError, ArgumentTypeError, GameOverError
from umbrella_env.core.observation import observation_bounds
from umbrella_env.envs.common import (
    ILLEGAL_ACTION_MODES,
    ILLEGAL_KEY,
    RENDER_FPS,
    RENDER_MODES,
    REWARD_MODES,
    EnvGame,
    check_choice,
    check_flag,
    check_reset_options,
    illegal_rewards,
    multiplayer_config,
    require_game,
    state_option,
    step_rewards,
    takes_arguments_of,
)
from umbrella_env.envs.doctables import env_doc_tables

#: The id of this env in PettingZoo's registry (``pettingzoo.make("aec", ENV_ID)``), also its metadata name.
ENV_ID = "umbrella_env/Umbrella-v0"


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order enforcing, whose ``last()`` is the env's own: once every agent has
    stepped out it raises :class:`GameOverError` (PettingZoo's would raise a bare ``KeyError``)."""

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._has_reset and not self.agents:
            return self.env.last(observe)
        return super().last(observe)

    def step(self, action: Any) -> None:
        """PettingZoo's step, except that a step once every agent has stepped out raises the
        env's :class:`GameOverError` (PettingZoo's only warns, and the step is lost)."""
        if self._has_reset and not self.agents:
            self.env.step(action)  # raises GameOverError
            return
        super().step(action)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """PettingZoo's reset, whose flags change only once the env has taken the reset (a
        refused seed or state left a fresh env marked as reset, and later calls failed with
        an ``AttributeError``)."""
        self.env.reset(seed=seed, options=options)
        self._has_reset = self._has_updated = True

    def set_state(self, d: dict[str, Any]) -> None:
        """The env's ``set_state``, after which the env is in use as after a reset (the
        ``agent_iter`` loop included)."""
        self.env.set_state(d)
        self._has_reset = self._has_updated = True


class raw_env(AECEnv[str, dict[str, NDArray[Any]], int]):  # noqa: N801 - PettingZoo's naming convention
    """Umbrella for 2-4 players as a PettingZoo AEC environment.

    ## Description
    Players slide coloured umbrellas into their 4x4 stage to complete the figures shown on
    their tiles, score tokens on a plate and pass the tiles to the left. Rules:
    ``docs/rules.md``.

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
    ``"score"``: each player's final score (docs/rules.md §5) when the game ends or is
    truncated. ``"dense"``: each step, the change of every player's score, so a player's
    rewards over a game add up to the final score minus the score of the deal (-4: four
    umbrellas in the personal zone, docs/rules.md §5.2), i.e. the final score + 4.
    With ``illegal_action="loss"`` an illegal action ends the game: the mover gets -1,
    the others 0, the mover's info says ``infos[agent]["illegal_action"] = True``, and a
    warning (``IllegalActionWarning``, ``umbrella_env.core.errors``) names the action (-1
    is a loss in "win" mode; in "score" and "dense" modes a game can end worse than that,
    a score below -1, so a learner that ignores the masks is best trained in "win" mode). With ``"raise"`` it raises
    ``IllegalActionError``; an action that is not an id in [0, 968) always raises
    ``ActionError``, as does any action but None from an agent that has finished (PettingZoo's
    ``agent_iter`` loop steps each finished agent out with None). A refused call changes nothing.

    ## Starting State
    docs/rules.md §3: random boards and tiles, one umbrella of each colour in every zone,
    player_0 to move. ``reset(seed=...)`` takes None or a non-negative int.
    ``reset(options=...)`` takes None or a dict: ``{"state": d}`` starts from the game of
    the state dict ``d`` (as ``set_state(d)``, below; no deal is drawn, a ``seed`` given
    with it seeds the resets after it); other entries are ignored. With
    ``render_mode="human"`` the table is printed at every reset and at every step but a
    finished agent's ``None``.

    ## Episode End
    Termination by the rules (docs/rules.md §5), or by an illegal action under
    ``illegal_action="loss"``; truncation after ``max_turns`` whole turns. Once every agent
    has stepped out, ``step`` raises :class:`GameOverError` (``umbrella_env.env()`` as well,
    where PettingZoo's order enforcing would only warn).

    ## State
    ``state()`` is PettingZoo's global state for centralised critics: float32 ``[899]`` in
    ``state_space``, the observation of player_0 (docs/observation.md), which holds everything
    public (every seat's board, zones and plate, the decision and the seat taking it); the
    tiles under the stacks are hidden from every player and are not in it.
    ``get_state()`` returns the whole game as the core's JSON-able state dict
    (``docs/state.md``, hidden tiles included). After an illegal-action loss the dict says
    ``"phase": "game_over"``, ``"terminated": true`` and, an env-level entry,
    ``"illegal_action": {"seat": s, "action": a, "phase": p}`` (the decision it was
    refused in); the loser's mask is empty and its observation's phase is game_over.
    ``set_state(d)`` makes the env that game (validated first): every agent is back, and
    terminations, truncations, rewards (a finished game's end rewards; 0 in "dense"
    mode) and ``agent_selection`` are those of that game; through ``umbrella_env.env``'s
    order enforcing it counts as a reset.

    ## Arguments
    ``num_players`` (2-4), ``plate_level`` (1-4), ``render_mode`` (None, "ansi", "human",
    "rgb_array": a uint8 picture of the table), ``reward_mode`` ("win", "score", "dense"),
    ``illegal_action`` ("loss", "raise"), ``max_turns`` (default 3000), ``components`` (a
    ComponentSet or its dict form), ``auto_forced`` (default False: when True, a decision
    with a single legal option, e.g. a level-4 swap where only "pass" is legal or a lone
    scorable figure, is taken automatically and its rewards are included in the step that
    led to it; a state loaded by ``set_state`` or the ``state`` option is shown as given, so
    it applies from the first step on). PettingZoo's ``max_cycles`` is refused: the turn
    limit is ``max_turns``.

    ## Parallel API
    ``umbrella_env.parallel_env(**kwargs)`` (also ``pettingzoo.make("parallel",
    "umbrella_env/Umbrella-v0")``) is this env through PettingZoo's
    ``turn_based_aec_to_parallel``; ``aec_to_parallel`` does not apply to a turn-based game
    (``metadata["is_parallelizable"]`` is False: in a step only the agent to move acts).

    ## Version History
    * v0: initial release.
    """

    metadata = {
        "render_modes": list(RENDER_MODES),
        "render_fps": RENDER_FPS,
        "name": ENV_ID,
        "is_parallelizable": False,
    }

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
        max_cycles: int | None = None,
    ) -> None:
        if max_cycles is not None:  # PettingZoo's make passes it through; a cycle is no unit of this game
            raise ArgumentTypeError(
                f"max_cycles={max_cycles!r}: Umbrella limits a game in whole turns, not cycles of agent steps "
                "(a turn takes one to several decisions of one or two agents); give max_turns (default 3000)"
            )
        super().__init__()
        self.auto_forced = check_flag("auto_forced", auto_forced)
        self.config = multiplayer_config(
            num_players, plate_level, max_turns, components, "gymnasium.make('umbrella_env/Solo-v0')"
        )
        self.reward_mode = check_choice("reward_mode", reward_mode, REWARD_MODES)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        if render_mode is not None:
            check_choice("render_mode", render_mode, tuple(RENDER_MODES))
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(self.config.num_players)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self.state_space = spaces.Box(*observation_bounds(), dtype=np.float32)
        # One space object per agent (as PettingZoo's envs): seeding one agent's action
        # space must not reseed another's.
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(*observation_bounds(), dtype=np.float32),
                    "action_mask": spaces.Box(0, 1, (A.NUM_ACTIONS,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(A.NUM_ACTIONS) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self._g: EnvGame | None = None

    def observation_space(self, agent: str) -> spaces.Dict:
        self._agent_seat(agent)  # an unknown agent: a ValueError naming the agents, as observe's
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        self._agent_seat(agent)
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ lifecycle
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        check_reset_options(options)
        seed = check_seed(seed)
        start = state_option(self.config, options)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._show(EnvGame.deal(self.config, self._rng) if start is None else start)
        if self.render_mode == "human":
            self.render()

    def _show(self, g: EnvGame) -> None:
        """Make the env that game: every agent back, and the game's flags, rewards and mover."""
        self._g = g
        self.agents = self.possible_agents[:]
        rewards = g.rewards(self.reward_mode)
        self.rewards = {a: float(r) for a, r in zip(self.agents, rewards)}
        self._cumulative_rewards = dict(self.rewards)
        self.terminations = dict.fromkeys(self.agents, g.terminated)
        self.truncations = dict.fromkeys(self.agents, g.truncated)
        self.infos = {a: dict[str, Any]() for a in self.agents}
        self._scores = g.scores()
        self._skip_agent_selection = None
        seat = g.actor if g.ended is None else g.ended.seat
        self.agent_selection = self.possible_agents[seat]
        if g.ended is not None:
            self.infos[self.agent_selection][ILLEGAL_KEY] = True

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        g = self._require_game()
        seat = self._agent_seat(agent)
        if g.actor == seat:
            mask = g.legal().view(np.int8).copy()  # all zeros once the game is over
        else:
            mask = np.zeros(A.NUM_ACTIONS, np.int8)
        return {"observation": g.observe(seat), "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._require_game()
        if not self.agents:
            raise GameOverError("the game is over and every agent has stepped out: call reset()")
        return super().last(observe)

    def step(self, action: Any) -> None:
        g = self._g if self._g is not None else self._require_game()
        if not self.agents:
            raise GameOverError("the game is over and every agent has stepped out: call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:  # PettingZoo's own check raises a bare ValueError
                raise ActionError(
                    f"{agent} has finished (the game is over): the only action it can step is None, got {action!r}"
                )
            self._was_dead_step(action)
            return
        a, legal = g.judge(action, self.illegal_action, agent)  # raises before any change
        self._cumulative_rewards[agent] = 0.0
        if not legal:
            g.end_illegally(a)
            rewards = illegal_rewards(self.config.num_players, self._seat[agent])
            self.rewards = {x: float(r) for x, r in zip(self.possible_agents, rewards)}
            self.terminations = dict.fromkeys(self.agents, True)
            self.infos[agent][ILLEGAL_KEY] = True
            self._accumulate_rewards()
            if self.render_mode == "human":
                self.render()
            return
        g.play(a, self.auto_forced)
        game = g.game
        scores = game.scores()
        rewards = step_rewards(self.reward_mode, self._scores, scores, game.done, game.terminated, game.ranks)
        self.rewards = dict(zip(self.possible_agents, rewards))
        self._scores = scores
        if game.done:
            self.terminations = dict.fromkeys(self.agents, game.terminated)
            self.truncations = dict.fromkeys(self.agents, game.truncated)
        else:
            self.agent_selection = self.possible_agents[game.actor]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _require_game(self) -> EnvGame:
        return require_game(self._g)

    def _agent_seat(self, agent: str) -> int:
        try:
            return self._seat[agent]
        except (KeyError, TypeError):
            raise ArgumentError(f"unknown agent {agent!r}; the agents are {self.possible_agents}") from None

    # ------------------------------------------------------------------ extras
    def state(self) -> np.ndarray:
        """PettingZoo's global state, in ``state_space``: player_0's observation (every public
        fact of the game; the hidden tiles are not public).  :meth:`get_state` has the whole game."""
        return self._require_game().observe(0)

    def get_state(self) -> dict[str, Any]:
        """The whole game (hidden tiles included) as a JSON-able dict: the core's state dict
        (``docs/state.md``), plus ``"illegal_action"`` when an illegal action ended the game;
        :meth:`set_state` takes it back."""
        return self._require_game().state()

    def set_state(self, d: dict[str, Any]) -> None:
        """Make the env the game of a state dict (validated first; a bad dict changes nothing).

        Every agent is back; terminations, truncations, rewards and the agent to move are
        those of that game (a finished game shows its end rewards, 0 in "dense" mode).
        """
        self._show(EnvGame.load(self.config, d))

    def render(self) -> str | np.ndarray | None:
        return self._require_game().render(self.render_mode)

    def close(self) -> None:
        pass


raw_env.__doc__ = ((raw_env.__doc__ or "").rstrip() + "\n") + env_doc_tables()


@takes_arguments_of(raw_env)  # a type checker checks the keywords, as raw_env's
def env(**kwargs: Any) -> AECEnv[str, dict[str, NDArray[Any]], int]:
    """The Umbrella AEC env wrapped like PettingZoo's classic games (order enforcing)."""
    return _OrderEnforcing(raw_env(**kwargs))
