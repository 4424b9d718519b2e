"""A policy exported to ONNX as an agent: plays without torch (needs the ``onnx`` extra).

``python -m umbrella_env.export CHECKPOINT.zip OUT.onnx`` writes the file; this module
needs only NumPy, onnxruntime and the environment library::

    pip install -c constraints.txt -e ".[onnx]"

The graph (the contract shared with :mod:`umbrella_env.export`):

* inputs ``observation`` float32 [batch, 899] and ``action_mask`` bool [batch, 968];
* outputs ``logits`` float32 [batch, 968], the policy's logits with every illegal action
  set to :data:`MASKED_LOGIT` (a finite -1e8, as in sb3-contrib's masked distribution:
  softmax gives illegal actions exactly 0 and no arithmetic meets an infinity), and
  ``value`` float32 [batch], the value head's estimate for the deciding seat;
* ``metadata_props``: the checkpoint's metadata (:mod:`agents.checkpoint`), every value as
  JSON text, plus ``format`` = :data:`ONNX_FORMAT`, so a model exported for another
  configuration is refused like a ``.zip`` checkpoint.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import SeededAgent
from agents.checkpoint import check_configuration, check_configuration_options, check_given_game, check_metadata
from agents.checks import (
    MAX_THREADS,
    check_batch,
    check_finite_outputs,
    check_flag,
    check_int,
    check_mask,
    check_name,
    check_observation,
)
from umbrella_env.cli_args import install_hint
from umbrella_env.core.actions import NUM_ACTIONS
from umbrella_env.core.jsonio import parse_json
from umbrella_env.core.observation import OBS_SIZE

#: ``metadata_props["format"]`` of the models written by :mod:`umbrella_env.export`.
ONNX_FORMAT = "umbrella-env-policy-1"
#: The logit of an illegal action in the exported graph's output.
MASKED_LOGIT = -1e8
INPUT_NAMES: tuple[str, str] = ("observation", "action_mask")
OUTPUT_NAMES: tuple[str, str] = ("logits", "value")
INSTALL_HINT = install_hint("onnx")


def encode_metadata(meta: dict[str, Any]) -> dict[str, str]:
    """``metadata_props`` entries: every value as JSON text."""
    return {str(key): json.dumps(value) for key, value in meta.items()}


def decode_metadata(props: dict[str, str]) -> dict[str, Any]:
    """The inverse of :func:`encode_metadata` (a value that is not JSON stays a string)."""
    out: dict[str, Any] = {}
    for key, text in props.items():
        try:
            out[key] = parse_json(text)
        except ValueError:
            out[key] = text
    return out


def sample_masked(logits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of masked ``logits`` [n, A], drawn from their softmax with one
    uniform number per row (illegal actions, at :data:`MASKED_LOGIT`, have probability 0)."""
    z = logits.astype(np.float64)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    cdf = np.cumsum(p, axis=1)
    u = rng.random(len(z)) * cdf[:, -1]
    # The first action whose cumulative probability exceeds u: the cdf only rises at
    # actions of positive probability, so the pick is legal.
    return np.minimum((cdf <= u[:, None]).sum(axis=1), z.shape[1] - 1).astype(np.int64)


#: The oldest onnxruntime this package plays with (pyproject.toml's extras say the same; an
#: onnxruntime installed by other means is checked here, when a model is opened).
ONNXRUNTIME_FLOOR = (1, 20)


def onnxruntime_problem(version: str) -> str | None:
    """Why onnxruntime ``version`` is too old to play with, or None."""
    found = re.match(r"(\d+)\.(\d+)", version)
    if found is not None and (int(found[1]), int(found[2])) >= ONNXRUNTIME_FLOOR:
        return None
    floor = ".".join(map(str, ONNXRUNTIME_FLOOR))
    return (
        f"onnxruntime {version} is older than {floor}, the oldest this package plays with (older ones were not "
        f"tested, and do not all check the paths of a model's external data): pip install 'onnxruntime>={floor}'"
    )


def _open_session(path: Path, threads: int) -> Any:
    """An onnxruntime session of ``path`` on the CPU with ``threads`` intra-op threads, or a
    ``ValueError`` (no onnxruntime, one older than :data:`ONNXRUNTIME_FLOOR`, or a file it
    cannot load)."""
    try:
        import onnxruntime as ort
    except ImportError:
        raise ValueError(f"playing from an .onnx model needs onnxruntime: {INSTALL_HINT}") from None
    problem = onnxruntime_problem(str(getattr(ort, "__version__", "unknown")))
    if problem:
        raise ValueError(problem)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # errors only
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # a corrupt or foreign file: onnxruntime raises its own types
        raise ValueError(f"model {str(path)!r} could not be loaded by onnxruntime: {exc}") from None


#: Each input's and output's element type and its sizes after the batch dimension.
_SIGNATURE = dict(
    zip(
        (*INPUT_NAMES, *OUTPUT_NAMES),
        (
            ("tensor(float)", (OBS_SIZE,)),
            ("tensor(bool)", (NUM_ACTIONS,)),
            ("tensor(float)", (NUM_ACTIONS,)),
            ("tensor(float)", ()),
        ),
    )
)


def _signature_problem(session: Any) -> str:
    """How a model's inputs and outputs differ from the exporter's (:data:`_SIGNATURE`), in
    one line ('' when they match): onnxruntime would only fail at the first move, and a
    model of too few logits would play the first actions only."""
    for arg in (*session.get_inputs(), *session.get_outputs()):
        kind, sizes = _SIGNATURE[arg.name]
        shape = list(arg.shape or [])
        if arg.type != kind or len(shape) != 1 + len(sizes) or tuple(shape[1:]) != sizes:
            want = ", ".join(["batch", *map(str, sizes)])
            return f"has {arg.name!r} of {arg.type} {shape}; expected {kind} [{want}]"
    return ""


class OnnxAgent(SeededAgent):
    """Plays the most likely legal action of an exported policy (``deterministic``, the
    default: argmax of the masked logits) or samples it from their softmax with the agent's
    seeded NumPy generator.

    Args:
        path: the ``.onnx`` file written by ``python -m umbrella_env.export``.
        num_players, plate_level: when given, the model must have been trained for them.
        deterministic: argmax (default) or sampling.
        seed: seeds the sampling.
        threads: onnxruntime threads per call (1: the lowest latency for single decisions;
            0: onnxruntime's own default).
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
        threads: int = 1,
    ) -> None:
        deterministic = check_flag("deterministic", deterministic)
        name = check_name(name, optional=True)
        check_configuration_options(num_players=num_players, plate_level=plate_level)
        threads = check_int("threads", threads, minimum=0, maximum=MAX_THREADS)  # 0: onnxruntime's own default
        self.path = Path(path)
        if not self.path.is_file():
            raise ValueError(
                f"model {str(self.path)!r} does not exist "
                "(expected an .onnx file written by python -m umbrella_env.export)"
            )
        self.threads = threads
        self._file = self.path.resolve()  # a copy opens it again, from whatever folder it runs in
        self.session = _open_session(self.path, threads)
        meta = decode_metadata(dict(self.session.get_modelmeta().custom_metadata_map))
        if meta.get("format") != ONNX_FORMAT:
            raise ValueError(
                f"model {str(self.path)!r} has no metadata_props format={ONNX_FORMAT!r}; "
                "it was not written by python -m umbrella_env.export"
            )
        self.meta = check_metadata(meta, self.path, f"the metadata_props of {str(self.path)!r}")
        check_configuration(self.meta, self.path, num_players=num_players, plate_level=plate_level)
        names = tuple(i.name for i in self.session.get_inputs()), tuple(o.name for o in self.session.get_outputs())
        if names != (INPUT_NAMES, OUTPUT_NAMES):
            raise ValueError(
                f"model {str(self.path)!r} has inputs {names[0]} and outputs {names[1]}; "
                f"expected {INPUT_NAMES} and {OUTPUT_NAMES}"
            )
        problem = _signature_problem(self.session)
        if problem:
            raise ValueError(f"model {str(self.path)!r} {problem}; it was not written by python -m umbrella_env.export")
        super().__init__(seed, name or self.path.stem)
        self.deterministic = deterministic

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (a copy, a worker process) without the session, which onnxruntime cannot
        pickle: the copy opens the same file again."""
        return {k: v for k, v in self.__dict__.items() if k != "session"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if not self._file.is_file():
            raise ValueError(f"model {str(self._file)!r} of the pickled OnnxAgent does not exist here")
        self.session = _open_session(self._file, self.threads)

    def evaluate(self, observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Masked logits float32 [n, 968] and values float32 [n] of ``n`` observations."""
        return self._run(*check_batch(observations, action_masks, require_legal=False))

    def _run(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits, values = self.session.run(list(OUTPUT_NAMES), {INPUT_NAMES[0]: obs, INPUT_NAMES[1]: masks})
        return logits, values

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: Any = None) -> int:
        obs = check_observation(observation)
        legal = check_mask(action_mask)
        check_given_game(self.meta, self.path, game, legal)
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        mask[legal] = True
        return int(self._actions(obs[None], mask[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions int64 [n] for ``n`` games at once: observations [n, 899] and masks [n, 968],
        each with a legal action."""
        return self._actions(*check_batch(observations, action_masks))

    def _actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits, _ = self._run(obs, masks)
        check_finite_outputs(f"model {str(self.path)!r}", logits)
        if self.deterministic:
            return np.argmax(logits, axis=1).astype(np.int64)
        return sample_masked(logits, self._rng)
