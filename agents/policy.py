"""A trained MaskablePPO checkpoint as an agent (needs the ``train`` extra).

A checkpoint is the ``.zip`` written by ``umbrella_env.train`` plus its sidecar
``<name>.json`` (players, level, observation size, action count, timesteps), so a model
trained for one configuration is refused for another with a clear message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from umbrella_env.core.actions import NUM_ACTIONS
from umbrella_env.core.observation import OBS_SIZE


def metadata_path(path: str | Path) -> Path:
    return Path(path).with_suffix(".json")


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The sidecar metadata of a checkpoint, or a ``ValueError`` saying what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"checkpoint {str(path)!r} does not exist (expected a .zip written by umbrella_env.train)")
    meta_file = metadata_path(path)
    if not meta_file.is_file():
        raise ValueError(
            f"checkpoint {str(path)!r} has no metadata file {str(meta_file)!r}; "
            "it was not written by umbrella_env.train"
        )
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"metadata {str(meta_file)!r} is unreadable: {exc}") from None
    for key in ("num_players", "plate_level", "obs_size", "num_actions"):
        if key not in meta:
            raise ValueError(f"metadata {str(meta_file)!r} lacks {key!r}")
    if meta["obs_size"] != OBS_SIZE or meta["num_actions"] != NUM_ACTIONS:
        raise ValueError(
            f"checkpoint {str(path)!r} was trained with observation size {meta['obs_size']} and "
            f"{meta['num_actions']} actions; this umbrella-env has {OBS_SIZE} and {NUM_ACTIONS}"
        )
    return meta


class PolicyAgent:
    """Plays the greedy (deterministic) or sampled action of a trained policy.

    Args:
        path: the checkpoint ``.zip``.
        num_players, plate_level: when given, the checkpoint must have been trained for them.
        deterministic: take the most likely legal action (default) or sample.
    """

    needs_game = False

    def __init__(
        self,
        path: str | Path,
        *,
        num_players: int | None = None,
        plate_level: int | None = None,
        deterministic: bool = True,
        seed: int | None = None,
        name: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.meta = read_metadata(self.path)
        for key, want in (("num_players", num_players), ("plate_level", plate_level)):
            if want is not None and self.meta[key] != want:
                raise ValueError(
                    f"checkpoint {str(self.path)!r} was trained for {key}={self.meta[key]}, "
                    f"but this game has {key}={want}"
                )
        try:
            from sb3_contrib import MaskablePPO
        except ImportError:
            raise ValueError(
                "loading a trained policy needs the train extra: pip install -c constraints.txt -e '.[train]'"
            ) from None
        import torch

        torch.set_num_threads(1)  # single decisions: one thread has the lowest latency
        try:
            self.model = MaskablePPO.load(self.path, device="cpu")
        except Exception as exc:  # a corrupt or foreign zip
            raise ValueError(f"checkpoint {str(self.path)!r} could not be loaded: {exc}") from None
        self.deterministic = deterministic
        self.name = name or self.path.stem
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.model.set_random_seed(int(seed) % 2**32)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: Any = None) -> int:
        action, _ = self.model.predict(
            observation, action_masks=np.asarray(action_mask, dtype=bool), deterministic=self.deterministic
        )
        return int(action)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions for many games at once (used by training against past snapshots)."""
        actions, _ = self.model.predict(
            observations, action_masks=np.asarray(action_masks, dtype=bool), deterministic=self.deterministic
        )
        return np.asarray(actions, dtype=np.int64)
