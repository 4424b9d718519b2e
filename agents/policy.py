"""A trained MaskablePPO checkpoint as an agent (needs the ``train`` extra).

A checkpoint is the ``.zip`` written by ``train.py`` plus its sidecar
``<name>.json`` (players, level, observation size, action count, timesteps), so a model
trained for one configuration is refused for another with a clear message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.checkpoint import check_configuration, read_sidecar, sidecar_path
from agents.checks import check_flag
from umbrella_env.envs.common import check_seed


def metadata_path(path: str | Path) -> Path:
    return sidecar_path(path)


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The sidecar metadata of a checkpoint, or a ``ValueError`` saying what is wrong."""
    return read_sidecar(path, ".zip", "train.py")


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
        deterministic = check_flag("deterministic", deterministic)
        self.path = Path(path)
        self.meta = read_metadata(self.path)
        check_configuration(self.meta, self.path, num_players=num_players, plate_level=plate_level)
        try:
            from sb3_contrib import MaskablePPO
        except ImportError:
            raise ValueError(
                "loading a trained policy needs the train extra: pip install -c constraints.txt -e '.[train]'"
            ) from None
        # No torch.set_num_threads here: an agent never changes process-wide settings (the
        # commands that play many single decisions choose their thread count themselves).
        try:
            self.model = MaskablePPO.load(self.path, device="cpu")
        except Exception as exc:  # a corrupt or foreign zip
            raise ValueError(f"checkpoint {str(self.path)!r} could not be loaded: {exc}") from None
        self.deterministic = deterministic
        self.name = name or self.path.stem
        self.reset(seed)

    @classmethod
    def from_model(cls, model: Any, *, deterministic: bool = True, name: str = "policy") -> PolicyAgent:
        """An agent over an in-memory MaskablePPO model (e.g. the one being trained)."""
        agent = cls.__new__(cls)
        agent.path = Path(name)
        agent.meta = {}
        agent.model = model
        agent.deterministic = deterministic
        agent.name = name
        return agent

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.model.set_random_seed(int(check_seed(seed)) % 2**32)

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
