"""The configuration a trained model was made for, and the checks that refuse another.

Every trained model carries the same metadata, whatever its format: the ``.zip`` of
``umbrella_env.training`` in its ``.json`` sidecar, the ``.onnx`` of ``umbrella_env.export``
in the model's ``metadata_props``.  At least :data:`REQUIRED_KEYS`::

    {"num_players": 2, "plate_level": 1, "obs_size": 899, "num_actions": 968, ...}

:func:`check_metadata` refuses a model made for another observation or action layout,
:func:`check_configuration` one made for another number of players or plate level.  Both
:class:`agents.policy.PolicyAgent` and :class:`agents.onnx_agent.OnnxAgent` use them, so the
two formats are refused with the same words.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.checks import check_game_mask
from umbrella_env import __version__
from umbrella_env.cli_args import int_problem
from umbrella_env.core.actions import NUM_ACTIONS
from umbrella_env.core.config import GameConfig
from umbrella_env.core.jsonio import parse_json
from umbrella_env.core.observation import OBS_SIZE
from umbrella_env.paths import json_text, write_together

#: The metadata every trained model must carry.
REQUIRED_KEYS: tuple[str, ...] = ("num_players", "plate_level", "obs_size", "num_actions")

#: Held by every loader that builds a torch network inside ``torch.random.fork_rng`` (to
#: leave torch's global generator as it was): two loads in two threads would each restore
#: the state it saw, leaving the generator moved.  A thread drawing from torch's global
#: generator while another thread loads still sees its draws repeated after the load (the
#: generator is put back); seed a ``torch.Generator`` of its own for a stream of its own.
TORCH_RNG_LOCK = threading.RLock()


def base_metadata(num_players: int, plate_level: int, **more: Any) -> dict[str, Any]:
    """The :data:`REQUIRED_KEYS` of a model trained now for that game (this umbrella-env's
    observation size and action count) and the version that wrote it (``umbrella_env_version``,
    to tell a file's origin; not checked), then ``more``: every trainer's metadata starts here."""
    return {
        "num_players": int(num_players),
        "plate_level": int(plate_level),
        "obs_size": OBS_SIZE,
        "num_actions": NUM_ACTIONS,
        "umbrella_env_version": __version__,
        **more,
    }


def check_metadata(meta: Mapping[str, Any], path: str | Path, source: str) -> dict[str, Any]:
    """``meta`` as a dict, or a ``ValueError`` if a key is missing or not an integer, a player
    count or plate level is outside 1-4, or the model was made for another observation size or
    action count than this umbrella-env's.

    ``path`` is the model file, ``source`` names where the metadata was read (for example
    ``"metadata 'last.json'"``) in the message about a missing key.
    """
    if not isinstance(meta, Mapping):
        raise ValueError(f"{source} is not a JSON object of metadata but {type(meta).__name__}")
    for key in REQUIRED_KEYS:
        if key not in meta:
            raise ValueError(f"{source} lacks {key!r}")
        problem = int_problem(repr(key), meta[key], 1, 4 if key in ("num_players", "plate_level") else None)
        if problem:
            raise ValueError(f"{source}: {problem}")
    if meta["obs_size"] != OBS_SIZE or meta["num_actions"] != NUM_ACTIONS:
        raise ValueError(
            f"checkpoint {str(path)!r} was trained with observation size {meta['obs_size']} and "
            f"{meta['num_actions']} actions; this umbrella-env has {OBS_SIZE} and {NUM_ACTIONS}"
        )
    return dict(meta)


def check_configuration(
    meta: Mapping[str, Any],
    path: str | Path | None,
    *,
    num_players: int | None = None,
    plate_level: int | None = None,
    named: str = "checkpoint",
    target: str = "this game",
) -> None:
    """A ``ValueError`` if the model was trained for other ``num_players`` / ``plate_level``
    than the ones given (``None``: not checked), or if one given is not a player count or a
    plate level (:func:`check_configuration_options`).  The message names the model
    ``named`` (a trainer: ``"--resume"``) and its ``path`` (None: a model without a file,
    named alone), and what it was given to (``target``)."""
    check_configuration_options(num_players=num_players, plate_level=plate_level)
    for key, want in (("num_players", num_players), ("plate_level", plate_level)):
        if want is not None and meta[key] != want:
            model = named if path is None else f"{named} {str(path)!r}"
            raise ValueError(f"{model} was trained for {key}={meta[key]}, but {target} has {key}={want}")


def check_configuration_options(*, num_players: Any = None, plate_level: Any = None) -> None:
    """A ``ValueError`` unless ``num_players`` and ``plate_level`` are ``None`` or ints
    (NumPy's too, never a bool) in 1-4.  Compared with the model's metadata unchecked, a
    string ``"2"`` would be refused in words that contradict themselves ("trained for
    num_players=2, but this game has num_players=2") and ``True`` taken for 1."""
    for key, value in (("num_players", num_players), ("plate_level", plate_level)):
        if value is not None and int_problem(key, value, 1, 4):
            raise ValueError(f"{key} must be None or an integer in 1-4, got {value!r}")


def check_game_configuration(
    meta: Mapping[str, Any], path: str | Path | None, config: GameConfig, named: str = "checkpoint"
) -> None:
    """:func:`check_configuration` against a game's configuration; a model that records no
    plate level (a network handed over in memory) is checked on its player count only."""
    check_configuration(
        meta,
        path,
        num_players=config.num_players,
        plate_level=config.plate_level if meta.get("plate_level") is not None else None,
        named=named,
    )


def check_given_game(meta: Mapping[str, Any], path: str | Path, game: Any, legal: np.ndarray) -> None:
    """The checks a checkpoint agent makes of the ``game`` a caller gives it, even when it plays
    from the observation alone: a :class:`SingleGame` whose legal actions are ``legal``
    (:func:`agents.checks.check_game_mask`), of the configuration the model was trained for
    (a model handed over in memory, without metadata, is not checked for it)."""
    if game is None:
        return
    check_game_mask(game, legal)
    if meta:
        check_game_configuration(meta, path, game.config)


def sidecar_path(path: str | Path) -> Path:
    """The ``.json`` sidecar beside a checkpoint file."""
    return Path(path).with_suffix(".json")


def copy_checkpoint(path: str | Path, folder: str | Path) -> bool:
    """Copy the checkpoint ``path`` and its sidecar into ``folder`` (same names), unless
    ``path`` is already there; False when there is no such checkpoint to copy."""
    src, dst = Path(path), Path(folder) / Path(path).name
    if not (src.is_file() and sidecar_path(src).is_file()):
        return False
    if dst.resolve() != src.resolve():
        shutil.copyfile(src, dst)
        shutil.copyfile(sidecar_path(src), sidecar_path(dst))
    return True


def read_sidecar(path: str | Path, suffix: str, writer: str, without: str = "") -> dict[str, Any]:
    """The checked metadata of the checkpoint file ``path`` (a ``suffix`` file written by
    ``writer``) from its ``.json`` sidecar, or a ``ValueError`` saying what is wrong
    (``without``, when the sidecar is missing: how to write one)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"checkpoint {str(path)!r} does not exist (expected a {suffix} written by {writer})")
    meta_file = sidecar_path(path)
    if not meta_file.is_file():
        raise ValueError(
            f"checkpoint {str(path)!r} has no metadata file {str(meta_file)!r}; it was not written by {writer}{without}"
        )
    meta = read_metadata_file(meta_file, path)
    recorded = meta.get("sha256")  # sidecars written before it was recorded have none
    if recorded is not None and recorded != file_sha256(path):
        raise ValueError(
            f"checkpoint {str(path)!r} is not the file its sidecar {str(meta_file)!r} was written for "
            "(its SHA-256 differs): the file was changed or damaged after it was saved, or the two are of different "
            "checkpoints"
        )
    return meta


def save_with_sidecar(path: str | Path, meta: Mapping[str, Any], save: Callable[[Path], object]) -> None:
    """Write a checkpoint with ``save(file)`` and its ``.json`` sidecar holding ``meta`` and the
    file's SHA-256 (which :func:`read_sidecar` checks: a sidecar is refused beside another
    file); both or neither are replaced, so a cut leaves the previous pair."""

    def write(tmps: list[Path]) -> None:
        save(tmps[0])
        text = json_text({**meta, "sha256": file_sha256(tmps[0])}, indent=2) + "\n"
        tmps[1].write_text(text, encoding="utf-8")

    write_together([Path(path), sidecar_path(path)], write)


def one_line(exc: BaseException, limit: int = 100) -> str:
    """An exception as ``Type: first line`` (cut at ``limit`` characters): torch's and SB3's
    messages run to many lines, some advising to load the file with pickle."""
    detail = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {detail if len(detail) <= limit else detail[:limit] + '...'}"


def read_metadata_file(meta_file: str | Path, path: str | Path) -> dict[str, Any]:
    """The checked metadata (:func:`check_metadata`) of the model ``path`` from the JSON file
    ``meta_file``, or a ``ValueError`` naming the file when it is not UTF-8 JSON."""
    try:
        meta = parse_json(Path(meta_file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"metadata {str(meta_file)!r} is unreadable (expected UTF-8 JSON): {exc}") from None
    return check_metadata(meta, path, f"metadata {str(meta_file)!r}")


#: The keys a checkpoint's own copy of its metadata and its sidecar must agree on (the
#: game; an alphazero network adds its shape): an edited sidecar let a level-1 model pass as
#: a level-2 one.
CONFIGURATION_KEYS = ("num_players", "plate_level")


def meta_mismatch(embedded: Any, sidecar: Mapping[str, Any], keys: Sequence[str] = CONFIGURATION_KEYS) -> str:
    """How the metadata saved inside a checkpoint differs from its sidecar's on ``keys``, in
    one line ('' when they agree, or the file has none: written before it was saved)."""
    if not isinstance(embedded, dict):
        return ""

    def plain(value: Any) -> Any:  # as JSON holds it: a tuple is a list
        return json.loads(json.dumps(value))

    differ = [
        f"{key} {sidecar[key]!r} in the sidecar, {embedded[key]!r} in the checkpoint"
        for key in keys
        if key in embedded and key in sidecar and plain(embedded[key]) != plain(sidecar[key])
    ]
    return "; ".join(differ)


def compressed_record(path: str | Path) -> str | None:
    """The name of a compressed record in the zip archive ``path`` (a torch file), or None:
    ``torch.save`` stores every record as it is, and ``torch.load`` inflates a compressed one
    whole before any check, so a small crafted file could take gigabytes of memory.  A file
    that is not a zip archive gives None (its reader refuses it)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return next((i.filename for i in archive.infolist() if i.compress_type != zipfile.ZIP_STORED), None)
    except (OSError, zipfile.BadZipFile, ValueError):
        return None


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file, in hex (a checkpoint's sidecar records its file's)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def nonfinite_weights(weights: Mapping[str, Any]) -> str | None:
    """The names of the floating-point weights (torch tensors by name) that hold a NaN or an
    infinity, as a short phrase (the first three and how many more), or None when all are
    finite."""
    return _names([name for name, w in weights.items() if w.is_floating_point() and not bool(w.isfinite().all())])


def weights_beyond(weights: Mapping[str, Any], limit: float) -> str | None:
    """The names of the floating-point weights (torch tensors by name) that hold a magnitude
    above ``limit``, as :func:`nonfinite_weights` names them, or None."""
    return _names([name for name, w in weights.items() if w.is_floating_point() and bool((w.abs() > limit).any())])


def _names(names: list[str]) -> str | None:
    """The first three of ``names`` and how many more, or None when there are none."""
    if not names:
        return None
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"{', '.join(names[:3])}{more}"


def check_finite_weights(path: str | Path, weights: Mapping[str, Any]) -> None:
    """A ``ValueError`` when a checkpoint's floating-point weights (torch tensors by name)
    hold a NaN or an infinity: such a network plays its first legal action at every decision,
    silently (a diverged training run saves one)."""
    broken = nonfinite_weights(weights)
    if broken:
        raise ValueError(
            f"checkpoint {str(path)!r} holds weights that are not finite (NaN or inf) in {broken}; "
            "it cannot play (was its training diverging?)"
        )
