"""An RLlib checkpoint as an agent: ``make_agent("rllib:PATH")`` (needs the ``ray`` extra).

``PATH`` is a checkpoint folder written by ``python -m umbrella_env.rllib_train`` (its
``last/`` or ``best/``): RLlib's algorithm checkpoint plus ``umbrella.json``, the
metadata every trained model carries (:mod:`agents.checkpoint`: players, plate level,
observation size, action count) and the id of the RLModule to play.  A checkpoint made
for another configuration is refused with the same words as a ``.zip`` or ``.onnx``.

Only the RLModule is loaded (``RLModule.from_checkpoint``, the class
:class:`agents.rllib_module.MaskedPPOModule`), on the CPU, without starting Ray.  The agent
plays the most likely legal action (``deterministic=True``, the default) or samples the
masked distribution with its own seeded generator.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import agent_generator
from agents.checkpoint import check_configuration, read_metadata_file
from agents.checks import check_finite_outputs, check_flag, check_name
from umbrella_env.cli_args import install_hint
from umbrella_env.core.actions import NUM_ACTIONS
from umbrella_env.core.observation import OBS_SIZE

#: The prefix of an RLlib checkpoint in an agent spec.
PREFIX = "rllib:"
#: The metadata file inside a checkpoint folder.
METADATA = "umbrella.json"
#: Where RLlib keeps the RLModule of ``module_id`` inside an algorithm checkpoint.
MODULE_DIR = ("learner_group", "learner", "rl_module")
RAY_INSTALL = install_hint("ray")
#: Ray's loggers kept to errors while a module is loaded (RLlib 2.60 warns that it rebuilds
#: the module through a deprecated path of its own).
QUIET_LOGGERS = ("ray.rllib", "ray._common.deprecation")
#: The checkpoint folders a run of ``rllib_train`` writes.
RUN_CHECKPOINTS = ("best", "last")


def holds_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` is an RLlib checkpoint folder of ours or a run folder holding one."""
    path = Path(path)
    return any((path / sub / METADATA).is_file() for sub in ("", *RUN_CHECKPOINTS))


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The ``umbrella.json`` of a checkpoint folder, checked, or a ``ValueError``."""
    if not str(path):
        raise ValueError("RLlib checkpoint: no path given (rllib:PATH, PATH the last/ or best/ folder of a run)")
    path = Path(path)
    if not path.is_dir():
        raise ValueError(
            f"RLlib checkpoint {str(path)!r} is not a folder (expected the last/ or best/ folder written by "
            "python -m umbrella_env.rllib_train)"
        )
    meta_file = path / METADATA
    inside = [name for name in RUN_CHECKPOINTS if (path / name / METADATA).is_file()]
    if not meta_file.is_file() and inside:
        raise ValueError(
            f"RLlib checkpoint {str(path)!r} is a run folder: give one of its checkpoints, "
            + " or ".join(f"{str(path / name)!r}" for name in inside)
        )
    if not meta_file.is_file():
        raise ValueError(
            f"RLlib checkpoint {str(path)!r} has no {METADATA}: "
            "it was not written by python -m umbrella_env.rllib_train"
        )
    meta = read_metadata_file(meta_file, path)
    if not isinstance(meta.get("module_id"), str):
        raise ValueError(f"metadata {str(meta_file)!r} lacks 'module_id' (the RLModule to play)")
    return meta


def module_path(path: str | Path, module_id: str) -> Path:
    return Path(path).joinpath(*MODULE_DIR, module_id)


class RLlibAgent:
    """Plays the RLModule of an RLlib checkpoint (see the module doc).

    Args:
        path: the checkpoint folder (``rllib:`` prefix allowed).
        num_players, plate_level: when given, the checkpoint must have been trained for them.
        deterministic: the most likely legal action (default) or a sample.
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
        text = str(path)
        raw = text[len(PREFIX) :] if text.startswith(PREFIX) else text
        self.meta = read_metadata(raw)  # "rllib:" alone was read as the current folder
        self.path = Path(raw)
        check_configuration(self.meta, self.path, num_players=num_players, plate_level=plate_level)
        try:
            import torch  # noqa: F401  (the ray extra's; logits() uses it)
            from ray.rllib.core.rl_module.rl_module import RLModule
        except ImportError:
            raise ValueError(f"playing an RLlib checkpoint needs the ray extra: {RAY_INSTALL}") from None
        where = module_path(self.path, self.meta["module_id"])
        if not where.is_dir():
            raise ValueError(f"RLlib checkpoint {str(self.path)!r} has no RLModule folder {str(where)!r}")
        # RLlib's own deprecation notice about how it rebuilds the module: not the user's to fix.
        quiet = [logging.getLogger(name) for name in QUIET_LOGGERS]
        levels = [log.level for log in quiet]
        for log in quiet:
            log.setLevel(logging.ERROR)
        try:
            module = RLModule.from_checkpoint(where.resolve())
        except Exception as exc:  # a damaged or foreign checkpoint
            reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__  # some say nothing
            raise ValueError(f"RLlib checkpoint {str(self.path)!r} could not be loaded: {reason}") from None
        finally:
            for log, level in zip(quiet, levels):
                log.setLevel(level)
        module.eval()
        self.module = module
        self.deterministic = deterministic
        self.name = name or self.path.name
        self._rng = agent_generator(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = agent_generator(seed)

    def logits(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """float32 [B, A] masked logits of a batch of observations [B, OBS] and masks [B, A]
        (a ``ValueError`` for other shapes, as :class:`agents.onnx_agent.OnnxAgent`)."""
        import torch  # the ray extra's (loaded with the module above): not kept on the agent, which pickles
        from ray.rllib.core.columns import Columns

        from agents.rllib_module import MASK_KEY, OBS_KEY

        observations = np.asarray(observations, dtype=np.float32)
        action_masks = np.asarray(action_masks, dtype=np.float32)
        if (
            observations.ndim != 2
            or observations.shape[1] != OBS_SIZE
            or action_masks.shape != (len(observations), NUM_ACTIONS)
        ):  # torch would fail deep inside the network, or broadcast one mask over the batch
            raise ValueError(
                f"expected observations [n, {OBS_SIZE}] and action masks [n, {NUM_ACTIONS}], "
                f"got {observations.shape} and {action_masks.shape}"
            )
        obs = {OBS_KEY: torch.as_tensor(observations), MASK_KEY: torch.as_tensor(action_masks)}
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: obs})
        return out[Columns.ACTION_DIST_INPUTS].numpy()

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        logits = self.logits(observations, action_masks)
        legal = np.asarray(action_masks, dtype=bool)
        if not legal.any(axis=1).all():
            raise ValueError("no legal action: the game is over or a mask is empty")
        check_finite_outputs(f"RLlib checkpoint {str(self.path)!r}", logits)
        logits = np.where(legal, logits, -np.inf)
        if self.deterministic:
            return logits.argmax(axis=1).astype(np.int64)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return np.array([self._rng.choice(p.shape[1], p=row) for row in p], dtype=np.int64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: Any = None) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])
