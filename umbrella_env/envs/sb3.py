"""Stable-Baselines3 ``VecEnv`` over the native solo vector env (needs the ``train`` extra).

    from sb3_contrib import MaskablePPO
    from umbrella_env.envs.sb3 import UmbrellaSB3VecEnv

    env = UmbrellaSB3VecEnv(num_envs=64, plate_level=1)
    model = MaskablePPO("MlpPolicy", env, seed=0).learn(100_000)

All games step in one call of the batched core; finished games are reset in the same
step (SB3's convention) with the last observation in ``infos[i]["terminal_observation"]``;
``infos[i]["episode"]`` holds the return and length (as SB3's ``Monitor`` would), and
MaskablePPO reads the legal actions through ``env_method("action_masks")``.

:class:`BatchVecEnv` is the SB3 plumbing shared by every VecEnv whose games live in one
batch (this one, and training's multiplayer learner env): action checks, episode
bookkeeping, seeds and the per-env accessors SB3 expects.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from umbrella_env.cli_args import missing_extra

try:
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn, tile_images
except ImportError as exc:  # one line naming the extra, not a bare ModuleNotFoundError
    missing_extra(__name__, exc, "umbrella_env.envs.sb3 (UmbrellaSB3VecEnv)")

from umbrella_env.core.engine import check_action_batch, check_seed
from umbrella_env.core.errors import ArgumentError, NotStartedError
from umbrella_env.envs.common import ILLEGAL_KEY, RENDER_FPS, refuse_state_option
from umbrella_env.envs.vector import UmbrellaSoloVectorEnv


class BatchStep(NamedTuple):
    """What :meth:`BatchVecEnv._step_batch` returns, every array with the env axis first."""

    obs: np.ndarray  # [N, ...] observations (of the new games for the envs that finished)
    rewards: np.ndarray  # [N] float
    terminated: np.ndarray  # [N] bool
    truncated: np.ndarray  # [N] bool
    final_obs: np.ndarray | None  # by env: the finished games' last observations ([N, ...], or SyncVectorEnv's
    # object array); the other rows unused
    infos: list[dict[str, Any]] | None = None  # extra per-env info entries, or None


class BatchVecEnv(VecEnv):
    """SB3 ``VecEnv`` plumbing for ``num_envs`` games held in one batch (no per-env objects).

    A subclass implements three methods:

    * ``_reset_batch(seeds)``: deal every game (``seeds``: None, or one int or None per
      env, from :meth:`seed`) and return the observations ``[N, ...]``;
    * ``_step_batch(actions)``: step every game with int64 ``actions [N]``, reset the
      finished ones in the same step, and return a :class:`BatchStep`; it must raise
      before changing anything if it refuses the actions;
    * ``action_masks()``: ``[N, A]`` bool legal actions.

    A subclass may also fill SB3's ``reset_infos`` (the solo env does; the training
    learner env leaves them ``{}``).  This class does the rest: the shape and dtype check
    of the actions (a refused step changes nothing), ``terminal_observation``,
    ``TimeLimit.truncated`` and the Monitor-style ``episode`` entry (return, length, time
    since creation) of every finished game, seed checks, and ``get_attr`` /
    ``env_method("action_masks")`` / ``env_is_wrapped``. Attributes are read from
    :meth:`_attribute_owner`.
    """

    def __init__(self, num_envs: int, observation_space: gym.Space[Any], action_space: gym.Space[Any]) -> None:
        super().__init__(num_envs, observation_space, action_space)
        self._actions: np.ndarray | None = None
        self._returns = np.zeros(num_envs)
        self._lengths = np.zeros(num_envs, dtype=np.int64)
        self._t0 = time.time()

    # ------------------------------------------------------------------ for subclasses
    def _reset_batch(self, seeds: list[int | None] | None) -> np.ndarray:
        raise NotImplementedError

    def _step_batch(self, actions: np.ndarray) -> BatchStep:
        raise NotImplementedError

    def action_masks(self) -> np.ndarray:
        """[num_envs, A] bool legal actions."""
        raise NotImplementedError

    def _attribute_owner(self) -> Any:
        """The object whose attributes :meth:`get_attr` reports (default: this env)."""
        return self

    # ------------------------------------------------------------------ SB3 API
    def reset(self) -> np.ndarray:
        seeds = self._seeds if any(s is not None for s in self._seeds) else None
        obs = self._reset_batch(seeds)
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0
        self._lengths[:] = 0
        return obs

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seeds for the next :meth:`reset`: env ``i`` gets ``seed + i`` (``seed`` None or a non-negative int)."""
        return super().seed(check_seed(seed))

    def set_options(self, options: list[dict[str, Any]] | dict[str, Any] | None = None) -> None:
        """SB3's options for the next :meth:`reset`, which reads none of them: a ``state``
        option (a single-game env's) is refused here rather than ignored at the reset."""
        for entry in options if isinstance(options, list) else [options]:
            refuse_state_option(entry, type(self).__name__)
        super().set_options(options)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = check_action_batch(actions, self.num_envs, column=True, who="env").astype(np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise NotStartedError("step_async must be called before step_wait")
        try:
            out = self._step_batch(self._actions)
        finally:
            self._actions = None  # a refused step leaves no pending actions behind
        self._returns += out.rewards
        self._lengths += 1
        dones = out.terminated | out.truncated
        infos = out.infos if out.infos is not None else [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            if out.final_obs is not None:
                infos[i]["terminal_observation"] = out.final_obs[i]
            infos[i]["TimeLimit.truncated"] = bool(out.truncated[i] and not out.terminated[i])
            infos[i]["episode"] = {
                "r": float(self._returns[i]),
                "l": int(self._lengths[i]),
                "t": round(time.time() - self._t0, 6),
            }
        self._returns[dones] = 0
        self._lengths[dones] = 0
        return out.obs, np.asarray(out.rewards, dtype=np.float32), dones, infos

    def close(self) -> None:
        pass

    # --- the per-env accessors SB3 expects; the games have no per-env Python objects.
    def _indices(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = self.action_masks if attr_name == "action_masks" else getattr(self._attribute_owner(), attr_name)
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"cannot set {attr_name!r} on the games of a batched env")

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        rows = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in rows]
        raise AttributeError(f"the batched env has no per-env method {method_name!r}; available: 'action_masks'")

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        """As if every game were wrapped in SB3's ``Monitor`` and nothing else: True for
        ``Monitor`` and the classes it derives from, as ``DummyVecEnv`` answers for a
        Monitor-wrapped env.  Every finished game's info holds Monitor's ``episode`` entry,
        which is what SB3 asks this for (``evaluate_policy`` and the eval callbacks then
        read the episode returns from it, and do not warn)."""
        wrapped = isinstance(wrapper_class, type) and issubclass(Monitor, wrapper_class)
        return [wrapped] * len(self._indices(indices))


class UmbrellaSB3VecEnv(BatchVecEnv):
    """SB3 view of :class:`~umbrella_env.envs.vector.UmbrellaSoloVectorEnv` (same kwargs,
    except ``autoreset_mode``: an SB3 VecEnv resets a finished game in the step that ends it,
    its last observation in ``infos[i]["terminal_observation"]``).

    The infos are light: ``infos[i]`` is ``{}`` while game ``i`` goes on (a ``DummyVecEnv``
    of ``Solo-v0`` envs copies every game's ``action_mask``, ``score``, ``phase`` and
    ``illegal_action`` into them at every step; here the masks are :meth:`action_masks`),
    and for a game that ended in the step holds its final ``score`` and ``illegal_action``
    (True when an illegal action ended it), beside ``terminal_observation``,
    ``TimeLimit.truncated`` and the Monitor-style ``episode``;
    ``reset_infos[i]`` is the solo env's reset info (``action_mask``, ``score``, ``phase``,
    ``illegal_action``) of game ``i``'s latest deal, as ``DummyVecEnv`` keeps it;
    ``render()`` returns the text of every game (``render_mode="ansi"``) or their pictures
    tiled into one (``"rgb_array"``).
    """

    def __init__(self, num_envs: int = 8, **kwargs: Any) -> None:
        if "autoreset_mode" in kwargs:
            raise ArgumentError(
                "autoreset_mode: an SB3 VecEnv always resets a finished game in the step that ends it "
                "(same_step); leave it out"
            )
        self.venv = UmbrellaSoloVectorEnv(num_envs=num_envs, autoreset_mode="same_step", **kwargs)
        self.render_mode = self.venv.render_mode
        super().__init__(num_envs, self.venv.single_observation_space, self.venv.single_action_space)
        # SB3's guess lists "human" beside "rgb_array" and no frame rate (VecVideoRecorder read 30 fps).
        self.metadata: dict[str, Any] = {
            "render_modes": [self.render_mode] if self.render_mode else [],
            "render_fps": RENDER_FPS,
        }

    def _reset_batch(self, seeds: list[int | None] | None) -> np.ndarray:
        obs, info = self.venv.reset(seed=seeds)
        self._note_resets(info, range(self.num_envs))
        return obs

    def _step_batch(self, actions: np.ndarray) -> BatchStep:
        obs, rewards, terminated, truncated, info = self.venv.step(actions)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        finished = np.flatnonzero(terminated | truncated)
        for i in finished:  # same-step autoreset: their final info is info["final_info"]
            infos[i]["score"] = int(info["final_score"][i])
            infos[i][ILLEGAL_KEY] = bool(info["final_info"][ILLEGAL_KEY][i])  # as the single env's info says
        self._note_resets(info, finished)  # same-step autoreset: the info rows are the new games'
        return BatchStep(obs, rewards, terminated, truncated, info.get("final_obs"), infos)

    def _note_resets(self, info: dict[str, Any], rows: Any) -> None:
        """``reset_infos[i]``: the solo env's reset info of game ``i``'s latest deal, as
        ``DummyVecEnv`` keeps it (SB3's VecEnv contract)."""
        for i in rows:
            self.reset_infos[i] = {
                "action_mask": info["action_mask"][i].copy(),
                "score": int(info["score"][i]),
                "phase": str(info["phase"][i]),
                ILLEGAL_KEY: bool(info[ILLEGAL_KEY][i]),
            }

    def action_masks(self) -> np.ndarray:
        """[num_envs, 968] bool legal actions."""
        return self.venv.action_masks()

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Every game's picture (``render_mode="rgb_array"``), as SB3's ``DummyVecEnv``."""
        if self.render_mode != "rgb_array":
            raise ArgumentError(
                f"get_images() needs render_mode='rgb_array'; this env was made with {self.render_mode!r}"
            )
        return list(self.venv.render())  # type: ignore[arg-type]

    def render(self, mode: str | None = None) -> Any:
        """The vector env's rendering: ``render_mode="ansi"``, the text of every game;
        ``"rgb_array"``, every game's picture tiled into one (SB3's ``VecVideoRecorder``
        records it).  SB3's default would call a per-env ``render`` the batched env does not
        have."""
        if mode is not None and mode != self.render_mode:
            raise ArgumentError(f"render(mode={mode!r}): this env was made with render_mode={self.render_mode!r}")
        if self.render_mode == "rgb_array":
            return tile_images(list(self.venv.render()))  # type: ignore[arg-type]  # rgb_array: pictures
        return self.venv.render()

    def _attribute_owner(self) -> Any:
        return self.venv

    def close(self) -> None:
        self.venv.close()
