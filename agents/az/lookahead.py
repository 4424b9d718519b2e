"""Per-slide look-ahead features of the alphazero network, computed from the observation.

Most decisions of a game are slides, and what a slide is worth depends mostly on one
thing: how close it brings the observer's visible figures to completion, now and one own
slide later.  A fully connected layer over the observation would have to learn that
pattern match separately for each of the 64 slides.  :class:`SlideLookahead` computes it
directly, from the observation alone (the observer's stage, visible figures, plate and
own zones: nothing hidden, no game engine), and the network scores every slide with one
small shared MLP over these features (:class:`agents.az.net.AZNet`).

For every slide ``a`` (legal or not; the caller masks illegal ones):

* ``after1`` [4 slots]: the most cells of one *accepted* colour (a colour a free plate
  space takes from that slot) of each visible figure on the stage after ``a``, / 4;
* ``complete1``: whether some figure is then scorable (4 cells);
* ``after2`` [4 slots], ``complete2``: the same, maximised over the own slides ``b``
  that could follow ``a`` (``b``'s colour still in the own zone it enters from after
  ``a`` took one; the other seats' moves are ignored, as they never change this stage);
* the slide's side and colour (one-hot), the colour it pushes off the far end (one-hot)
  and the umbrellas of its colour left in the zone it takes from (/ 9).

That is ``SLIDE_FEATURES`` = 23 values per slide, plus ``SUMMARY_FEATURES`` = 9 values for
the whole position (the best ``after1`` and ``after2`` of each slot, and how many slides
complete a figure / 8), which go to the network's trunk.

The two-slide counts use base-4 codes of each figure's four cells and the
``agents.common.BEST_COUNT`` table: one gather of 64 x 64 x 16 cells per observation,
about 0.3-0.5 ms per observation on one core at batch 32 (measured on a busy machine).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from agents.common import BEST_COUNT, SLIDE_EJECT, SLIDE_SOURCE, SLIDE_SRC
from agents.features import SLICES, accept_table, accepted_colours
from umbrella_env.core.actions import NUM_SLIDE

#: Values per slide.
SLIDE_FEATURES = 23
#: Values per position.
SUMMARY_FEATURES = 9


class SlideLookahead(nn.Module):
    """``(per_slide [B, 64, 23], summary [B, 9])`` from observations ``[B, 899]`` (module doc)."""

    def __init__(self) -> None:
        super().__init__()
        const = np.zeros((NUM_SLIDE, 8), dtype=np.float32)
        for a in range(NUM_SLIDE):
            const[a, a >> 4] = 1.0  # side
            const[a, 4 + ((a >> 2) & 3)] = 1.0  # colour
        take = np.zeros((NUM_SLIDE, 16), dtype=np.float32)
        take[np.arange(NUM_SLIDE), SLIDE_SOURCE] = 1.0
        buffers = {
            "src": torch.as_tensor(SLIDE_SRC, dtype=torch.int64),  # [64, 16] cell sources into ext
            "eject": torch.as_tensor(SLIDE_EJECT, dtype=torch.int64),
            "zone_of": torch.as_tensor(SLIDE_SOURCE, dtype=torch.int64),
            "take": torch.as_tensor(take),  # [64, 16] the own-zone entry each slide takes from
            "accept": torch.as_tensor(accept_table().reshape(40, 16)),
            "best": torch.as_tensor(BEST_COUNT.reshape(-1), dtype=torch.float32),  # [code * 16 + colour mask]
            "const": torch.as_tensor(const),
            "pow4": torch.tensor([64.0, 16.0, 4.0, 1.0]),
            "bits": torch.tensor([1.0, 2.0, 4.0, 8.0]),
            "colours": torch.arange(4.0),
        }
        for name, value in buffers.items():
            self.register_buffer(name, value, persistent=False)

    @torch.no_grad()
    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b = obs.shape[0]
        onehot = obs[:, SLICES["seat0.stage"]].reshape(b, 16, 4)
        colour = onehot.argmax(dim=2).float()  # [b, 16] colour id of every cell
        present = obs[:, SLICES["seat0.slot_present"]]
        figure = obs[:, SLICES["seat0.slot_figure"]].reshape(b, 4, 16)
        cells = figure.topk(4, dim=2).indices.reshape(b, 16)  # the 4 cells of each slot's figure
        accepted = accepted_colours(obs, self.accept) * present.unsqueeze(2)  # [b, slot, colour]
        mask = (accepted @ self.bits).long()  # [b, slot] 4-bit set of accepted colours
        ext = torch.cat([colour, self.colours.expand(b, 4)], dim=1)  # [b, 20]: cells, then the slid-in colour
        stage1 = torch.gather(ext, 1, self.src.reshape(1, -1).expand(b, -1)).reshape(b, NUM_SLIDE, 16)
        fig1 = torch.gather(stage1, 2, cells.unsqueeze(1).expand(b, NUM_SLIDE, 16)).reshape(b, NUM_SLIDE, 4, 4)
        after1 = self.best[(fig1 @ self.pow4).long() * 16 + mask.unsqueeze(1)]  # [b, a, slot]
        ext1 = torch.cat([stage1, self.colours.expand(b, NUM_SLIDE, 4)], dim=2)  # [b, a, 20]
        index2 = self.src[:, cells].permute(1, 0, 2).reshape(b, 1, NUM_SLIDE * 16)  # [b, 1, (b2, slot, cell)]
        fig2 = torch.gather(ext1, 2, index2.expand(b, NUM_SLIDE, NUM_SLIDE * 16))
        codes2 = (fig2.reshape(-1, 4) @ self.pow4).long().reshape(b, NUM_SLIDE, NUM_SLIDE, 4)
        counts2 = self.best[codes2 * 16 + mask.reshape(b, 1, 1, 4)]  # [b, a, b2, slot]
        zones = obs[:, SLICES["own_zones"]]  # [b, 16] own zones, side * 4 + colour
        left = zones.unsqueeze(1) - self.take.unsqueeze(0)  # [b, a, 16] after slide a took its umbrella
        follow = (left[:, :, self.zone_of] > 0).float()  # [b, a, b2] second slides still possible
        after2 = torch.maximum((counts2 * follow.unsqueeze(3)).amax(dim=2), after1)
        complete1 = (after1.amax(dim=2, keepdim=True) >= 4).float()
        complete2 = (after2.amax(dim=2, keepdim=True) >= 4).float()
        per_slide = torch.cat(
            [
                after1 / 4,
                complete1,
                after2 / 4,
                complete2,
                self.const.expand(b, NUM_SLIDE, 8),
                onehot[:, self.eject],
                zones[:, self.zone_of].unsqueeze(2) / 9.0,
            ],
            dim=2,
        )
        summary = torch.cat([after1.amax(dim=1) / 4, after2.amax(dim=1) / 4, complete1.sum(dim=1) / 8], dim=1)
        return per_slide, summary
