"""The policy + value network of the Gumbel AlphaZero agents, and its checkpoint files.

Input: the observation of the deciding seat (float32 [899]), divided by its upper bounds
(so scores and counts are O(1)), followed by the figure-progress features of
:class:`agents.features.FigureFeatures` (computed from the raw observation inside the
network, the same computation the MaskablePPO policies use).  A small MLP trunk feeds

* a **policy head**: one logit per action id (968); the caller masks illegal actions;
* a **value head**: at 2-4 players one value in [-1, 1] per seat, in the *observer-relative*
  order of the observation (index ``j`` is seat ``(observer + j) % P``); in solo one value,
  the predicted final score divided by :data:`SOLO_SCALE`.

A checkpoint is a ``.pt`` file (``{"meta": ..., "state_dict": ...}``, weights stored as
float16 to keep the shipped models small) plus a ``.json`` sidecar with the same
metadata: players, level, observation size, action count, architecture, and how the model
was made.  :func:`load_network` refuses a model of another configuration with the words of
:mod:`agents.checkpoint`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from agents.checkpoint import check_configuration, read_sidecar, sidecar_path
from agents.features import NUM_FEATURES, FigureFeatures
from umbrella_env.core.actions import NUM_ACTIONS
from umbrella_env.core.observation import OBS_SIZE, observation_bounds

#: Solo values are final scores divided by this (a score of 40 is a value of 1).
SOLO_SCALE = 40.0
#: Default hidden layer sizes (small enough for two shipped float16 models under 2 MB).
DEFAULT_HIDDEN: tuple[int, ...] = (192, 192)
FORMAT = "umbrella-az-1"


def value_size(num_players: int) -> int:
    """Values per position: one per seat at 2-4 players, one (the score) in solo."""
    return 1 if num_players == 1 else num_players


class AZNet(nn.Module):
    """Policy logits [B, 968] and values [B, value_size(P)] from observations [B, 899]."""

    def __init__(self, num_players: int, hidden: Sequence[int] = DEFAULT_HIDDEN) -> None:
        super().__init__()
        if not 1 <= num_players <= 4:
            raise ValueError(f"num_players must be 1-4, got {num_players}")
        if not hidden or any(int(h) < 1 for h in hidden):
            raise ValueError(f"hidden layer sizes must be positive, got {list(hidden)}")
        self.num_players = num_players
        self.hidden = tuple(int(h) for h in hidden)
        low, high = observation_bounds()
        self.features = FigureFeatures(spaces.Box(low, high, dtype=np.float32))
        self.register_buffer(
            "inv_high", torch.as_tensor(1.0 / np.maximum(high, 1.0), dtype=torch.float32), persistent=False
        )
        layers: list[nn.Module] = []
        width = OBS_SIZE + NUM_FEATURES
        for h in self.hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, NUM_ACTIONS)
        self.value = nn.Linear(width, value_size(num_players))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.features(obs)
        x = torch.cat([x[:, :OBS_SIZE] * self.inv_high, x[:, OBS_SIZE:]], dim=1)
        h = self.trunk(x)
        v = self.value(h)
        return self.policy(h), (v if self.num_players == 1 else torch.tanh(v))

    @torch.no_grad()
    def predict(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """float32 logits [B, 968] and values [B, value_size] of a NumPy batch (no gradient)."""
        logits, values = self(torch.as_tensor(obs, dtype=torch.float32))
        return logits.numpy(), values.numpy()


# --------------------------------------------------------------------------- files
def metadata_path(path: str | Path) -> Path:
    return sidecar_path(path)


def save_network(net: AZNet, path: str | Path, *, plate_level: int, extra: dict[str, Any] | None = None) -> None:
    """Write ``path`` (.pt, float16 weights) and its ``.json`` sidecar."""
    meta = {
        "format": FORMAT,
        "num_players": net.num_players,
        "plate_level": plate_level,
        "obs_size": OBS_SIZE,
        "num_actions": NUM_ACTIONS,
        "hidden": list(net.hidden),
        "value": "score / 40" if net.num_players == 1 else "per seat, observer-relative, in [-1, 1]",
        **(extra or {}),
    }
    state = {k: v.detach().to(torch.float16) for k, v in net.state_dict().items()}
    path = Path(path)
    tmp = path.with_suffix(".pt.tmp")
    torch.save({"meta": meta, "state_dict": state}, tmp)
    tmp.replace(path)
    metadata_path(path).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The sidecar of a ``.pt`` checkpoint, or a ``ValueError`` saying what is wrong."""
    meta = read_sidecar(path, ".pt", "the alphazero trainer")
    if meta.get("format") != FORMAT or "hidden" not in meta:
        raise ValueError(f"checkpoint {str(path)!r} is not an alphazero network (format {meta.get('format')!r})")
    return meta


def load_network(
    path: str | Path, *, num_players: int | None = None, plate_level: int | None = None
) -> tuple[AZNet, dict[str, Any]]:
    """The network of a ``.pt`` checkpoint (eval mode, float32) and its metadata; a
    ``ValueError`` for a missing file or sidecar, or a model of another configuration."""
    meta = read_metadata(path)
    check_configuration(meta, path, num_players=num_players, plate_level=plate_level)
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a truncated or foreign file
        raise ValueError(f"checkpoint {str(path)!r} is unreadable: {exc}") from None
    net = AZNet(int(meta["num_players"]), meta["hidden"])
    net.load_state_dict({k: v.float() for k, v in blob["state_dict"].items()})
    net.eval()
    return net, meta
