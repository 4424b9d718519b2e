"""The PPO RLModule of RLlib training (RLlib's new API stack): illegal actions masked
inside the module.  Needs the ``ray`` extra (``pip install -c constraints.txt -e ".[ray]"``).

The environments of :mod:`umbrella_env.rllib_env` observe a dict, the keys RLlib's
action-masking example uses::

    {"observations": float32 [899], "action_mask": float32 [968] (1 = legal)}

:class:`MaskedPPOModule` runs its networks on ``observations`` only and replaces the
logits of illegal actions by the lowest float, in every forward pass: the env runners
sample from masked logits (an illegal action is never sent to the env), and the PPO loss
computes the log-probabilities, the entropy and the KL term of the *masked* distribution
(the probability mass of illegal actions is exactly 0, so they get no gradient).

``model_config``: ``{"hidden": [256, 256], "features": "figure"}``: the hidden layer sizes
of the policy and the value networks (separate networks, ReLU), and their input: the
observation with the figure-progress features of :mod:`agents.features` (``"figure"``,
the same features as ``train.py``'s policies, computed in torch inside the module;
``agents.features`` is a stable-baselines3 features extractor, so this needs SB3, which the
``ray`` extra installs) or the observation alone (``"none"``).

This module lives with the agents (not with training) because loading an RLlib
checkpoint rebuilds it by class path: :class:`agents.rllib_agent.RLlibAgent` must find it
without importing the training code.
"""

from __future__ import annotations

from typing import Any

import torch
from gymnasium import spaces
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from torch import nn

#: The keys of the observation dict (RLlib's action-masking convention).
OBS_KEY, MASK_KEY = "observations", "action_mask"
DEFAULT_HIDDEN: tuple[int, ...] = (256, 256)
DEFAULT_FEATURES = "figure"


def mlp(inputs: int, hidden: list[int], outputs: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for size in hidden:
        layers += [nn.Linear(inputs, size), nn.ReLU()]
        inputs = size
    layers.append(nn.Linear(inputs, outputs))
    return nn.Sequential(*layers)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every action whose ``mask`` entry is 0 set to the lowest float.

    A replacement, not an addition (adding the lowest float to a negative logit would
    overflow to -inf, and -inf x 0 is NaN in an entropy).
    """
    return logits.masked_fill(mask <= 0, torch.finfo(logits.dtype).min)


class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
    """Policy and value MLPs over ``observations``; logits masked by ``action_mask``."""

    def setup(self) -> None:
        space = self.observation_space
        if not isinstance(space, spaces.Dict) or set(space.spaces) != {OBS_KEY, MASK_KEY}:
            raise ValueError(
                f"MaskedPPOModule needs a Dict observation space with keys {OBS_KEY!r} and {MASK_KEY!r}, got {space}"
            )
        if not isinstance(self.action_space, spaces.Discrete):
            raise ValueError(f"MaskedPPOModule needs a Discrete action space, got {self.action_space}")
        obs_space = space[OBS_KEY]
        if not isinstance(obs_space, spaces.Box) or len(obs_space.shape) != 1:
            raise ValueError(f"MaskedPPOModule needs a one-dimensional Box {OBS_KEY!r} space, got {obs_space}")
        size = int(obs_space.shape[0])
        actions = int(self.action_space.n)
        if space[MASK_KEY].shape != (actions,):
            raise ValueError(f"the action mask has shape {space[MASK_KEY].shape}, expected ({actions},)")
        config = dict(self.model_config or {})
        hidden = [int(h) for h in config.get("hidden", DEFAULT_HIDDEN)]
        features = config.get("features", DEFAULT_FEATURES)
        if features == "figure":
            from agents.features import FigureFeatures

            self.features: nn.Module = FigureFeatures(obs_space)
            size = int(self.features.features_dim)
        elif features == "none":
            self.features = nn.Identity()
        else:
            raise ValueError(f"model_config features must be 'figure' or 'none', got {features!r}")
        self.pi = mlp(size, hidden, actions)
        self.vf = mlp(size, hidden, 1)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        return {Columns.ACTION_DIST_INPUTS: masked_logits(self.pi(self.features(obs[OBS_KEY])), obs[MASK_KEY])}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        x = self.features(obs[OBS_KEY])
        # The value network's input goes with the batch, so the loss's value call reuses it.
        return {Columns.ACTION_DIST_INPUTS: masked_logits(self.pi(x), obs[MASK_KEY]), Columns.EMBEDDINGS: x}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        x = self.features(batch[Columns.OBS][OBS_KEY]) if embeddings is None else embeddings
        return self.vf(x).squeeze(-1)
