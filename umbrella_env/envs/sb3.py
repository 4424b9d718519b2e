"""Stable-Baselines3 ``VecEnv`` over the native solo vector env (needs the ``train`` extra).

    from sb3_contrib import MaskablePPO
    from umbrella_env.envs.sb3 import UmbrellaSB3VecEnv

    env = UmbrellaSB3VecEnv(num_envs=64, plate_level=1)
    model = MaskablePPO("MlpPolicy", env, seed=0).learn(100_000)

All games step in one call of the batched core; finished games are reset in the same
step (SB3's convention) with the last observation in ``infos[i]["terminal_observation"]``;
``infos[i]["episode"]`` holds the return and length (as SB3's ``Monitor`` would), and
MaskablePPO reads the legal actions through ``env_method("action_masks")``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from umbrella_env.envs.vector import UmbrellaSoloVectorEnv


class UmbrellaSB3VecEnv(VecEnv):
    """SB3 view of :class:`~umbrella_env.envs.vector.UmbrellaSoloVectorEnv` (same kwargs)."""

    def __init__(self, num_envs: int = 8, **kwargs: Any) -> None:
        self.venv = UmbrellaSoloVectorEnv(num_envs=num_envs, autoreset_mode="same_step", **kwargs)
        self.render_mode = self.venv.render_mode
        super().__init__(num_envs, self.venv.single_observation_space, self.venv.single_action_space)
        self._actions: np.ndarray | None = None
        self._returns = np.zeros(num_envs)
        self._lengths = np.zeros(num_envs, dtype=np.int64)
        self._t0 = time.time()

    def reset(self) -> np.ndarray:
        seeds = self._seeds if any(s is not None for s in self._seeds) else None
        obs, _ = self.venv.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0
        self._lengths[:] = 0
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        assert self._actions is not None, "step_async must be called before step_wait"
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        self._actions = None
        self._returns += rewards
        self._lengths += 1
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            infos[i]["episode"] = {
                "r": float(self._returns[i]),
                "l": int(self._lengths[i]),
                "t": round(time.time() - self._t0, 6),
            }
            infos[i]["score"] = int(info["final_score"][i])
            self._returns[i] = 0
            self._lengths[i] = 0
        return obs, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """[num_envs, 968] bool legal actions."""
        return self.venv.action_masks()

    def close(self) -> None:
        self.venv.close()

    # --- the per-env accessors SB3 expects; the games have no per-env Python objects.
    def _indices(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        if attr_name == "action_masks":
            return [self.action_masks] * len(self._indices(indices))
        value = getattr(self.venv, attr_name)
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"cannot set {attr_name!r} on the games of a batched env")

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any) -> list[Any]:
        rows = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in rows]
        raise AttributeError(f"the batched env has no per-env method {method_name!r}; available: 'action_masks'")

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        return super().seed(seed)

    def _get_indices(self, indices: VecEnvIndices) -> Iterable[int]:
        return super()._get_indices(indices)
