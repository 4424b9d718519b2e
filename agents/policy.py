"""A trained MaskablePPO checkpoint as an agent (needs the ``train`` extra).

A checkpoint is the ``.zip`` written by ``train.py`` plus its sidecar
``<name>.json`` (players, level, observation size, action count, timesteps), so a model
trained for one configuration is refused for another with a clear message.
"""

from __future__ import annotations

import importlib
import sys
import threading
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

try:
    import torch
except ImportError:  # no train extra: load_model names it before any policy is used
    torch = None  # type: ignore[assignment]

from agents.base import agent_generator
from agents.checkpoint import (
    TORCH_RNG_LOCK,
    base_metadata,
    check_configuration,
    check_configuration_options,
    check_finite_weights,
    check_given_game,
    meta_mismatch,
    one_line,
    read_sidecar,
    save_with_sidecar,
    sidecar_path,
)
from agents.checks import (
    check_batch,
    check_flag,
    check_mask,
    check_name,
    check_observation,
    invalid_outputs,
    outputs_not_finite,
)
from umbrella_env.cli_args import install_hint
from umbrella_env.core.actions import NUM_ACTIONS
from umbrella_env.core.config import DEFAULT_MAX_TURNS, GameConfig
from umbrella_env.core.jsonio import parse_json
from umbrella_env.core.observation import OBS_SIZE
from umbrella_env.paths import json_text

#: The member of a checkpoint ``.zip`` that holds a copy of its sidecar's metadata (ignored
#: by Stable-Baselines3, which reads ``data`` and the ``.pth`` members).
ZIP_METADATA = "umbrella_env.json"
_MAX_ZIP_METADATA = 1 << 20  # bytes: a sidecar copy is a few hundred


#: How to make a MaskablePPO model trained elsewhere loadable, said when its sidecar is missing.
SAVE_HINT = (
    " (a MaskablePPO model trained with your own code: save it with agents.policy.save_model(model, PATH, "
    "num_players=N, plate_level=L), which writes the sidecar)"
)


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The sidecar metadata of a checkpoint, or a ``ValueError`` saying what is wrong: also
    when the copy the checkpoint keeps (:data:`ZIP_METADATA`; none in a file written before
    0.2) names another game than its sidecar, which a SHA-256 left out of an edited sidecar
    would not catch."""
    meta = read_sidecar(path, ".zip", "train.py", SAVE_HINT)
    mismatch = meta_mismatch(_zip_metadata(Path(path)), meta)
    if mismatch:
        sidecar = str(sidecar_path(path))
        raise ValueError(f"checkpoint {str(path)!r} does not match its sidecar {sidecar!r}: {mismatch}")
    return meta


def _zip_metadata(path: Path) -> Any:
    """The metadata a checkpoint ``.zip`` keeps of itself, or None (none kept, or a file that
    is not a readable zip: its loading says so)."""
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo(ZIP_METADATA)
            if info.file_size > _MAX_ZIP_METADATA:
                raise ValueError(f"checkpoint {str(path)!r}: its {ZIP_METADATA} is {info.file_size:,} bytes")
            return parse_json(archive.read(info).decode("utf-8"))
    except (KeyError, OSError, zipfile.BadZipFile):
        return None
    except ValueError as exc:  # UnicodeDecodeError, JSON, the size
        raise ValueError(f"checkpoint {str(path)!r}: its {ZIP_METADATA} is unreadable ({exc})") from None


def save_model(
    model: Any,
    path: str | Path,
    *,
    num_players: int,
    plate_level: int = 1,
    max_turns: int | None = None,
    **more: Any,
) -> Path:
    """Save a MaskablePPO ``model`` as a checkpoint every command loads (``evaluate.py``,
    ``make_agent``, ``play``, ONNX export, ``train.py --resume``): the ``.zip`` and its
    ``.json`` sidecar (the game it plays, this umbrella-env's observation size and action
    count, the file's SHA-256, and ``more``), replaced both or neither.  ``train.py`` saves
    its checkpoints here; a model trained with your own SB3 loop (docs/integrations.md) is
    saved the same way.  Returns the ``.zip``'s path (``.zip`` is added to a name without a
    suffix, as SB3 does).

    Checked before anything is written (``ValueError``): the configuration, ``more`` (no key
    of the game's own), and a MaskablePPO whose spaces are Umbrella's (shape ``(899,)``
    observations, ``Discrete(968)`` actions): what every loader refuses is not written."""
    check_configuration_options(num_players=num_players, plate_level=plate_level)
    own = sorted(set(more) & {*base_metadata(1, 1), "max_turns", "sha256"})
    if own:
        raise ValueError(f"save_model: {', '.join(own)} are the checkpoint's own keys, set from the model and the game")
    path = Path(path)
    if not path.suffix:
        path = path.with_suffix(".zip")
    if path.suffix.lower() != ".zip":
        raise ValueError(f"a MaskablePPO checkpoint is a .zip file, got {str(path)!r}")
    try:
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    except ImportError:
        raise ValueError(f"saving a trained policy (sb3-contrib) needs the train extra: {INSTALL_HINT}") from None
    if not callable(getattr(model, "save", None)) or not isinstance(
        getattr(model, "policy", None), MaskableActorCriticPolicy
    ):
        raise ValueError(
            f"expected a MaskablePPO model (sb3-contrib) to save, got {type(model).__name__}: the checkpoints "
            "load as MaskablePPO"
        )
    check_spaces(model.observation_space, model.action_space, path)
    trained = _env_config(model)
    if trained is not None and (trained.num_players, trained.plate_level) != (num_players, plate_level):
        raise ValueError(
            f"save_model: the model's env plays num_players={trained.num_players}, plate_level="
            f"{trained.plate_level}, but num_players={num_players}, plate_level={plate_level} were given"
        )
    turns = DEFAULT_MAX_TURNS if max_turns is None else max_turns
    config = GameConfig(num_players=num_players, plate_level=plate_level, max_turns=turns)  # checked: ConfigError
    meta = base_metadata(config.num_players, config.plate_level, max_turns=config.max_turns, **more)
    save_with_sidecar(path, meta, lambda file: save_policy(model, file, meta))
    return path


def _env_config(model: Any) -> GameConfig | None:
    """The GameConfig of the env ``model`` is attached to (an Umbrella vector env, through
    SB3's wrappers), or None when it has none or it cannot be told."""
    env = getattr(model, "get_env", lambda: None)()
    for _ in range(16):  # VecMonitor, VecNormalize, ... each hold the next as .venv
        if env is None:
            return None
        for holder in (env, getattr(env, "venv", None)):
            config = getattr(holder, "config", None)
            if isinstance(config, GameConfig):
                return config
        env = getattr(env, "venv", None)
    return None


def save_policy(model: Any, file: str | Path, meta: Mapping[str, Any]) -> None:
    """``model.save(file)`` with a copy of ``meta`` inside the zip (:data:`ZIP_METADATA`), as
    a ``.pt`` keeps its own (the save callback of :func:`agents.checkpoint.save_with_sidecar`)."""
    file = Path(file)
    if not file.suffix:  # SB3 would save NAME.zip: append to the file it writes
        file = file.with_suffix(".zip")
    model.save(file)
    with zipfile.ZipFile(file, "a") as archive:
        archive.writestr(ZIP_METADATA, json_text(dict(meta)))


INSTALL_HINT = install_hint("train")
#: Modules an earlier umbrella-env pickled into its checkpoints, and where their classes
#: live now: 0.1.0's policies name ``umbrella_env.policy_features.FigureFeatures``.
MOVED_MODULES = {"umbrella_env.policy_features": "agents.features"}


_MOVED_LOCK = threading.RLock()  # two loads in two threads: the first must not remove the second's names


@contextmanager
def moved_modules() -> Iterator[None]:
    """The old names of :data:`MOVED_MODULES` importable while a checkpoint is unpickled
    (every ``MaskablePPO.load`` of a checkpoint goes through it), removed afterwards."""
    with _MOVED_LOCK:
        added = [old for old in MOVED_MODULES if old not in sys.modules]
        for old in added:
            sys.modules[old] = importlib.import_module(MOVED_MODULES[old])
        try:
            yield
        finally:
            for old in added:
                sys.modules.pop(old, None)


def load_model(path: str | Path) -> Any:
    """The MaskablePPO model of a checkpoint ``.zip`` (on the CPU), or a ``ValueError``: no
    sb3-contrib, a corrupt or foreign file, or a policy for other spaces than Umbrella's.

    Loading leaves the process's random generators as they were: ``MaskablePPO.load`` seeds
    Python's, NumPy's and torch's global generators with the seed saved in the file (so a
    training run restarted its random streams at every self-play snapshot), and building
    the network draws from torch's (loads in several threads too,
    :data:`agents.checkpoint.TORCH_RNG_LOCK`)."""
    try:
        from sb3_contrib import MaskablePPO
    except ImportError:
        raise ValueError(f"loading a trained policy (sb3-contrib) needs the train extra: {INSTALL_HINT}") from None
    try:
        with TORCH_RNG_LOCK, torch.random.fork_rng(devices=[]), moved_modules():
            model = MaskablePPO.load(path, device="cpu", seed=None)
    except Exception as exc:  # a corrupt or foreign zip
        hint = (
            ": it names a class this installation does not have (written by another version or program?)"
            if isinstance(exc, ModuleNotFoundError)
            else ""
        )
        raise ValueError(f"checkpoint {str(path)!r} could not be loaded ({one_line(exc)}){hint}") from None
    check_spaces(model.observation_space, model.action_space, path)
    check_finite_weights(path, model.policy.state_dict())
    return model


def check_spaces(observation_space: Any, action_space: Any, path: str | Path) -> None:
    """A ``ValueError`` unless a policy reads Umbrella's observations (shape ``(899,)``) and
    chooses among its actions (``Discrete(968)``): a sidecar can be copied beside any model."""
    shape = getattr(observation_space, "shape", None)
    if (
        shape is None
        or tuple(shape) != (OBS_SIZE,)
        or not isinstance(action_space, spaces.Discrete)
        or int(action_space.n) != NUM_ACTIONS
    ):
        raise ValueError(
            f"checkpoint {str(path)!r} is a policy for observations {observation_space} and actions "
            f"{action_space}; Umbrella's are observations of shape ({OBS_SIZE},) and Discrete({NUM_ACTIONS})"
        )


class PolicyAgent:
    """Plays the greedy (deterministic) or sampled action of a trained policy.

    Args:
        path: the checkpoint ``.zip``.
        num_players, plate_level: when given, the checkpoint must have been trained for them.
        deterministic: take the most likely legal action (default) or sample.
        seed: the agent's own generator, which every sample draws from (the policy's
            probabilities are computed by SB3; the draw is never from torch's or NumPy's
            process-wide generators, so agents do not disturb each other).
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
        check_configuration_options(num_players=num_players, plate_level=plate_level)
        self.path = Path(path)
        self.meta = read_metadata(self.path)
        check_configuration(self.meta, self.path, num_players=num_players, plate_level=plate_level)
        # No torch.set_num_threads here: an agent never changes process-wide settings (the
        # commands that play many single decisions choose their thread count themselves).
        self.model = load_model(self.path)
        self.deterministic = deterministic
        self.name = name or self.path.stem
        self.reset(seed)

    @classmethod
    def from_model(
        cls, model: Any, *, deterministic: bool = True, name: str = "policy", seed: int | None = None
    ) -> PolicyAgent:
        """An agent over an in-memory MaskablePPO model (e.g. the one being trained)."""
        agent = cls.__new__(cls)
        agent.path = Path(name)
        agent.meta = {}
        agent.model = model
        agent.deterministic = check_flag("deterministic", deterministic)
        agent.name = name
        agent._rng = agent_generator(seed)
        return agent

    def reset(self, seed: int | None = None) -> None:
        if seed is not None or not hasattr(self, "_rng"):
            self._rng = agent_generator(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, game: Any = None) -> int:
        obs = check_observation(observation)
        legal = check_mask(action_mask)
        check_given_game(self.meta, self.path, game, legal)
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        mask[legal] = True
        return int(self._actions(obs[None], mask[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """Actions int64 [n] for ``n`` games at once (used by training against past snapshots):
        observations [n, 899] and masks [n, 968], each with a legal action."""
        obs, masks = check_batch(observations, action_masks)
        if not len(obs):  # as OnnxAgent.act_batch (torch cannot reshape an empty batch)
            return np.zeros(0, np.int64)
        return self._actions(obs, masks)

    def _actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The policy's most likely legal actions, or legal actions drawn from its masked
        probabilities with the agent's generator; :class:`~agents.checks.OutputsNotFinite`
        when the policy's outputs are not finite (torch refuses them)."""
        try:
            return self._choose(obs, masks)
        except (ValueError, RuntimeError) as exc:
            if not invalid_outputs(exc):
                raise
            raise outputs_not_finite(f"model {str(self.path)!r}") from None

    def _choose(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if self.deterministic:
            actions, _ = self.model.predict(obs, action_masks=masks, deterministic=True)
            return np.asarray(actions, dtype=np.int64).reshape(len(obs))
        policy = self.model.policy
        policy.set_training_mode(False)
        with torch.no_grad():
            tensor, _ = policy.obs_to_tensor(obs)
            probs = policy.get_distribution(tensor, action_masks=masks).distribution.probs
        p = np.where(masks, probs.cpu().numpy().astype(np.float64), 0.0)
        cdf = np.cumsum(p, axis=1)
        draws = self._rng.random(len(obs)) * cdf[:, -1]
        actions = (cdf <= draws[:, None]).sum(axis=1)  # the first action whose cdf passes the draw
        return np.minimum(actions, NUM_ACTIONS - 1).astype(np.int64)
