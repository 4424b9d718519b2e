"""Native Gymnasium vector env for solo Umbrella: N games stepped by one call of the core."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from umbrella_env.core import actions as A
from umbrella_env.core import batch_io
from umbrella_env.core import engine as E
from umbrella_env.core.engine import check_seed
from umbrella_env.core.errors import ArgumentError, NotStartedError
from umbrella_env.core.observation import observation_bounds, observe
from umbrella_env.envs.common import (
    ILLEGAL_ACTION_MODES,
    ILLEGAL_KEY,
    ILLEGAL_REWARD,
    RENDER_FPS,
    IllegalEnd,
    check_choice,
    check_flag,
    check_reset_options,
    ended_observation,
    judge_actions,
    make_config,
    play_forced_rows,
    refuse_state_option,
    render_state,
    save_state,
    seed_sequence,
    step_rewards,
    user_stacklevel,
)
from umbrella_env.envs.solo import SOLO_REWARD_MODES

#: Phase names by phase id, as an object array (``info["phase"]``, as SyncVectorEnv batches strings).
_PHASE_NAMES = np.array(A.PHASES, dtype=object)
_AUTORESET_MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}


class UmbrellaSoloVectorEnv(VectorEnv[NDArray[np.float32], NDArray[np.int64], NDArray[np.int64]]):
    """``num_envs`` solo games in one batch of the core.

    Made by ``gymnasium.make_vec("umbrella_env/Solo-v0", num_envs=N,
    vectorization_mode="vector_entry_point")``. Sub-env ``i`` behaves exactly like a
    single ``umbrella_env/Solo-v0`` env reset with seed ``seed + i``, step for step, as
    in Gymnasium's ``SyncVectorEnv``.

    * Observations ``[N, 899]`` float32; actions: an integer array ``[N]``.
    * Masks: ``info["action_mask"]`` (``[N, 968]`` int8) and :meth:`action_masks` (bool),
      copies: editing one does not change what ``step`` accepts.
    * ``info["score"]`` (``[N]`` int64) and ``info["phase"]`` (``[N]`` phase names) are the
      single env's ``score`` and ``phase`` of every sub-env, as ``SyncVectorEnv`` batches
      them.  Every key has ``SyncVectorEnv``'s ``_key`` mask of the sub-envs that reported
      it: all of them, except after a ``reset_mask`` reset (the reset ones; the others'
      rows still hold their current values, where ``SyncVectorEnv`` leaves zeros).
    * ``info["illegal_action"]`` (bool ``[N]``, mask ``info["_illegal_action"]``): the
      sub-envs an illegal action ended in this step (``illegal_action="loss"``; in
      ``"same_step"`` mode, in ``info["final_info"]``), the single env's
      ``info["illegal_action"]``; like every key, it is there at every reset and step.
    * Autoreset: ``autoreset_mode="next_step"`` (default, Gymnasium's default: the step
      after an episode ends resets that sub-env, its action is ignored, reward 0) or
      ``"same_step"`` (finished games are reset in the same step; their last observation
      is in ``info["final_obs"]``, as ``SyncVectorEnv`` gives it: an object array holding
      each finished sub-env's observation and None for the others, with the mask
      ``info["_final_obs"]``; their last info in
      ``info["final_info"]`` (``action_mask``, ``score``, ``phase`` and ``illegal_action``,
      each with its ``_`` mask of the finished sub-envs, the other rows zeros or None, as
      ``SyncVectorEnv`` gives it) with the mask
      ``info["_final_info"]``, and their final score in ``info["final_score"]``, mask
      ``info["_final_score"]``);
      Gymnasium's ``AutoresetMode.NEXT_STEP`` /
      ``SAME_STEP`` are accepted too. ``metadata["autoreset_mode"]`` and the attribute
      ``autoreset_mode`` declare it, as ``SyncVectorEnv``'s.
    * There are no sub-env objects: ``SyncVectorEnv``'s ``call``, ``get_attr`` and
      ``set_attr`` raise ``NotImplementedError`` naming the batched equivalents
      (:meth:`action_masks`, :meth:`get_state`, ``info``), or ``vectorization_mode="sync"``.
    * Arguments as the single env: ``plate_level``, ``reward_mode``, ``illegal_action``,
      ``max_turns``, ``components`` (a ComponentSet or its dict form), ``auto_forced``
      (after a step, every decision with a single legal option is taken), ``render_mode``
      ("ansi": the text of every game; "rgb_array": a tuple of every game's picture).
    * Checks and policies are the single env's (:mod:`umbrella_env.envs.common`): every
      action is checked before anything changes, so a refused step changes nothing (not
      even a pending autoreset); an illegal action under ``illegal_action="loss"`` ends
      only that sub-env's episode, and :meth:`get_state` then says so.
    """

    metadata = {
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": RENDER_FPS,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int = 1,
        plate_level: int = 1,
        render_mode: str | None = None,
        reward_mode: str = "dense",
        illegal_action: str = "loss",
        max_turns: int | None = None,
        components: Any = None,
        autoreset_mode: str | AutoresetMode = "next_step",
        max_episode_steps: int | None = None,
        auto_forced: bool = False,
    ) -> None:
        E.check_batch_size("num_envs", num_envs)
        if max_episode_steps is not None:
            raise ArgumentError(
                f"max_episode_steps={max_episode_steps!r}: the native vector env limits episodes in whole turns, "
                "not steps; give max_turns, or vectorization_mode='sync' for Gymnasium's step limit"
            )
        self.config = make_config(1, plate_level, max_turns, components)
        self.reward_mode = check_choice("reward_mode", reward_mode, SOLO_REWARD_MODES)
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        self.auto_forced = check_flag("auto_forced", auto_forced)
        if isinstance(autoreset_mode, AutoresetMode):  # Gymnasium's enum names the same modes
            names = {mode: name for name, mode in _AUTORESET_MODES.items()}
            if autoreset_mode not in names:
                raise ArgumentError(
                    f"autoreset_mode={autoreset_mode}: the native vector env resets finished games itself "
                    f"(AutoresetMode.NEXT_STEP or SAME_STEP); for {autoreset_mode} use vectorization_mode='sync'"
                )
            autoreset_mode = names[autoreset_mode]
        mode = check_choice("autoreset_mode", autoreset_mode, tuple(_AUTORESET_MODES))
        if render_mode is not None:
            check_choice("render_mode", render_mode, tuple(self.metadata["render_modes"]))
        self.autoreset_mode = _AUTORESET_MODES[mode]  # as SyncVectorEnv's attribute (TorchRL reads it)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = render_mode
        self.num_envs = int(num_envs)
        self.single_observation_space = spaces.Box(*observation_bounds(), dtype=np.float32)
        self.single_action_space = spaces.Discrete(A.NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._state = E.allocate(self.config, self.num_envs)
        self._generators: list[np.random.Generator] = []
        self._scores = np.zeros(self.num_envs)
        self._needs_reset = np.zeros(self.num_envs, bool)
        self._ended = np.zeros(self.num_envs, bool)  # ended by an illegal action
        self._illegal: dict[int, IllegalEnd] = {}  # how, for the state dicts
        self._started = False
        self._mask = np.zeros((self.num_envs, A.NUM_ACTIONS), bool)

    # ------------------------------------------------------------------ API
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | NDArray[np.integer[Any]] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-env. ``seed``: None, an int (sub-env ``i`` gets ``seed + i``) or a
        sequence of ``num_envs`` seeds (each None or a non-negative int).  ``options=
        {"reset_mask": mask}`` (bool ``[num_envs]``, at least one True; after a first full
        reset) resets only the masked sub-envs, as in ``SyncVectorEnv``: the others keep their
        games and generators, and the returned observations include theirs."""
        check_reset_options(options, reads=("reset_mask",))
        mask = self._reset_mask(options)
        seeds = seed_sequence(seed, self.num_envs, "env", allow_none=True)
        first = None
        if seeds is None:
            first = check_seed(seed)
            seeds = [None if first is None else first + i for i in range(self.num_envs)]
        rows = np.arange(self.num_envs) if mask is None else np.flatnonzero(mask)
        super().reset(seed=first)
        if not self._generators:
            self._generators = [seeding.np_random(s)[0] for s in seeds]
        else:
            self._generators = [
                seeding.np_random(s)[0] if s is not None and i in rows else g
                for i, (s, g) in enumerate(zip(seeds, self._generators))
            ]
        self._reset_games(rows)
        self._started = True
        return self._observe(E.scores(self._state)), self._info(mask)

    def _reset_mask(self, options: Any) -> np.ndarray | None:
        """The ``reset_mask`` option checked (None without one; a ``state`` option refused)."""
        refuse_state_option(options, "the native vector env (its option: reset_mask)")
        if not options or "reset_mask" not in options:
            return None
        mask = options["reset_mask"]
        if not (isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (self.num_envs,)):
            raise ArgumentError(
                f"options['reset_mask'] must be a bool NumPy array of shape ({self.num_envs},), got {mask!r}"
            )
        if not mask.any():
            raise ArgumentError("options['reset_mask'] must select at least one sub-env (all False resets nothing)")
        self._require_started("options['reset_mask'] (it resets some sub-envs of a started env)")
        return mask

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self._require_started("step()")
        state = self._state
        live = ~self._needs_reset & ~state.done  # games waiting for their autoreset ignore their action
        # Every check first (the legal actions are those offered after the previous call):
        # a refused step changes nothing, not even the pending autoresets.
        acts, illegal = judge_actions(actions, self._mask, live, state.phase, self.illegal_action, "env")
        for i in np.flatnonzero(illegal):
            self._illegal[int(i)] = IllegalEnd(0, int(np.asarray(actions)[i]), A.PHASES[int(state.phase[i])])
        self._ended |= illegal
        resetting = np.flatnonzero(self._needs_reset)
        if resetting.size:
            self._reset_games(resetting)
        E.step_unchecked(state, acts)
        stepped = live & ~illegal
        if self.auto_forced:
            play_forced_rows(state, stepped)
        all_scores = E.scores(state)
        rewards = step_rewards(
            self.reward_mode, self._scores[:, None], all_scores, state.done, state.terminated, lambda: E.ranks(state)
        )[:, 0]
        rewards = np.where(stepped, rewards, 0.0)
        rewards[illegal] = ILLEGAL_REWARD
        self._scores = all_scores[:, 0].astype(np.float64)
        terminated = (state.terminated | self._ended) & live
        truncated = state.truncated & live
        done = terminated | truncated
        info: dict[str, Any]
        if self.autoreset_mode == AutoresetMode.SAME_STEP and done.any():
            final_obs = self._observe(all_scores)
            final_score = all_scores[:, 0].copy()
            final_info = self._info(done, blank=True)  # the finished games' last info, as SyncVectorEnv's
            self._reset_games(np.flatnonzero(done))
            info = self._info()
            info["final_obs"] = np.full(self.num_envs, None, dtype=object)  # SyncVectorEnv's layout
            for i in np.flatnonzero(done):
                info["final_obs"][i] = final_obs[i]
            info["_final_obs"] = done
            info["final_info"] = final_info
            info["_final_info"] = done
            info["final_score"] = np.where(done, final_score, 0)
            info["_final_score"] = done
            obs = observe(state)
        else:
            self._needs_reset = done
            info = self._info()
            obs = self._observe(all_scores)
        return obs, rewards, terminated, truncated, info

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Refused: see :meth:`_no_sub_envs`."""
        raise self._no_sub_envs(f"call({name!r})")

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Refused: see :meth:`_no_sub_envs`."""
        raise self._no_sub_envs(f"get_attr({name!r})")

    def set_attr(self, name: str, values: Any) -> None:
        """Refused: see :meth:`_no_sub_envs`."""
        raise self._no_sub_envs(f"set_attr({name!r}, ...)")

    def action_masks(self) -> np.ndarray:
        """[N, 968] bool legal actions (all False for a game waiting for its autoreset)."""
        self._require_started("action_masks()")
        return self._mask.copy()

    def render(self) -> str | tuple[np.ndarray, ...] | None:  # type: ignore[override]
        """``render_mode="ansi"``: one text of every game, each under ``--- env i ---``;
        ``"rgb_array"``: a tuple of ``num_envs`` pictures (uint8 H x W x 3), as
        ``SyncVectorEnv`` gives its sub-envs' pictures."""
        if self.render_mode is None:
            warnings.warn(
                f"render() called without a render_mode; pass one of {self.metadata['render_modes']}",
                stacklevel=user_stacklevel(),
            )
            return None
        self._require_started("render()")
        shown = [
            render_state(self.render_mode, batch_io.to_dict(self._state, b), self._illegal.get(b))
            for b in range(self.num_envs)
        ]
        if self.render_mode == "rgb_array":
            return tuple(shown)  # type: ignore[arg-type]
        return "\n".join(f"--- env {b} ---\n{t}" for b, t in enumerate(shown))

    def get_state(self, i: int) -> dict[str, Any]:
        """Sub-env ``i``'s game as a state dict (the core's, plus ``"illegal_action"`` when
        an illegal action ended it; see :func:`umbrella_env.envs.common.save_state`)."""
        self._require_started("get_state()")
        return save_state(batch_io.to_dict(self._state, i), self._illegal.get(int(i)))

    # ------------------------------------------------------------------ internals
    def _no_sub_envs(self, what: str) -> NotImplementedError:
        """``SyncVectorEnv``'s per-sub-env calls have nothing to call here: the games are rows
        of one batch, not env objects."""
        return NotImplementedError(
            f"{what}: the native vector env keeps its games as rows of one batch, not as sub-env objects; "
            "use its batched methods (action_masks() [N, 968], get_state(i), render()) and info, "
            "its settings as attributes (e.g. env.unwrapped.reward_mode), or "
            "gymnasium.make_vec(..., vectorization_mode='sync') for sub-env objects"
        )

    def _require_started(self, what: str) -> None:
        """Before the first reset the batch holds no game (zeros, not a position)."""
        if not self._started:
            raise NotStartedError(f"call reset() before {what}")

    def _observe(self, scores: np.ndarray) -> np.ndarray:
        obs = observe(self._state, scores=scores)
        if self._ended.any():
            obs[self._ended] = ended_observation(obs[self._ended])
        return obs

    def _update_mask(self) -> None:
        self._mask = E.legal_action_mask(self._state)
        self._mask[self._needs_reset | self._ended] = False

    def _reset_games(self, idx: np.ndarray) -> None:
        keys = np.array([E.draw_key(self._generators[i]) for i in idx], dtype=np.uint64)
        E.reset(self._state, idx, keys=keys)
        self._scores[idx] = E.scores(E.take(self._state, idx))[:, 0]
        self._needs_reset[idx] = False
        self._ended[idx] = False
        for i in idx:
            self._illegal.pop(int(i), None)

    def _info(self, reported: np.ndarray | None = None, blank: bool = False) -> dict[str, Any]:
        """Every sub-env's info, each key with its ``_key`` mask: ``reported`` (bool
        ``[N]``; None: all True), the sub-envs ``SyncVectorEnv`` would have taken it from;
        with ``blank``, the other rows hold what it leaves there (zeros, None, False)."""
        self._update_mask()
        phase = _PHASE_NAMES[self._state.phase]  # fancy indexing: a fresh array
        phase[self._ended] = A.PHASES[A.PHASE_GAME_OVER]  # an illegal action ended it
        action_mask = self._mask.astype(np.int8)  # a copy: editing it cannot change what step() accepts
        score = self._scores.astype(np.int64)
        illegal = self._ended.copy()  # ended by an illegal action: the single env's info["illegal_action"]
        mask = np.ones(self.num_envs, bool) if reported is None else reported
        if blank:
            action_mask[~mask], score[~mask], phase[~mask], illegal[~mask] = 0, 0, None, False
        info: dict[str, Any] = {"action_mask": action_mask, "score": score, "phase": phase, ILLEGAL_KEY: illegal}
        masks = {f"_{key}": mask.copy() for key in info}
        return {**info, **masks}
