"""The policy + value network of the Gumbel AlphaZero agents, and its checkpoint files.

Input: the observation of the deciding seat (float32 [899]).  The network computes, from
the observation alone,

* the observation divided by its upper bounds (so scores and counts are O(1)), the
  figure-progress features ``now`` and ``open`` of :class:`agents.features.FigureFeatures`
  and the 9 summary values of :class:`agents.az.lookahead.SlideLookahead`: the input of an
  MLP **trunk** (``hidden``, default 192 x 192, ReLU);
* the 23 look-ahead features of each of the 64 slides
  (:class:`~agents.az.lookahead.SlideLookahead`: figure progress after the slide and after
  the best own slide that could follow it, the colours it moves).

Heads:

* **policy**: one logit per action id (968; the caller masks illegal actions).  A slide's
  logit is a small MLP (``slide_hidden`` units) **shared by all 64 slides**, over the
  slide's features plus a projection of the trunk's output, plus a bias per slide; a
  fallback slide (another zone's umbrella slid the same way) gets the same slide score plus
  a term per zone; the other 328 actions (validations, swaps, faces, covers) get a linear
  head on the trunk.  Sharing one scorer over the slides is what lets the network learn
  "a slide that completes a figure is good" once instead of 64 times;
* **value**: at 2-4 players one value in [-1, 1] per seat, in the *observer-relative*
  order of the observation (index ``j`` is seat ``(observer + j) % P``); in solo one
  value, the predicted final score divided by :data:`SOLO_SCALE`.

A checkpoint is a ``.pt`` file (``{"meta": ..., "state_dict": ...}``, weights stored as
float16 to keep the shipped models small) plus a ``.json`` sidecar with the same
metadata: players, level, observation size, action count, architecture, and how the model
was made.  :func:`load_network` refuses a model of another configuration with the words of
:mod:`agents.checkpoint`, and a model of an older network format with a word to retrain it.
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

from agents.az.lookahead import SLIDE_FEATURES, SUMMARY_FEATURES, SlideLookahead
from agents.checkpoint import check_configuration, read_sidecar, sidecar_path
from agents.features import FigureFeatures
from umbrella_env.core import actions as A
from umbrella_env.core.actions import NUM_ACTIONS
from umbrella_env.core.observation import OBS_SIZE, observation_bounds

#: Solo values are final scores divided by this (a score of 40 is a value of 1).
SOLO_SCALE = 40.0
#: Default trunk layer sizes and slide-scorer width (two shipped float16 models stay under 2 MB).
DEFAULT_HIDDEN: tuple[int, ...] = (192, 192)
DEFAULT_SLIDE_HIDDEN = 64
FORMAT = "umbrella-az-2"
#: ``now`` + ``open`` of FigureFeatures (the per-slide part is replaced by SlideLookahead).
_FIGURE_GLOBAL = 32
#: First action id after the slides and fallbacks (validations, swaps, faces, covers follow).
_OTHER_START = A.VALIDATE_START
_NUM_FALLBACK = _OTHER_START - A.FALLBACK_START
_NUM_ZONES = _NUM_FALLBACK // A.NUM_SLIDE


def _fallback_tables() -> tuple[np.ndarray, np.ndarray]:
    """For each fallback id: the slide with the same stage effect, and its zone."""
    f = np.arange(_NUM_FALLBACK)
    zone, colour, side, line = f // 64, (f // 16) % 4, (f // 4) % 4, f % 4
    return side * 16 + colour * 4 + line, zone


def value_size(num_players: int) -> int:
    """Values per position: one per seat at 2-4 players, one (the score) in solo."""
    return 1 if num_players == 1 else num_players


class AZNet(nn.Module):
    """Policy logits [B, 968] and values [B, value_size(P)] from observations [B, 899] (module doc)."""

    def __init__(
        self, num_players: int, hidden: Sequence[int] = DEFAULT_HIDDEN, slide_hidden: int = DEFAULT_SLIDE_HIDDEN
    ) -> None:
        super().__init__()
        if not 1 <= num_players <= 4:
            raise ValueError(f"num_players must be 1-4, got {num_players}")
        if not hidden or any(int(h) < 1 for h in hidden):
            raise ValueError(f"hidden layer sizes must be positive, got {list(hidden)}")
        if int(slide_hidden) < 1:
            raise ValueError(f"slide_hidden must be positive, got {slide_hidden}")
        self.num_players = num_players
        self.hidden = tuple(int(h) for h in hidden)
        self.slide_hidden = int(slide_hidden)
        low, high = observation_bounds()
        self.features = FigureFeatures(spaces.Box(low, high, dtype=np.float32))
        self.lookahead = SlideLookahead()
        self.register_buffer(
            "inv_high", torch.as_tensor(1.0 / np.maximum(high, 1.0), dtype=torch.float32), persistent=False
        )
        fb_slide, fb_zone = _fallback_tables()
        self.register_buffer("fb_slide", torch.as_tensor(fb_slide), persistent=False)
        self.register_buffer("fb_zone", torch.as_tensor(fb_zone), persistent=False)
        layers: list[nn.Module] = []
        width = OBS_SIZE + _FIGURE_GLOBAL + SUMMARY_FEATURES
        for h in self.hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.slide_context = nn.Linear(width, self.slide_hidden)
        self.slide_input = nn.Linear(SLIDE_FEATURES, self.slide_hidden)
        self.slide_score = nn.Sequential(
            nn.ReLU(), nn.Linear(self.slide_hidden, self.slide_hidden), nn.ReLU(), nn.Linear(self.slide_hidden, 1)
        )
        self.slide_bias = nn.Parameter(torch.zeros(A.NUM_SLIDE))
        self.zone = nn.Linear(width, _NUM_ZONES)
        self.other = nn.Linear(width, NUM_ACTIONS - _OTHER_START)
        self.value = nn.Linear(width, value_size(num_players))

    @torch.no_grad()
    def encode(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The trunk's input [B, 940] and the per-slide features [B, 64, 23] (no parameters:
        a trainer may compute them once per sample)."""
        fig = self.features(obs)[:, OBS_SIZE : OBS_SIZE + _FIGURE_GLOBAL]
        per_slide, summary = self.lookahead(obs)
        return torch.cat([obs * self.inv_high, fig, summary], dim=1), per_slide

    def heads(self, x: torch.Tensor, per_slide: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits and values from :meth:`encode`'s output."""
        h = self.trunk(x)
        slides = self.slide_score(self.slide_input(per_slide) + self.slide_context(h).unsqueeze(1)).squeeze(2)
        slides = slides + self.slide_bias
        fallbacks = slides[:, self.fb_slide] + self.zone(h)[:, self.fb_zone]
        logits = torch.cat([slides, fallbacks, self.other(h)], dim=1)
        v = self.value(h)
        return logits, (v if self.num_players == 1 else torch.tanh(v))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.heads(*self.encode(obs))

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
        "slide_hidden": net.slide_hidden,
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
    if meta.get("format") == "umbrella-az-1":
        raise ValueError(
            f"checkpoint {str(path)!r} is an alphazero network of the older format 'umbrella-az-1' "
            f"(before the per-slide look-ahead head); retrain it with this version ({FORMAT!r})"
        )
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
    net = AZNet(int(meta["num_players"]), meta["hidden"], int(meta.get("slide_hidden", DEFAULT_SLIDE_HIDDEN)))
    net.load_state_dict({k: v.float() for k, v in blob["state_dict"].items()})
    net.eval()
    return net, meta
