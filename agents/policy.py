"""A trained MaskablePPO checkpoint as an agent (needs the ``train`` extra).

A checkpoint is the ``.zip`` written by ``train.py`` plus its sidecar
``<name>.json`` (players, level, observation size, action count, timesteps), so a model
trained for one configuration is refused for another with a clear message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from agents.checkpoint import check_configuration, check_configuration_options, read_sidecar, sidecar_path
from agents.checks import check_batch, check_flag, check_mask, check_name, check_observation
from umbrella_env.core.actions import NUM_ACTIONS
from umbrella_env.core.observation import OBS_SIZE
from umbrella_env.envs.common import check_seed


def metadata_path(path: str | Path) -> Path:
    return sidecar_path(path)


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The sidecar metadata of a checkpoint, or a ``ValueError`` saying what is wrong."""
    return read_sidecar(path, ".zip", "train.py")


INSTALL_HINT = "pip install -c constraints.txt -e '.[train]'"


def load_model(path: str | Path) -> Any:
    """The MaskablePPO model of a checkpoint ``.zip`` (on the CPU), or a ``ValueError``: no
    sb3-contrib, a corrupt or foreign file, or a policy for other spaces than Umbrella's."""
    try:
        from sb3_contrib import MaskablePPO
    except ImportError:
        raise ValueError(f"loading a trained policy (sb3-contrib) needs the train extra: {INSTALL_HINT}") from None
    try:
        model = MaskablePPO.load(path, device="cpu")
    except Exception as exc:  # a corrupt or foreign zip
        raise ValueError(f"checkpoint {str(path)!r} could not be loaded: {exc}") from None
    check_spaces(model.observation_space, model.action_space, path)
    return model


def check_spaces(observation_space: Any, action_space: Any, path: str | Path) -> None:
    """A ``ValueError`` unless a policy reads Umbrella's observations (shape ``(899,)``) and
    chooses among its actions (``Discrete(968)``): a sidecar can be copied beside any model."""
    shape = getattr(observation_space, "shape", None)
    if (
        shape is None
        or tuple(shape) != (OBS_SIZE,)
        or not isinstance(action_space, spaces.Discrete)
        or int(action_space.n) != NUM_ACTIONS
    ):
        raise ValueError(
            f"checkpoint {str(path)!r} is a policy for observations {observation_space} and actions "
            f"{action_space}; Umbrella's are observations of shape ({OBS_SIZE},) and Discrete({NUM_ACTIONS})"
        )


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
        name = check_name(name, optional=True)
        check_configuration_options(num_players=num_players, plate_level=plate_level)
        self.path = Path(path)
        self.meta = read_metadata(self.path)
        check_configuration(self.meta, self.path, num_players=num_players, plate_level=plate_level)
        # No torch.set_num_threads here: an agent never changes process-wide settings (the
        # commands that play many single decisions choose their thread count themselves).
        self.model = load_model(self.path)
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
        obs = check_observation(observation)
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        mask[check_mask(action_mask)] = True
        action, _ = self.model.predict(obs, action_masks=mask, deterministic=self.deterministic)
        return int(action)

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions int64 [n] for ``n`` games at once (used by training against past snapshots):
        observations [n, 899] and masks [n, 968], each with a legal action."""
        obs, masks = check_batch(observations, action_masks)
        actions, _ = self.model.predict(obs, action_masks=masks, deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64)
