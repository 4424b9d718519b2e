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

With ``heuristic_inputs`` the network also reads the **heuristic agent's value of every
legal action** (:func:`heuristic_inputs`, computed from the game by
:meth:`agents.heuristic.HeuristicAgent.action_values`, which uses public information only):
relative to the best legal action, divided by :data:`HEURISTIC_SCALE` and clipped to
``[-HEURISTIC_CLIP, 0]``.  A slide's value is one more input of the shared slide scorer, and
every action's logit gains a learned weight (one per phase) times its value, so the policy
starts from the heuristic's ranking and learns where the search disagrees with it.  Such a
network needs the game at every call (``needs_game``).

A checkpoint is a ``.pt`` file (``{"meta": ..., "state_dict": ...}``, weights stored as
float16 to keep the shipped models small) plus a ``.json`` sidecar with the same
metadata: players, level, observation size, action count, architecture, and how the model
was made, and the ``.pt`` file's SHA-256.  :func:`load_network` refuses a model of another
configuration with the words of :mod:`agents.checkpoint`, a model of an older network
format with a word to retrain it, and a file its sidecar does not describe (another
SHA-256, another game or shape than its own copy of the metadata, weights not finite).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from agents.az.lookahead import SLIDE_FEATURES, SUMMARY_FEATURES, SlideLookahead
from agents.checkpoint import (
    CONFIGURATION_KEYS,
    TORCH_RNG_LOCK,
    base_metadata,
    check_configuration,
    check_finite_weights,
    compressed_record,
    meta_mismatch,
    nonfinite_weights,
    one_line,
    read_sidecar,
    save_with_sidecar,
    sidecar_path,
    weights_beyond,
)
from agents.checks import MAX_C_SCALE, MAX_LAYER_SIZE, MAX_LAYERS
from agents.features import FigureFeatures
from agents.heuristic import HeuristicAgent
from umbrella_env.cli_args import command_name, int_problem, real_problem
from umbrella_env.core import actions as A
from umbrella_env.core.actions import NUM_ACTIONS
from umbrella_env.core.observation import OBS_SIZE, observation_bounds
from umbrella_env.core.single import SingleGame

#: Solo values are final scores divided by this (a score of 40 is a value of 1).
SOLO_SCALE = 40.0
#: Default trunk layer sizes and slide-scorer width (two shipped float16 models stay under 2 MB).
DEFAULT_HIDDEN: tuple[int, ...] = (192, 192)
DEFAULT_SLIDE_HIDDEN = 64
FORMAT = "umbrella-az-2"
#: The weights' type in a checkpoint file, and the largest magnitude it holds.
STORED_DTYPE = torch.float16
MAX_STORED = float(torch.finfo(STORED_DTYPE).max)
#: ``now`` + ``open`` of FigureFeatures (the per-slide part is replaced by SlideLookahead).
_FIGURE_GLOBAL = 32
#: First action id after the slides and fallbacks (validations, swaps, faces, covers follow).
_OTHER_START = A.VALIDATE_START
_NUM_FALLBACK = _OTHER_START - A.FALLBACK_START
_NUM_ZONES = _NUM_FALLBACK // A.NUM_SLIDE
#: Heuristic inputs: (value - best legal value) / HEURISTIC_SCALE, clipped to [-HEURISTIC_CLIP, 0].
HEURISTIC_SCALE = 4.0
HEURISTIC_CLIP = 4.0
#: The initial weight of the heuristic input in every logit (the policy starts near the heuristic's).
_HEURISTIC_GAIN = 2.0


def _fallback_tables() -> tuple[np.ndarray, np.ndarray]:
    """For each fallback id: the slide with the same stage effect, and its zone."""
    f = np.arange(_NUM_FALLBACK)
    zone, colour, side, line = f // 64, (f // 16) % 4, (f // 4) % 4, f % 4
    return side * 16 + colour * 4 + line, zone


def value_size(num_players: int) -> int:
    """Values per position: one per seat at 2-4 players, one (the score) in solo."""
    return 1 if num_players == 1 else num_players


def heuristic_inputs(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """float32 [968]: the heuristic inputs of one position from the heuristic's values of its
    ``legal`` actions (module doc); illegal actions get the clip value."""
    out = np.full(NUM_ACTIONS, -HEURISTIC_CLIP, dtype=np.float32)
    v = np.asarray(values, dtype=np.float64)
    out[legal] = np.clip((v - v.max()) / HEURISTIC_SCALE, -HEURISTIC_CLIP, 0.0)
    return out


class HeuristicInputs:
    """The heuristic inputs of positions: ``inputs(game, legal) -> float32 [968]`` from the
    values of the default :class:`~agents.heuristic.HeuristicAgent` (public information only).
    Its generator (solo cover ties inside a validation's value) is re-seeded at every call,
    so a position always gets the same inputs."""

    def __init__(self) -> None:
        self.agent = HeuristicAgent(seed=0)

    def __call__(self, game: SingleGame, legal: np.ndarray | Sequence[int]) -> np.ndarray:
        legal = np.asarray(legal, dtype=np.int64)
        self.agent.reset(0)
        return heuristic_inputs(self.agent.action_values(game, legal), legal)


class AZNet(nn.Module):
    """Policy logits [B, 968] and values [B, value_size(P)] from observations [B, 899] and,
    with ``heuristic_inputs``, the heuristic inputs [B, 968] (module doc)."""

    # buffers (register_buffer below), declared for the type checker
    inv_high: torch.Tensor
    fb_slide: torch.Tensor
    fb_zone: torch.Tensor
    action_phase: torch.Tensor

    def __init__(
        self,
        num_players: int,
        hidden: Sequence[int] = DEFAULT_HIDDEN,
        slide_hidden: int = DEFAULT_SLIDE_HIDDEN,
        heuristic_inputs: bool = False,
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
        self.heuristic_inputs = bool(heuristic_inputs)
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
        self.slide_input = nn.Linear(SLIDE_FEATURES + self.heuristic_inputs, self.slide_hidden)
        self.slide_score = nn.Sequential(
            nn.ReLU(), nn.Linear(self.slide_hidden, self.slide_hidden), nn.ReLU(), nn.Linear(self.slide_hidden, 1)
        )
        self.slide_bias = nn.Parameter(torch.zeros(A.NUM_SLIDE))
        self.zone = nn.Linear(width, _NUM_ZONES)
        self.other = nn.Linear(width, NUM_ACTIONS - _OTHER_START)
        self.value = nn.Linear(width, value_size(num_players))
        if self.heuristic_inputs:
            self.register_buffer("action_phase", torch.as_tensor(A.ACTION_PHASE.astype(np.int64)), persistent=False)
            self.heuristic_gain = nn.Parameter(torch.full((len(A.PHASE_RANGES),), _HEURISTIC_GAIN))

    @property
    def needs_game(self) -> bool:
        """Whether every call needs the game (for the heuristic inputs)."""
        return self.heuristic_inputs

    def _check_inputs(self, heur: torch.Tensor | np.ndarray | None) -> None:
        if self.heuristic_inputs and heur is None:
            raise ValueError("this network reads the heuristic's action values: pass heur=heuristic inputs [B, 968]")
        if not self.heuristic_inputs and heur is not None:
            raise ValueError("this network has no heuristic inputs: pass heur=None")

    @torch.no_grad()
    def encode(
        self, obs: torch.Tensor, heur: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """The trunk's input [B, 940], the per-slide features [B, 64, 23 (+1)] and the heuristic
        inputs (no parameters: a trainer may compute them once per sample)."""
        self._check_inputs(heur)
        fig = self.features(obs)[:, OBS_SIZE : OBS_SIZE + _FIGURE_GLOBAL]
        per_slide, summary = self.lookahead(obs)
        if heur is not None:
            per_slide = torch.cat([per_slide, heur[:, : A.NUM_SLIDE, None]], dim=2)
        return torch.cat([obs * self.inv_high, fig, summary], dim=1), per_slide, heur

    def heads(
        self, x: torch.Tensor, per_slide: torch.Tensor, heur: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits and values from :meth:`encode`'s output."""
        h = self.trunk(x)
        slides = self.slide_score(self.slide_input(per_slide) + self.slide_context(h).unsqueeze(1)).squeeze(2)
        slides = slides + self.slide_bias
        fallbacks = slides[:, self.fb_slide] + self.zone(h)[:, self.fb_zone]
        logits = torch.cat([slides, fallbacks, self.other(h)], dim=1)
        if heur is not None:
            logits = logits + self.heuristic_gain[self.action_phase] * heur
        v = self.value(h)
        return logits, (v if self.num_players == 1 else torch.tanh(v))

    def forward(self, obs: torch.Tensor, heur: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return self.heads(*self.encode(obs, heur))

    @torch.no_grad()
    def predict(self, obs: np.ndarray, heur: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """float32 logits [B, 968] and values [B, value_size] of a NumPy batch (no gradient);
        ``heur``: the heuristic inputs [B, 968] of a network that reads them."""
        self._check_inputs(heur)
        h = None if heur is None else torch.as_tensor(heur, dtype=torch.float32)
        logits, values = self(torch.as_tensor(obs, dtype=torch.float32), h)
        return logits.numpy(), values.numpy()


# --------------------------------------------------------------------------- files
def save_network(net: AZNet, path: str | Path, *, plate_level: int, extra: dict[str, Any] | None = None) -> None:
    """Write ``path`` (.pt, float16 weights) and its ``.json`` sidecar; a ``ValueError``
    (nothing written) for weights that float16 cannot hold (beyond +-:data:`MAX_STORED`, or
    not finite): such a file would load as infinities and be refused."""
    broken = nonfinite_weights(net.state_dict()) or weights_beyond(net.state_dict(), MAX_STORED)
    if broken:
        raise ValueError(
            f"cannot save {str(path)!r}: weights not finite or beyond +-{MAX_STORED:,.0f} (float16) in {broken}"
        )
    meta = {
        "format": FORMAT,
        **base_metadata(net.num_players, plate_level),
        "hidden": list(net.hidden),
        "slide_hidden": net.slide_hidden,
        "heuristic_inputs": net.heuristic_inputs,
        "value": "score / 40" if net.num_players == 1 else "per seat, observer-relative, in [-1, 1]",
        **(extra or {}),
    }
    state = {k: v.detach().to(STORED_DTYPE) for k, v in net.state_dict().items()}
    save_with_sidecar(path, meta, lambda file: torch.save({"meta": meta, "state_dict": state}, file))


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The sidecar of a ``.pt`` checkpoint, or a ``ValueError`` saying what is wrong."""
    meta = read_sidecar(path, ".pt", "the alphazero trainer")
    if meta.get("format") == "umbrella-az-1":
        raise ValueError(
            f"checkpoint {str(path)!r} is an alphazero network of the older format 'umbrella-az-1' "
            f"(before the per-slide look-ahead head); retrain it with this version ({FORMAT!r})"
        )
    if meta.get("format") != FORMAT or "hidden" not in meta:
        ppo = f"a MaskablePPO checkpoint ({command_name('train.py', 'umbrella-train')} --algo ppo)"
        written = ppo if Path(path).suffix.lower() == ".zip" else None
        found = written or f"its sidecar says format {meta.get('format')!r}"
        raise ValueError(
            f"checkpoint {str(path)!r} is not an alphazero network ({found}); "
            f"expected a .pt written by the alphazero trainer (format {FORMAT!r})"
        )
    problem = _architecture_problem(meta)
    if problem:
        raise ValueError(f"metadata {str(sidecar_path(path))!r}: {problem}")
    return meta


def _architecture_problem(meta: dict[str, Any]) -> str:
    """What is wrong with the network a sidecar describes, or the search settings it records
    ('' when nothing): checked before a network of that shape is allocated."""
    hidden, heuristic = meta["hidden"], meta.get("heuristic_inputs", False)
    wanted = f"'hidden' must be a list of 1 to {MAX_LAYERS} layer sizes, integers from 1 to {MAX_LAYER_SIZE:,}"
    if not (isinstance(hidden, list) and hidden):
        return f"{wanted}, got {hidden!r}"
    if len(hidden) > MAX_LAYERS:
        return f"{wanted}, got {len(hidden)} layers"
    bad = next((k for k, h in enumerate(hidden) if int_problem("", h, 1, MAX_LAYER_SIZE)), None)
    if bad is not None:
        return f"{wanted}, got {hidden!r}" if len(hidden) <= 4 else f"{wanted}; layer {bad} is {hidden[bad]!r}"
    if not isinstance(heuristic, bool):
        return f"'heuristic_inputs' must be true or false, got {heuristic!r}"
    checks = (  # the slide scorer's width, then the search settings an agent takes from the sidecar
        ("slide_hidden", lambda v: int_problem("'slide_hidden'", v, 1, MAX_LAYER_SIZE)),
        ("max_considered", lambda v: int_problem("'max_considered'", v, 2)),
        ("rollout_turns", lambda v: int_problem("'rollout_turns'", v, 1)),
        ("c_scale", lambda v: real_problem("'c_scale'", v, positive=True, maximum=MAX_C_SCALE)),
        ("rollout_weight", lambda v: real_problem("'rollout_weight'", v, minimum=0.0, maximum=1.0)),
    )
    return next((problem for key, check in checks if key in meta and (problem := check(meta[key]))), "")


def load_network(
    path: str | Path, *, num_players: int | None = None, plate_level: int | None = None
) -> tuple[AZNet, dict[str, Any]]:
    """The network of a ``.pt`` checkpoint (eval mode, float32) and its metadata; a
    ``ValueError`` for a missing file or sidecar, a model of another configuration, or weights
    that are not those of the network the sidecar describes.  Loading leaves torch's random
    generator as it was (as :func:`agents.policy.load_model` does; loads in several threads
    too, :data:`agents.checkpoint.TORCH_RNG_LOCK`)."""
    meta = read_metadata(path)
    check_configuration(meta, path, num_players=num_players, plate_level=plate_level)
    expected = "expected a torch checkpoint written by this project's alphazero trainer"
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head[:2] != b"PK" and head[:1] != b"\x80":  # torch.save's zip archive, or its older pickle
        raise ValueError(f"checkpoint {str(path)!r} is not a torch file; {expected}")
    packed = compressed_record(path)
    if packed is not None:
        raise ValueError(
            f"checkpoint {str(path)!r} holds a compressed record ({packed}), which torch.save never writes and "
            f"which could inflate far past the file's size; {expected}"
        )
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # a truncated or foreign file
        raise ValueError(f"checkpoint {str(path)!r} is unreadable ({one_line(exc)}); {expected}") from None
    state = blob.get("state_dict") if isinstance(blob, dict) else None
    if not (isinstance(state, dict) and all(isinstance(v, torch.Tensor) for v in state.values())):
        raise ValueError(f"checkpoint {str(path)!r} holds no network weights ('state_dict'); {expected}")
    shape = (
        int(meta["num_players"]),
        meta["hidden"],
        meta.get("slide_hidden", DEFAULT_SLIDE_HIDDEN),
        meta.get("heuristic_inputs", False),
    )
    with torch.device("meta"):  # the shapes the sidecar describes, no memory allocated for them yet
        wanted = AZNet(*shape).state_dict()
    mismatch = _weights_mismatch(wanted, state) or meta_mismatch(blob.get("meta"), meta, _CONFIGURATION_KEYS)
    if mismatch:
        sidecar = str(sidecar_path(path))
        raise ValueError(f"checkpoint {str(path)!r} does not match its sidecar {sidecar!r}: {mismatch}")
    check_finite_weights(path, state)
    with TORCH_RNG_LOCK, torch.random.fork_rng(devices=[]):  # the initial weights, overwritten below, draw from it
        net = AZNet(*shape)
    net.load_state_dict({k: v.float() for k, v in state.items()})
    net.eval()
    return net, meta


#: The sidecar keys a checkpoint's own copy of its metadata must agree on: the game and the
#: network's shape (an edited sidecar let a level-1 network pass as a level-2 one).
_CONFIGURATION_KEYS = (*CONFIGURATION_KEYS, "hidden", "slide_hidden", "heuristic_inputs")


def _weights_mismatch(want: dict[str, torch.Tensor], got: dict[str, torch.Tensor]) -> str:
    """How the weights of a file differ from those of the network its sidecar describes, in
    one line ('' when they fit): torch's own message is many lines, one per tensor."""
    missing = [k for k in want if k not in got]
    unexpected = [k for k in got if k not in want]
    reshaped = [k for k in want if k in got and got[k].shape != want[k].shape]
    problems = []
    if missing:
        problems.append(f"{len(missing)} tensor(s) missing from the file (first: {missing[0]})")
    if unexpected:
        problems.append(f"{len(unexpected)} tensor(s) the sidecar's network lacks (first: {unexpected[0]})")
    if reshaped:
        k = reshaped[0]
        problems.append(
            f"{len(reshaped)} tensor(s) of another shape (first: {k}, {tuple(got[k].shape)} in the file, "
            f"{tuple(want[k].shape)} for the sidecar)"
        )
    return "; ".join(problems)
