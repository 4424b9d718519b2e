"""The trainers' one policy for a run whose numbers stop being numbers.

A learning rate far too large (or another option that makes the updates explode) turns a
loss, then the weights, into NaN or infinity.  Such a network cannot learn again and cannot
play (:func:`agents.checkpoint.check_finite_weights` refuses it), so every trainer stops at
the first loss that is not finite, before the step that would spread it into the weights,
and checks the weights after each update phase: :class:`TrainingDiverged` names the stage and
the numbers, the trainer's command line names what it kept and the option to lower
(:func:`diverged_message`), and nothing diverged is saved.  The checks read numbers the
trainer computes anyway (the losses it prints) plus, per update phase, one pass over the
weights and one forward pass of a minibatch; they draw no random numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from agents.checkpoint import nonfinite_weights, weights_beyond
from agents.checks import invalid_outputs

#: The stage name of a behaviour cloning (``--pretrain``) in every trainer's divergence error.
CLONING = "behaviour cloning"


class TrainingDiverged(RuntimeError):
    """A loss or the weights of the network in training became NaN or infinite during
    ``stage`` (such as ``"pretraining"``); ``what`` says which numbers."""

    def __init__(self, stage: str, what: str) -> None:
        super().__init__(f"{stage}: {what}")
        self.stage = stage
        self.what = what


def check_losses(stage: str, **losses: float) -> None:
    """:class:`TrainingDiverged` when one of ``losses`` (by name, such as ``policy_loss``) is
    not a finite number; call it before the optimizer step that would use them."""
    if all(math.isfinite(value) for value in losses.values()):
        return
    shown = ", ".join(f"{name.replace('_', ' ')} {value}" for name, value in losses.items())
    raise TrainingDiverged(stage, f"{shown} (not finite)")


def check_weights(stage: str, weights: Mapping[str, Any], limit: float | None = None) -> None:
    """:class:`TrainingDiverged` when a floating-point tensor of ``weights`` (a state dict)
    holds a NaN or an infinity, or (given ``limit``, the largest magnitude the trainer's
    checkpoints store) a weight beyond +-``limit``."""
    weights_diverged(stage, nonfinite_weights(weights))
    broken = None if limit is None else weights_beyond(weights, limit)
    if broken:
        raise TrainingDiverged(stage, f"weights beyond +-{limit:,.0f}, the largest a checkpoint stores, in {broken}")


def optimizer_moments(state: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The tensors of an optimizer's ``state_dict()`` (Adam's moments, its step counts) by a
    readable name, such as ``"trunk.0.weight exp_avg_sq"``; ``names``: the names of the
    parameters in the optimizer's order (``[n for n, _ in net.named_parameters()]``)."""
    ids = [i for group in state["param_groups"] for i in group["params"]]
    label = dict(zip(ids, names))
    return {
        f"{label.get(i, i)} {key}": value for i, moments in state["state"].items() for key, value in moments.items()
    }


def check_optimizer(stage: str, state: Mapping[str, Any], names: Sequence[str]) -> None:
    """:class:`TrainingDiverged` when the optimizer's state (``state_dict()``; ``names`` as for
    :func:`optimizer_moments`) holds a NaN or an infinity: the weights may still be finite,
    but every later step is NaN, or zero (a frozen network)."""
    broken = nonfinite_weights(optimizer_moments(state, names))
    if broken:
        raise TrainingDiverged(stage, f"the optimizer's state is not finite (NaN or inf) in {broken}")


def weights_diverged(stage: str, broken: str | None) -> None:
    """:class:`TrainingDiverged` naming ``broken``, the weights that are not finite (as
    :func:`agents.checkpoint.nonfinite_weights` names them, where the network lives), if any."""
    if broken:
        raise TrainingDiverged(stage, f"weights not finite (NaN or inf) in {broken}")


def check_outputs(stage: str, *outputs: Any) -> None:
    """:class:`TrainingDiverged` when one of ``outputs`` (torch tensors: the network's outputs
    on a minibatch after its last update) holds a NaN or an infinity.  Weights can be finite
    and still so large that the network's outputs are not: the last step of an update phase
    is caught here rather than at the next forward pass."""
    if not all(bool(out.isfinite().all()) for out in outputs):
        raise TrainingDiverged(stage, "the network's outputs are not finite (NaN or inf)")


@contextmanager
def refused_outputs(stage: str, network: str = "policy") -> Iterator[None]:
    """Outputs of the network in training refused as NaN or infinite inside the block
    (:func:`invalid_outputs`: torch or an agent refusing them) become :class:`TrainingDiverged`
    for ``stage``, naming the ``network`` (``"policy"`` for PPO's); any other error passes
    unchanged."""
    try:
        yield
    except (ValueError, RuntimeError) as exc:
        if not invalid_outputs(exc):
            raise
        raise TrainingDiverged(stage, f"the {network}'s outputs are not finite (NaN or inf)") from None


def diverged_message(exc: TrainingDiverged, kept: str, options: str) -> str:
    """The one-line error of a diverged run: what diverged, ``kept`` (what the run saved
    before, or that it saved nothing) and ``options`` (the option(s) to lower, with their
    values)."""
    return f"training diverged in {exc.stage}: {exc.what}; {kept}; lower {options}"
