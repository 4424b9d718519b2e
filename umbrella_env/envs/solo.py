"""Gymnasium environment for the solo game, a thin adapter over the single-game engine.

The game is a :class:`~umbrella_env.core.single.SingleGame`; option checks, seeds, the
illegal-action policy, rewards, state save/load and rendering are those of the env policy
layer, :mod:`umbrella_env.envs.common`, which every env shares.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from umbrella_env.core import actions as A
from umbrella_env.core.engine import check_seed
from umbrella_env.core.errors import GameOverError
from umbrella_env.core.observation import observation_bounds
from umbrella_env.envs.common import (
    ILLEGAL_ACTION_MODES,
    ILLEGAL_KEY,
    ILLEGAL_REWARD,
    RENDER_FPS,
    RENDER_MODES,
    EnvGame,
    check_choice,
    check_flag,
    check_reset_options,
    make_config,
    require_game,
    state_option,
    step_rewards,
)
from umbrella_env.envs.doctables import env_doc_tables

#: The id of this env in Gymnasium's registry (``gymnasium.make(SOLO_ENV_ID)``).
SOLO_ENV_ID = "umbrella_env/Solo-v0"
SOLO_REWARD_MODES = ("dense", "score")


class UmbrellaSoloEnv(gym.Env[NDArray[np.float32], Any]):
    """Umbrella solo (docs/rules.md §8) as a Gymnasium environment.

    ## Description
    One board, four zones of umbrellas and six tiles (black face up): slide umbrellas
    into the stage to complete figures and place the 6 score tokens; every ejected
    umbrella is discarded.

    ## Action Space
    ``Discrete(968)``, the core's flat action space (``docs/actions.md``); only the slide,
    validate, swap and cover ids occur in solo. ``info["action_mask"]`` (int8) and
    :meth:`action_masks` give the legal ids (through ``gymnasium.make``'s wrappers:
    ``env.unwrapped.action_masks()`` or ``env.get_wrapper_attr("action_masks")()``;
    MaskablePPO finds it either way). The info of every reset and step also holds
    ``info["score"]`` (the solo score, an int), ``info["phase"]`` (the name of the
    decision's phase, ``"game_over"`` at the end) and ``info["illegal_action"]`` (a bool:
    an illegal action ended the game); every info has these four keys, as dataset
    recorders such as Minari's ``DataCollector(record_infos=True)`` require.

    ## Observation Space
    ``Box(899,) float32``, the core's egocentric observation (``docs/observation.md``).

    ## Rewards
    ``reward_mode="dense"`` (default): the change of the solo score at each step, so the
    episode return is the final score. ``"score"``: the final score, paid at the end.
    An illegal action with ``illegal_action="loss"`` ends the episode with reward -1
    (``info["illegal_action"]`` is True) and an ``IllegalActionWarning`` naming it; with
    ``"raise"`` it raises ``IllegalActionError`` (both in ``umbrella_env.core.errors``). An
    action that is not an id in [0, 968) always raises
    ``ActionError``. A refused call changes nothing.

    ## Starting State
    A random stage layout, 20 umbrellas dealt 5 per zone, two stacks of 3 black tiles.
    ``reset(seed=...)`` takes None or a non-negative int.
    ``reset(options=...)`` takes None or a dict: ``{"state": d}`` starts from the game of
    the state dict ``d`` (as ``set_state(d)``, below; no deal is drawn, a ``seed`` given
    with it seeds the resets after it); other entries are ignored. With
    ``render_mode="human"`` the table is printed at every reset and step.

    ## Episode End
    Termination by the solo end conditions (docs/rules.md §8), or by an illegal action
    under ``illegal_action="loss"``; truncation after ``max_turns``.

    ## State
    ``get_state()`` returns the game as the core's JSON-able state dict
    (``docs/state.md``). After an illegal-action loss it says ``"phase": "game_over"``,
    ``"terminated": true`` and, an env-level entry, ``"illegal_action": {"seat": 0,
    "action": a, "phase": p}``. ``set_state(d)`` makes the env that game (validated
    first) and returns ``(observation, info)`` as ``reset`` does; a finished game shows
    an empty mask and ``step`` asks for a reset. Through ``gymnasium.make``'s wrappers, which forward no other method,
    start from a state with ``reset(options={"state": d})``.

    ## Arguments
    ``plate_level`` (1-4), ``render_mode`` (None, "ansi", "human", "rgb_array": a uint8
    picture of the table), ``reward_mode`` ("dense", "score"), ``illegal_action`` ("loss",
    "raise"), ``max_turns``, ``components`` (a ComponentSet or its dict form,
    docs/components.md), ``auto_forced`` (default False: decisions with a single legal
    option are taken automatically, their reward included in the step that led to them; a
    state loaded by ``set_state`` or the ``state`` option is shown as given, so it applies
    from the first step on).

    ## Version History
    * v0: initial release.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS}
    action_space: spaces.Discrete  # an action is an int or a NumPy integer

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
        self.auto_forced = check_flag("auto_forced", auto_forced)
        self.config = make_config(1, plate_level, max_turns, components)
        self.reward_mode = check_choice("reward_mode", reward_mode, SOLO_REWARD_MODES)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        if render_mode is not None:
            check_choice("render_mode", render_mode, tuple(RENDER_MODES))
        self.render_mode = render_mode
        self.observation_space = spaces.Box(*observation_bounds(), dtype=np.float32)
        self.action_space = spaces.Discrete(A.NUM_ACTIONS)
        self._g: EnvGame | None = None
        self._scores = [0]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        check_reset_options(options)
        seed = check_seed(seed)
        start = state_option(self.config, options)
        super().reset(seed=seed)
        # The same key draw as the vector env, so sub-env i equals a single env seeded seed + i.
        shown = self._show(EnvGame.deal(self.config, self.np_random) if start is None else start)
        if self.render_mode == "human":
            self.render()
        return shown

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        g = self._g if self._g is not None else self._require_game()
        if g.over:
            raise GameOverError(
                f"the episode is over ({'terminated' if g.terminated else 'truncated'}): call reset() before step()"
            )
        a, legal = g.judge(action, self.illegal_action, "player")  # raises before any change
        if not legal:
            g.end_illegally(a)
            if self.render_mode == "human":
                self.render()
            return g.observe(0), ILLEGAL_REWARD, True, False, self._info()
        g.play(a, self.auto_forced)
        game = g.game
        scores = game.scores()
        reward = step_rewards(self.reward_mode, self._scores, scores, game.done, game.terminated, game.ranks)[0]
        self._scores = scores
        if self.render_mode == "human":
            self.render()
        return g.observe(0), reward, game.terminated, game.truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal actions as a bool vector (the method sb3-contrib's MaskablePPO calls)."""
        return self._require_game().legal().copy()

    def _show(self, g: EnvGame) -> tuple[np.ndarray, dict[str, Any]]:
        self._g = g
        self._scores = g.scores()
        return g.observe(0), self._info()

    def _info(self) -> dict[str, Any]:
        g = self._g if self._g is not None else self._require_game()
        return {
            "action_mask": g.legal().view(np.int8).copy(),
            "score": int(self._scores[0]),
            "phase": A.PHASES[g.phase],
            ILLEGAL_KEY: g.ended is not None,
        }

    def _require_game(self) -> EnvGame:
        return require_game(self._g)

    def get_state(self) -> dict[str, Any]:
        """The full game state as a JSON-able dict: the core's state dict (``docs/state.md``),
        plus ``"illegal_action"`` when an illegal action ended the game."""
        return self._require_game().state()

    def set_state(self, d: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
        """Make the env the game of a state dict (validated first; a bad dict changes nothing).

        Returns ``(observation, info)`` as :meth:`reset` does; the mask is all zeros and
        :meth:`step` asks for a reset when that game is over.
        """
        return self._show(EnvGame.load(self.config, d))

    def render(self) -> str | np.ndarray | None:
        return self._require_game().render(self.render_mode)


__all__ = ["SOLO_ENV_ID", "SOLO_REWARD_MODES", "UmbrellaSoloEnv"]


UmbrellaSoloEnv.__doc__ = ((UmbrellaSoloEnv.__doc__ or "").rstrip() + "\n") + env_doc_tables()
