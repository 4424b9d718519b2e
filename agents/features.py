"""Figure-progress features for MaskablePPO policies (needs the ``train`` extra: torch, SB3).

A plain MLP over the 899-value observation must learn by itself which of the 64 slides
brings a visible figure closer to completion: a pattern match of the stage against four
rotated figures, for every slide.  :class:`FigureFeatures` computes that match directly
from the observation, in torch, inside the policy (so the environment and the
observation stay unchanged, and a saved model needs nothing but this module):

* ``now``  [4 slots x 4 colours]: cells of the observer's visible figure in slot ``k``
  holding colour ``c``, divided by 4;
* ``open`` [4 x 4]: whether a free space of the observer's plate accepts a colour-``c``
  figure from slot ``k`` (the level's plate, read from the ``plate_level`` one-hot);
* ``after`` [64 slides x 4 slots]: for the stage after each slide (legal or not), the
  most cells of one *accepted* colour of each visible figure, divided by 4;
* ``best`` / ``complete`` [64]: the largest ``after`` value of each slide, and whether
  the slide makes some figure scorable.

The extractor returns ``[observation, features]`` (899 + 448 values); the policy's MLP
works on that.  A slide changes one line of 4 cells, so each slide's counts are the
current counts plus a 4x4 correction: a few gathers and batched matrix products, about
20 microseconds per observation on one core.
"""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from agents.common import SLIDE_SRC
from umbrella_env.core.config import GameConfig
from umbrella_env.core.observation import observation_layout
from umbrella_env.core.tables import LINE_CELLS, tables_for

NUM_FEATURES = 16 + 16 + 64 * 4 + 64 + 64


def observation_slices() -> dict[str, slice]:
    """The observation's named blocks (``docs/observation.md``) as slices."""
    return {name: slice(start, stop) for start, stop, name, _ in observation_layout()}


#: The observation's named blocks, looked up once.
SLICES = observation_slices()


def accepted_colours(obs: torch.Tensor, accept: torch.Tensor) -> torch.Tensor:
    """[B, 4 slot, 4 colour]: whether a free space of the observer's plate accepts a figure
    of that colour from that slot (the level read from the ``plate_level`` one-hot);
    ``accept`` is :func:`accept_table` as a [40, 16] tensor."""
    free = 1.0 - obs[:, SLICES["seat0.plate_token"]]  # [b, 10]
    level = obs[:, SLICES["plate_level"]]  # [b, 4] one-hot
    pairs = (level.unsqueeze(2) * free.unsqueeze(1)).reshape(obs.shape[0], 40)
    return (pairs @ accept > 0).float().reshape(obs.shape[0], 4, 4)


def accept_table() -> np.ndarray:
    """[4 level, 10 space, 4 slot, 4 colour] whether a space accepts a figure (default components)."""
    out = np.zeros((4, 10, 4, 4), dtype=np.float32)
    for level in range(1, 5):
        accept = tables_for(GameConfig(num_players=2, plate_level=level)).accept  # [slot, colour, space]
        out[level - 1] = np.transpose(accept, (2, 0, 1))
    return out


class FigureFeatures(BaseFeaturesExtractor):
    """Observation + figure-progress features (see the module doc)."""

    # buffers (register_buffer), declared for the type checker
    line: torch.Tensor
    source: torch.Tensor
    colours: torch.Tensor
    accept: torch.Tensor

    def __init__(self, observation_space: spaces.Box) -> None:
        size = int(np.prod(observation_space.shape))
        super().__init__(observation_space, features_dim=size + NUM_FEATURES)
        # Slide a changes only the 4 cells of its line: cell LINE[a, j] then holds
        # ext[SOURCE[a, j]], where ext = the 16 stage cells + the 4 colours (the umbrella slid in).
        line = np.array([LINE_CELLS[a >> 4, a & 3] for a in range(64)], dtype=np.int64)  # [64, 4]
        self.register_buffer("line", torch.as_tensor(line.reshape(-1)), persistent=False)
        self.register_buffer(
            "source", torch.as_tensor(SLIDE_SRC[np.arange(64)[:, None], line].reshape(-1)), persistent=False
        )
        self.register_buffer("colours", torch.eye(4), persistent=False)
        # [level * 10 + space, slot * 4 + colour]
        self.register_buffer("accept", torch.as_tensor(accept_table().reshape(40, 16)), persistent=False)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        b = obs.shape[0]
        stage = obs[:, SLICES["seat0.stage"]].reshape(b, 16, 4)
        present = obs[:, SLICES["seat0.slot_present"]]
        figure = obs[:, SLICES["seat0.slot_figure"]].reshape(b, 4, 16) * present.reshape(b, 4, 1)
        open_ = accepted_colours(obs, self.accept).unsqueeze(1)  # [b, 1, slot, colour]
        now = torch.bmm(figure, stage)  # [b, 4 slot, 4 colour]
        ext = torch.cat([stage, self.colours.expand(b, 4, 4)], dim=1)  # [b, 20, 4]
        change = (ext[:, self.source] - stage[:, self.line]).reshape(b * 64, 4, 4)  # [(b, a), j, colour]
        weight = figure[:, :, self.line].reshape(b, 4, 64, 4).transpose(1, 2).reshape(b * 64, 4, 4)  # [(b, a), slot, j]
        counts = (now.unsqueeze(1) + torch.bmm(weight, change).reshape(b, 64, 4, 4)) * open_  # [b, a, slot, colour]
        per_slot = counts.amax(dim=3)  # [b, 64, 4]
        best = per_slot.amax(dim=2)  # [b, 64]
        complete = (best >= 4).float()
        return torch.cat(
            [obs, now.reshape(b, 16) / 4, open_.reshape(b, 16), per_slot.reshape(b, 256) / 4, best / 4, complete],
            dim=1,
        )
