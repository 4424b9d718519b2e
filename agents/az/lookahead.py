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
``agents.common.BEST_COUNT`` table.  A code is linear in the stage, so the codes of all
64 x 64 slide pairs and 4 slots come from one matrix product per observation ([64, 37] x
[37, 256]: the stage after the first slide and its own-zone entry, against the figure
weights read through every second slide, the colour masks and the blocked pairs), and one
table lookup; all values are small integers, exact in float32 (the default matmul
precision; a reduced one such as bfloat16 would not be).  About 0.07 ms per observation on
one core at batch 32 (0.3 ms for the gather of 64 x 64 x 16 cells it replaced; same values).
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
#: The stage extended by the four colours a slide can bring in.
_EXT = 20
#: Index offset of a second slide that cannot follow the first (a zero count).
_BLOCKED = 4096


class SlideLookahead(nn.Module):
    """``(per_slide [B, 64, 23], summary [B, 9])`` from observations ``[B, 899]`` (module doc)."""

    # buffers (register_buffer below), declared for the type checker
    src: torch.Tensor
    eject: torch.Tensor
    zone_of: torch.Tensor
    read: torch.Tensor
    takes: torch.Tensor
    same_zone: torch.Tensor
    eye16: torch.Tensor
    accept: torch.Tensor
    best: torch.Tensor
    const: torch.Tensor
    pow4: torch.Tensor
    bits: torch.Tensor
    colours: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        const = np.zeros((NUM_SLIDE, 8), dtype=np.float32)
        for a in range(NUM_SLIDE):
            const[a, a >> 4] = 1.0  # side
            const[a, 4 + ((a >> 2) & 3)] = 1.0  # colour
        # read[y, x, b]: after slide b, cell x holds what ext[y] held (ext: 16 cells, then 4 colours)
        read = np.zeros((_EXT, 16, NUM_SLIDE), dtype=np.float32)
        read[SLIDE_SRC.T, np.arange(16)[:, None], np.arange(NUM_SLIDE)[None, :]] = 1.0
        # per first slide a: the one-hot of the own-zone entry it takes from, then a constant 1
        takes = np.zeros((NUM_SLIDE, 17), dtype=np.float32)
        takes[np.arange(NUM_SLIDE), SLIDE_SOURCE] = 1.0
        takes[:, 16] = 1.0
        buffers = {
            "src": torch.as_tensor(SLIDE_SRC, dtype=torch.int64),  # [64, 16] cell sources into ext
            "eject": torch.as_tensor(SLIDE_EJECT, dtype=torch.int64),
            "zone_of": torch.as_tensor(SLIDE_SOURCE, dtype=torch.int64),
            "read": torch.as_tensor(read),
            "takes": torch.as_tensor(takes),
            # same_zone[z, b]: slide b takes from own-zone entry z
            "same_zone": torch.as_tensor((np.arange(16)[:, None] == SLIDE_SOURCE[None, :]).astype(np.float32)),
            "eye16": torch.eye(16),
            "accept": torch.as_tensor(accept_table().reshape(40, 16)),
            # [code * 16 + colour mask], then zeros from _BLOCKED on (a second slide that cannot follow)
            "best": torch.cat([torch.as_tensor(BEST_COUNT.reshape(-1), dtype=torch.float32), torch.zeros(_BLOCKED)]),
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
        cells = figure.topk(4, dim=2).indices  # [b, slot, k] the 4 cells of each slot's figure
        accepted = accepted_colours(obs, self.accept) * present.unsqueeze(2)  # [b, slot, colour]
        mask = accepted @ self.bits  # [b, slot] 4-bit set of accepted colours
        # weight[b, x, slot]: the base-4 weight of cell x in the slot's figure code (0 off the figure)
        weight = (self.eye16[cells] * self.pow4[:, None]).sum(dim=2).transpose(1, 2)
        ext = torch.cat([colour, self.colours.expand(b, 4)], dim=1)  # [b, 20]: cells, then the slid-in colour
        stage1 = torch.gather(ext, 1, self.src.reshape(1, -1).expand(b, -1)).reshape(b, NUM_SLIDE, 16)
        after1 = self.best[((stage1 @ weight) * 16 + mask.unsqueeze(1)).long()]  # [b, a, slot]
        zones = obs[:, SLICES["own_zones"]]  # [b, 16] own zones, side * 4 + colour
        # Second slides, as one matrix product per observation: the best-count index of slot s
        # after slides a then b2 is  code(a, b2, s) * 16 + mask[s] + _BLOCKED * (b2 cannot follow a),
        # linear in a's stage (through `read`: which ext entry every cell reads after b2) and in
        # the one-hot of a's own-zone entry (b2 cannot follow when its entry is empty after a).
        code = torch.einsum("yxc,bxs->bysc", self.read, weight * 16)  # [b, 20, slot, b2]
        blocked = (zones[:, self.zone_of].unsqueeze(1) - self.same_zone <= 0).float() * _BLOCKED  # [b, 16, b2]
        rows = torch.cat(
            [
                code.reshape(b, _EXT, 4 * NUM_SLIDE),
                blocked.unsqueeze(2).expand(b, 16, 4, NUM_SLIDE).reshape(b, 16, 4 * NUM_SLIDE),
                mask.unsqueeze(2).expand(b, 4, NUM_SLIDE).reshape(b, 1, 4 * NUM_SLIDE),
            ],
            dim=1,
        )
        first = torch.cat([stage1, self.colours.expand(b, NUM_SLIDE, 4), self.takes.expand(b, NUM_SLIDE, 17)], dim=2)
        index = (first @ rows).int().reshape(-1)  # [b, a, slot, b2], exact: integers below 2**13
        counts2 = self.best.index_select(0, index).reshape(b, NUM_SLIDE, 4, NUM_SLIDE)
        after2 = torch.maximum(counts2.amax(dim=3), after1)
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
