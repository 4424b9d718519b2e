"""Gymnasium environment for the solo game, a thin adapter over the batched core."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from umbrella_env.core import actions as A
from umbrella_env.core import engine as E
from umbrella_env.core.errors import ActionError, IllegalActionError
from umbrella_env.core.observation import observation_bounds
from umbrella_env.core.single import SingleGame
from umbrella_env.tools.gendocs import env_doc_tables
from umbrella_env.envs.common import (
    ILLEGAL_ACTION_MODES,
    ILLEGAL_REWARD,
    check_choice,
    load_single,
    make_config,
    play_forced,
    render_state,
)

SOLO_REWARD_MODES = ("dense", "score")


class UmbrellaSoloEnv(gym.Env):
    """Umbrella solo (RULES.md §8) as a Gymnasium environment.

    ## Description
    One board, four zones of umbrellas and six tiles (black face up): slide umbrellas
    into the stage to complete figures and place the 6 score tokens; every ejected
    umbrella is discarded.

    ## Action Space
    ``Discrete(968)``, the core's flat action space (``docs/actions.md``); only the slide,
    validate, swap and cover ids occur in solo. ``info["action_mask"]`` (int8) and
    :meth:`action_masks` give the legal ids.

    ## Observation Space
    ``Box(899,) float32``, the core's egocentric observation (``docs/observation.md``).

    ## Rewards
    ``reward_mode="dense"`` (default): the change of the solo score at each step, so the
    episode return is the final score. ``"score"``: the final score, paid at the end.
    An illegal action with ``illegal_action="loss"`` ends the episode with reward -1.

    ## Starting State
    A random stage layout, 20 umbrellas dealt 5 per zone, two stacks of 3 black tiles.

    ## Episode End
    Termination by the solo end conditions (RULES.md §8); truncation after ``max_turns``.

    ## Arguments
    ``plate_level`` (1-4), ``render_mode`` (None, "ansi", "human", "rgb_array": a uint8 picture of the table), ``reward_mode``
    ("dense", "score"), ``illegal_action`` ("loss", "raise"), ``max_turns``, ``components``,
    ``auto_forced`` (default False: decisions with a single legal option are taken
    automatically, their reward included in the step that led to them).

    ## Version History
    * v0: initial release.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        plate_level: int = 1,
        render_mode: str | None = None,
        reward_mode: str = "dense",
        illegal_action: str = "loss",
        max_turns: int | None = None,
        components: Any = None,
        auto_forced: bool = False,
    ) -> None:
        if not isinstance(auto_forced, bool):
            raise TypeError(f"auto_forced must be a bool, got {auto_forced!r}")
        self.auto_forced = auto_forced
        self.config = make_config(1, plate_level, max_turns, components)
        self.reward_mode = check_choice("reward_mode", reward_mode, SOLO_REWARD_MODES)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        if render_mode is not None:
            check_choice("render_mode", render_mode, tuple(self.metadata["render_modes"]))
        self.render_mode = render_mode
        self.observation_space = spaces.Box(*observation_bounds(), dtype=np.float32)
        self.action_space = spaces.Discrete(A.NUM_ACTIONS)
        self._game: SingleGame | None = None
        self._ended = False  # by an illegal action
        self._score = 0.0
        self._mask = np.zeros(A.NUM_ACTIONS, bool)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        # The same key draw as the vector env, so sub-env i equals a single env seeded seed + i.
        self._game = SingleGame.new(self.config, E.draw_key(self.np_random))
        self._ended = False
        self._score = float(self._game.scores()[0])
        return self._game.observe(0), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        game = self._require_game()
        if game.done or self._ended:
            raise RuntimeError("the episode is over: call reset() before step()")
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        a = A.check_action_id(action)
        if not self._mask[a]:  # the legal actions offered after the previous call
            message = f"action {a} ({A.ACTION_STRINGS[a]!r}) is not legal in phase {A.PHASES[game.phase]!r}"
            if self.illegal_action == "raise":
                raise IllegalActionError(message)
            warnings.warn(f"{message}; the episode ends", stacklevel=2)
            self._ended = True
            info = self._info()
            info["illegal_action"] = True
            return game.observe(0), ILLEGAL_REWARD, True, False, info
        game.step(a)
        if self.auto_forced:
            play_forced(game)
        score = float(game.scores()[0])
        if self.reward_mode == "dense":
            reward = score - self._score
        else:
            reward = score if game.done else 0.0
        self._score = score
        if self.render_mode == "human":
            self.render()
        return game.observe(0), reward, game.terminated, game.truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal actions as a bool vector (the method sb3-contrib's MaskablePPO calls)."""
        game = self._require_game()
        if self._ended:
            return np.zeros(A.NUM_ACTIONS, bool)
        return game.legal_mask()

    def _info(self) -> dict[str, Any]:
        self._mask = self.action_masks()
        return {
            "action_mask": self._mask.view(np.int8).copy(),
            "score": int(self._score),
            "phase": A.PHASES[self._require_game().phase],
        }

    def _require_game(self) -> SingleGame:
        if self._game is None:
            raise RuntimeError("call reset() before using the environment")
        return self._game

    def get_state(self) -> dict[str, Any]:
        """The full game state as the core's JSON-able dict."""
        return self._require_game().to_dict()

    def set_state(self, d: dict[str, Any]) -> None:
        self._require_game()
        self._game = load_single(d, self.config)
        self._ended = False
        self._score = float(self._game.scores()[0])
        self._mask = self.action_masks()

    def render(self) -> str | np.ndarray | None:
        return render_state(self.render_mode, self.get_state())


__all__ = ["UmbrellaSoloEnv", "ActionError"]


UmbrellaSoloEnv.__doc__ = ((UmbrellaSoloEnv.__doc__ or "").rstrip() + "\n") + env_doc_tables()
