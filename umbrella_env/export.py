"""Export a trained policy to ONNX, to play it without torch (``agents.onnx_agent``).

    python -m umbrella_env.export runs/strong/best.zip best.onnx
    python -m umbrella_env.export agents/models/az-2p.pt az-2p.onnx

reads a MaskablePPO checkpoint (the ``.zip`` and its ``.json`` sidecar written by
training) or a Gumbel AlphaZero network (a ``.pt`` and its sidecar, :mod:`agents.az.net`;
the exported value is the observer's own, column 0 of its per-seat values), writes an
ONNX graph ``(observation, action_mask) -> (logits, value)`` whose ``metadata_props``
carry the sidecar (players, plate level, observation size, action count, ...), the
source checkpoint's name and SHA-256 and the umbrella-env version, then checks that
onnxruntime reproduces the torch policy on observations of seeded games of the
checkpoint's configuration.  The graph's inputs, outputs and masking convention are
those of :mod:`agents.onnx_agent` (illegal actions get the logit
:data:`~agents.onnx_agent.MASKED_LOGIT` = -1e8).

Any network of the same shape exports through :func:`export_module`: a torch module
taking ``(observation float32 [B, 899], action_mask bool [B, 968])`` and returning
``(logits [B, 968], value [B] or [B, 1])``.  The exporter applies the mask itself, so a
module may return raw logits.  :class:`MaskablePPONet` adapts a MaskablePPO policy to that
contract; a future policy+value network plugs in directly.

Needs the ``train`` extra (torch, sb3-contrib, and the ``onnx`` package that torch's
exporter uses, plus onnxruntime for the check).  This module sits above ``agents``.
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
import sys
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from umbrella_env.cli_args import HelpFormatter, command, install_hint, missing_extra

try:
    import torch
    from torch import nn
except ImportError as exc:  # pragma: no cover - exercised only without the train extra
    missing_extra(__name__, exc, "exporting to ONNX")
if TYPE_CHECKING:
    from stable_baselines3.common.policies import ActorCriticPolicy

import umbrella_env
from agents.az.agent import SHIPPED_MODELS, model_file
from agents.az.net import load_network
from agents.checkpoint import check_metadata, file_sha256
from agents.onnx_agent import INPUT_NAMES, MASKED_LOGIT, ONNX_FORMAT, OUTPUT_NAMES, OnnxAgent, encode_metadata
from agents.policy import load_model, read_metadata
from umbrella_env.cli_args import first_problem, int_problem, path_option, program_name
from umbrella_env.core import engine as E
from umbrella_env.core.actions import NUM_ACTIONS
from umbrella_env.core.config import GameConfig
from umbrella_env.core.observation import OBS_SIZE, observe
from umbrella_env.core.playout import policy_actions
from umbrella_env.paths import output_file_problem, write_atomically

#: The ONNX opset of the exported graphs (onnxruntime >= 1.13 runs it).
OPSET = 17
#: The opsets ``--opset`` accepts: 14 is the oldest this graph was checked with, 20 the
#: newest torch's TorchScript-based exporter writes.
OPSETS = range(14, 21)
#: Largest |torch - onnxruntime| difference of a logit or value the post-export check accepts.
TOLERANCE = 1e-4


class MaskablePPONet(nn.Module):
    """A MaskablePPO policy (``model.policy``) as ``(observation, action_mask) -> (logits, value)``.

    The same computation as the policy's ``forward`` (features extractor, shared or
    separate; the actor and critic MLPs; the action and value heads), without sampling.
    """

    policy: ActorCriticPolicy

    def __init__(self, policy: ActorCriticPolicy) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        p = self.policy
        features = p.extract_features(observation)
        if p.share_features_extractor:
            latent_pi, latent_vf = p.mlp_extractor(features)
        else:
            pi_features, vf_features = features
            latent_pi = p.mlp_extractor.forward_actor(pi_features)
            latent_vf = p.mlp_extractor.forward_critic(vf_features)
        return p.action_net(latent_pi), p.value_net(latent_vf)


class _Masked(nn.Module):
    """The exported graph: the module's logits with illegal actions at MASKED_LOGIT, value [B]."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits, value = self.module(observation, action_mask)
        logits = logits.masked_fill(~action_mask, MASKED_LOGIT)
        return logits, value.reshape(-1)


def masked_outputs(module: nn.Module, observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the exported graph computes, in torch: masked logits [n, 968] and values [n]."""
    with torch.no_grad():
        logits, value = _Masked(module).eval()(
            torch.as_tensor(observations, dtype=torch.float32), torch.as_tensor(np.asarray(masks) != 0)
        )
    return logits.numpy(), value.numpy()


def _check_outputs(module: nn.Module) -> None:
    obs, mask = torch.zeros(3, OBS_SIZE), torch.ones(3, NUM_ACTIONS, dtype=torch.bool)
    with torch.no_grad():
        out = module(obs, mask)
    if not (isinstance(out, tuple) and len(out) == 2 and all(isinstance(t, torch.Tensor) for t in out)):
        raise ValueError(f"the module must return (logits, value) tensors, got {type(out).__name__}")
    logits, value = out
    if tuple(logits.shape) != (3, NUM_ACTIONS) or tuple(value.shape) not in ((3,), (3, 1)):
        raise ValueError(
            f"the module must map observations [B, {OBS_SIZE}] to logits [B, {NUM_ACTIONS}] and values [B] or "
            f"[B, 1]; for B=3 it returned {tuple(logits.shape)} and {tuple(value.shape)}"
        )


#: One export at a time: torch's TorchScript exporter keeps a process-wide "exporting" flag,
#: so an export started while another thread's ran failed ("GLOBALS.in_onnx_export must be
#: False").
_EXPORTING = threading.Lock()

#: What torch's classic (TorchScript) exporter warns, which :func:`export_module` hides, and
#: nothing else: it is deprecated in favour of the dynamo exporter, which needs onnxscript;
#: the graph here is static, which the classic exporter handles.  (``catch_warnings`` is
#: process-wide: another thread's warnings during an export are filtered the same way.)
_CLASSIC_EXPORTER_WARNINGS = (
    "You are using the legacy TorchScript-based ONNX export",
    "The feature will be removed",
)


def export_module(module: nn.Module, meta: Mapping[str, Any], path: str | Path, *, opset: int = OPSET) -> Path:
    """Write ``module`` to the ONNX file ``path`` with ``meta`` in its ``metadata_props``.

    ``module``: ``(observation float32 [B, 899], action_mask bool [B, 968]) -> (logits, value)``
    (see the module doc); ``meta``: at least ``num_players``, ``plate_level``, ``obs_size``,
    ``num_actions`` (:mod:`agents.checkpoint`); ``umbrella_env_version`` and ``format`` are
    added.  The batch axis is dynamic.  The file appears only once complete.
    """
    try:
        import onnx
    except ImportError:
        raise ImportError(
            f"exporting to ONNX needs the onnx package (torch's exporter writes through it): {install_hint('train')}"
        ) from None

    path = Path(path)
    meta = check_metadata(meta, path, "the metadata to export")
    module = module.eval()
    _check_outputs(module)
    props = {**meta, "format": ONNX_FORMAT, "umbrella_env_version": umbrella_env.__version__}
    example = (torch.zeros(2, OBS_SIZE), torch.ones(2, NUM_ACTIONS, dtype=torch.bool))
    batch = {0: "batch"}

    def write(tmp: Path) -> None:
        with _EXPORTING, warnings.catch_warnings():
            for message in _CLASSIC_EXPORTER_WARNINGS:
                warnings.filterwarnings("ignore", message=re.escape(message), category=DeprecationWarning)
            torch.onnx.export(
                _Masked(module),
                example,
                str(tmp),
                input_names=list(INPUT_NAMES),
                output_names=list(OUTPUT_NAMES),
                dynamic_axes={name: batch for name in (*INPUT_NAMES, *OUTPUT_NAMES)},
                opset_version=opset,
                dynamo=False,
            )
        model = onnx.load(str(tmp))
        onnx.helper.set_model_props(model, encode_metadata(props))
        model.doc_string = (
            f"umbrella-env policy: observation float32 [batch, {OBS_SIZE}], action_mask bool [batch, "
            f"{NUM_ACTIONS}] -> logits float32 [batch, {NUM_ACTIONS}] (illegal actions = {MASKED_LOGIT:g}), "
            "value float32 [batch]"
        )
        onnx.checker.check_model(model)
        onnx.save(model, str(tmp))

    write_atomically(path, write)
    return path


def load_maskable_ppo(checkpoint: str | Path) -> tuple[nn.Module, dict[str, Any]]:
    """The :class:`MaskablePPONet` of a training checkpoint and the metadata to export: its
    sidecar plus ``source_checkpoint`` (the file name) and ``source_sha256``.
    ``ValueError`` for a missing, foreign or corrupt checkpoint, or a policy for other
    observation or action spaces than Umbrella's."""
    meta = source_metadata(read_metadata(checkpoint), checkpoint)
    model = load_model(checkpoint)
    return MaskablePPONet(model.policy).eval(), meta


def source_metadata(meta: dict[str, Any], checkpoint: str | Path) -> dict[str, Any]:
    """A checkpoint's sidecar as an export's metadata: less its file's ``sha256`` (the graph's
    would be another), plus ``source_checkpoint`` (the file name) and ``source_sha256``; the
    version that wrote the checkpoint is kept as ``source_umbrella_env_version`` (the export's
    own ``umbrella_env_version`` is the exporter's)."""
    kept = {k: v for k, v in meta.items() if k not in ("sha256", "umbrella_env_version")}
    if "umbrella_env_version" in meta:
        kept["source_umbrella_env_version"] = meta["umbrella_env_version"]
    return dict(kept, source_checkpoint=Path(checkpoint).name, source_sha256=file_sha256(checkpoint))


#: The ``value`` metadata of an exported 2-4 player alphazero network: what its graph outputs.
AZ_VALUE = "the deciding seat's own, in [-1, 1] (column 0 of the network's observer-relative per-seat values)"


class AZPolicyNet(nn.Module):
    """A Gumbel AlphaZero network as ``(observation, action_mask) -> (logits, value)``: the
    value is the observer's (solo: the scaled final score; 2-4 players: column 0 of the
    observer-relative values)."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits, values = self.net(observation)
        return logits, values[:, 0]


def load_az(checkpoint: str | Path) -> tuple[nn.Module, dict[str, Any]]:
    """The :class:`AZPolicyNet` of an alphazero ``.pt`` checkpoint and the metadata to export."""
    net, meta = load_network(checkpoint)
    if net.heuristic_inputs:
        raise ValueError(
            f"checkpoint {str(checkpoint)!r} reads the heuristic agent's action values (heuristic_inputs), "
            "which are computed from the game in Python, not from the observation: it cannot be exported "
            "to ONNX; export a network trained without --heuristic-inputs"
        )
    meta = source_metadata(meta, checkpoint)
    if meta["num_players"] > 1:  # the sidecar describes the network's per-seat values, not the graph's
        meta["value"] = AZ_VALUE
    return AZPolicyNet(net).eval(), meta


#: Checkpoint suffix -> its loader.
LOADERS = {".zip": load_maskable_ppo, ".pt": load_az}
#: The largest ``--check-positions`` (their observations take 4 kB each) and the positions
#: run through both networks at a time.
MAX_CHECK_POSITIONS = 100_000
PARITY_CHUNK = 1024


def sample_positions(config: GameConfig, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations [count, 899] and legal masks [count, 968] of seeded games of ``config``
    (random play that likes completing figures, :mod:`umbrella_env.core.playout`)."""
    rng = np.random.default_rng(seed)
    state = E.init(config, 16, seed=rng)
    obs, masks, total = [], [], 0
    while total < count:
        live = np.flatnonzero(~state.done)
        obs.append(observe(state)[live])
        masks.append(E.legal_action_mask(state)[live])
        total += live.size
        E.step(state, policy_actions(state, rng, 0.7))
        done = np.flatnonzero(state.done)
        if done.size:
            E.reset(state, done, rng)
    return np.concatenate(obs)[:count], np.concatenate(masks)[:count]


@dataclass
class Parity:
    """torch vs onnxruntime on the same positions."""

    positions: int
    max_logit_diff: float  # over the legal actions
    max_value_diff: float
    same_actions: int  # positions where both argmax to the same action
    #: the largest logit difference relative to its row's largest legal logit (at least 1):
    #: float32 carries about 7 digits, so a confident policy's logits of a few hundred differ
    #: by more than 1e-4 between two correct runtimes
    max_logit_rel: float = 0.0
    #: positions where onnxruntime's argmax is an illegal action (a broken mask; a legal one
    #: further from torch's than a near tie already fails :attr:`max_logit_rel`)
    other_actions: int = 0


def check_parity(
    module: nn.Module, onnx_path: str | Path, observations: np.ndarray, masks: np.ndarray, chunk: int = PARITY_CHUNK
) -> Parity:
    """Run ``module`` (torch) and the exported file (onnxruntime) on the same positions,
    ``chunk`` at a time (one pass over 20,000 positions took 6 GB)."""
    onnx = OnnxAgent(onnx_path)
    logit_diff = value_diff = logit_rel = 0.0
    same = other = 0
    for start in range(0, len(observations), chunk):
        obs, mask = observations[start : start + chunk], np.asarray(masks[start : start + chunk])
        want_logits, want_values = masked_outputs(module, obs, mask)
        got_logits, got_values = onnx.evaluate(obs, mask)
        legal = mask != 0
        gap = np.where(legal, np.abs(got_logits - want_logits), 0.0)
        size = np.maximum(1.0, np.where(legal, np.abs(want_logits), 0.0).max(axis=1, keepdims=True))
        logit_diff = max(logit_diff, _worst(gap[legal]))
        logit_rel = max(logit_rel, _worst((gap / size)[legal]))
        value_diff = max(value_diff, _worst(np.abs(got_values - want_values)))
        got, want = got_logits.argmax(1), want_logits.argmax(1)
        same += int((got == want).sum())
        other += int((~legal[np.arange(len(got)), got]).sum())
    return Parity(len(observations), logit_diff, value_diff, same, logit_rel, other)


def _worst(differences: np.ndarray) -> float:
    """The largest difference, or inf when one is not a number: a NaN output on either side
    fails the check (Python's ``max(0.0, nan)`` is 0.0, and passed a network of NaN)."""
    return float(differences.max()) if np.isfinite(differences).all() else math.inf


def export_checkpoint(checkpoint: str | Path, out: str | Path, *, opset: int = OPSET) -> Path:
    """Export a training checkpoint (``.zip`` MaskablePPO or ``.pt`` alphazero) to ``out``."""
    module, meta = LOADERS[Path(checkpoint).suffix.lower()](checkpoint)
    return export_module(module, meta, out, opset=opset)


def _missing_package(suffix: str, check_positions: int) -> str | None:
    """Why this export cannot run here (a package it needs is not installed), or None:
    asked before anything is loaded or written."""
    needs = [("onnx", "onnx", "torch's exporter writes through it")]
    if suffix == ".zip":
        needs.append(("sb3_contrib", "sb3-contrib", "it loads MaskablePPO checkpoints"))
    if check_positions:
        needs.append(("onnxruntime", "onnxruntime", "it checks the exported file; --check-positions 0 skips that"))
    for module, package, why in needs:
        try:
            importlib.import_module(module)
        except ImportError:
            return f"exporting needs {package} ({why}): {install_hint('train')}"
    return None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=program_name("python -m umbrella_env.export", ("umbrella-export",)),
        description="Export a MaskablePPO checkpoint (.zip) or an alphazero network (.pt), each with its .json "
        "sidecar, to ONNX, playable without torch (make_agent('model.onnx'), agents/onnx_agent.py).",
        formatter_class=HelpFormatter,
    )
    p.add_argument(
        "checkpoint",
        type=path_option,
        help=f"the .zip or .pt written by training (its .json sidecar beside it), or a shipped model's name "
        f"({', '.join(SHIPPED_MODELS)})",
    )
    p.add_argument("out", type=path_option, help="the .onnx file to write")
    p.add_argument("--overwrite", action="store_true", help="replace OUT if it exists (refused without it)")
    p.add_argument(
        "--opset", type=int, default=OPSET, help=f"ONNX opset, {OPSETS.start}-{OPSETS.stop - 1} (default {OPSET})"
    )
    p.add_argument(
        "--check-positions",
        type=int,
        default=512,
        metavar="N",
        help="positions of seeded games on which onnxruntime must reproduce torch (0: no check)",
    )
    return p


@command
def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.checkpoint = model_file(args.checkpoint)
    if args.checkpoint.suffix.lower() not in LOADERS:
        parser.error(
            f"checkpoint {str(args.checkpoint)!r} must be a .zip or .pt written by training, or a shipped model's "
            f"name ({', '.join(SHIPPED_MODELS)})"
        )
    problem = output_file_problem(args.out, ".onnx", overwrite=args.overwrite)
    if problem is not None:
        parser.error(f"output: {problem}")
    problem = first_problem(
        [
            int_problem("--opset", args.opset, OPSETS.start, OPSETS.stop - 1),
            int_problem("--check-positions", args.check_positions, 0, MAX_CHECK_POSITIONS),
        ]
    )
    if problem:
        parser.error(problem)
    missing = _missing_package(args.checkpoint.suffix.lower(), args.check_positions)
    if missing is not None:
        parser.error(missing)
    try:
        module, meta = LOADERS[args.checkpoint.suffix.lower()](args.checkpoint)
    except ValueError as exc:
        parser.error(str(exc))
    export_module(module, meta, args.out, opset=args.opset)
    players = "solo" if meta["num_players"] == 1 else f"{meta['num_players']} players"
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB): {players}, plate level {meta['plate_level']}")
    if args.check_positions:
        config = GameConfig(num_players=meta["num_players"], plate_level=meta["plate_level"])
        try:
            parity = check_parity(module, args.out, *sample_positions(config, args.check_positions))
        except KeyboardInterrupt:
            print(f"interrupted: {args.out} is written, its check against torch did not finish", file=sys.stderr)
            return 130
        print(
            f"onnxruntime vs torch on {parity.positions} positions: max |logit diff| {parity.max_logit_diff:.2e}, "
            f"max |value diff| {parity.max_value_diff:.2e}, same action {parity.same_actions}/{parity.positions}"
            + (
                f" (logits relative to their size: {parity.max_logit_rel:.2e})"
                if parity.max_logit_diff > 1.0 * TOLERANCE
                else ""
            )
        )
        if max(parity.max_logit_rel, parity.max_value_diff) > TOLERANCE or parity.other_actions:
            print(
                f"error: {args.out} differs from the checkpoint by more than {TOLERANCE:g}"
                + (
                    f", and chooses an illegal action at {parity.other_actions} position(s)"
                    if parity.other_actions
                    else ""
                )
                + " (the file is kept for a look; --overwrite replaces it)",
                file=sys.stderr,
            )
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
