"""Output folders and files of the command-line tools (trainers, evaluation, demo, export):
checked before any work.

Every tool that writes a run folder asks :func:`output_dir_problem` first, and every tool
that writes one named file asks :func:`output_file_problem`, so that an output that cannot
be written is refused with the reason (exit status 2) instead of a traceback after the
work is done; a file that exists already is refused too unless the tool was told to replace
it (``--overwrite``).  A trainer also refuses a folder that holds a previous run
(:func:`previous_run`) unless it resumes it or is told to replace it (:func:`remove_run`),
and writes the files a resume reads with :func:`write_atomically`.
"""

from __future__ import annotations

import contextlib
import glob
import json
import math
import os
import secrets
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float (in nested dicts, lists and tuples too)
    replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def json_text(value: Any, *, indent: int | None = None) -> str:
    """``value`` as strict JSON, the one way every file this project writes is encoded: NaN
    and infinities (a spread of one game, no best metric yet) become ``null``, which every
    parser reads, where Python's default ``NaN`` / ``-Infinity`` are not JSON."""
    return json.dumps(finite(value), indent=indent, allow_nan=False)


def output_dir_problem(path: Path) -> str | None:
    """None when ``path`` is, or can be created as, a writable folder, else the reason.

    The check creates (and removes) a temporary entry where the folder or its first missing
    parent would go: permission bits alone do not tell, e.g. for root or under ``/proc``.
    """
    probe = Path(path)
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        return f"{str(probe)!r} is a file, not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{str(probe)!r} is not writable"
    try:
        if probe == Path(path):
            tempfile.TemporaryFile(dir=probe).close()
        else:
            os.rmdir(tempfile.mkdtemp(dir=probe))
    except OSError as exc:  # e.g. /proc: writable by its bits, but it takes no new entry
        return f"{str(probe)!r} does not take a new file or folder ({exc.strerror or exc})"
    return None


def output_file_problem(path: Path, suffix: str, *, overwrite: bool = False) -> str | None:
    """None when a file named ``path``, ending in ``suffix`` (".gif"), can be written, else
    the reason: another suffix, a folder of that name, a parent folder that is missing or
    not writable, an existing file (unless ``overwrite``: then one that is not writable)."""
    path = Path(path)
    if path.suffix.lower() != suffix:
        return f"expected a file name ending in {suffix}, got {str(path)!r}"
    if path.is_dir():
        return f"{str(path)!r} is a folder, expected a file name ending in {suffix}"
    parent = path.parent
    if not parent.is_dir():
        return f"cannot write {str(path)!r}: folder {str(parent)!r} does not exist"
    problem = output_dir_problem(parent)
    if problem is not None:
        return f"cannot write {str(path)!r}: {problem}"
    if path.exists() and not overwrite:
        return f"{str(path)!r} already exists: give another name, or --overwrite to replace it"
    if path.exists() and not os.access(path, os.W_OK):
        return f"cannot write {str(path)!r}: permission denied"
    return None


def previous_run(path: Path, names: Iterable[str]) -> list[str]:
    """The entries of ``names`` that already exist in the folder ``path`` (a run's files; a
    symbolic link counts, even one whose target is gone)."""
    return [name for name in names if (Path(path) / name).exists() or (Path(path) / name).is_symlink()]


def remove_run(path: Path, names: Iterable[str]) -> None:
    """Remove the run files ``names`` from ``path`` (``--overwrite``), and the temporary files
    of their writes that a killed process left (:func:`sibling_tmp`); other files stay."""
    names = list(names)
    stale = [entry.name for name in names for entry in Path(path).glob(f"{glob.escape(name)}.*.tmp")]
    for name in [*previous_run(path, names), *stale]:
        remove_entry(Path(path) / name)


def remove_entry(entry: Path) -> None:
    """Remove the file or folder ``entry`` (nothing if there is none); a symbolic link is
    removed, never what it points to (``shutil.rmtree`` refuses a link to a folder)."""
    entry = Path(entry)
    if entry.is_symlink() or (entry.exists() and not entry.is_dir()):
        entry.unlink()
    elif entry.is_dir():
        shutil.rmtree(entry)


def sibling_tmp(path: Path) -> Path:
    """A temporary name beside ``path`` (``NAME.<random>.tmp``), of this write alone: two
    writers of one file (two runs, two threads) never write into each other's temporary file,
    and the last rename wins whole."""
    return path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """``write(tmp)`` to a sibling temporary file, then rename it to ``path``: an interrupted
    write leaves the previous file whole, never a truncated one (:func:`write_together` of
    one file)."""
    write_together([Path(path)], lambda tmps: write(tmps[0]))


def write_together(paths: Sequence[Path], write: Callable[[list[Path]], object]) -> None:
    """``write(tmps)`` to sibling temporary files of ``paths`` (in order), then rename them
    all, with Ctrl-C and SIGTERM held for the renames: files that must match (a checkpoint
    and the sidecar that records its SHA-256) are replaced both or neither, never one beside
    the other's previous version.  An OSError names the file asked for, as
    :func:`write_atomically`'s."""
    paths = [Path(p) for p in paths]
    tmps = [sibling_tmp(p) for p in paths]
    try:
        write(tmps)
        with signals_held():
            for tmp, path in zip(tmps, paths):
                os.replace(tmp, path)
    except OSError as exc:
        named = exc.filename
        for tmp, path in zip(tmps, paths):
            if named is None or (isinstance(named, (str, os.PathLike)) and Path(named) == tmp):
                if exc.filename2 is not None:  # a rename's (tmp -> path): the file asked for, once
                    raise type(exc)(exc.errno, exc.strerror, str(path)).with_traceback(exc.__traceback__) from None
                exc.filename = str(path)
                break
        raise
    finally:
        for tmp in tmps:
            tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C or SIGTERM that arrives inside is delivered on leaving (a few renames take
    microseconds); off the main thread, or beside a handler Python did not set, nothing is
    held."""
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.getsignal(sig) for sig in held}
    if threading.current_thread() is not threading.main_thread() or None in previous.values():
        yield
        return
    caught: list[int] = []
    for sig in held:
        signal.signal(sig, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])


def default_run_dir(prefix: str) -> Path:
    """The output folder of a command run without ``--out``: ``runs/<prefix>-<time>-<pid>``.
    The process id keeps apart two runs started in the same second (a shell loop over seeds),
    which wrote into one folder, the second replacing the first's files."""
    return Path("runs") / f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"


@contextlib.contextmanager
def output_folder(path: Path) -> Iterator[Path]:
    """``path`` made (with its parents) for a command's output, and removed again when the
    command ends, however it ends (an error, Ctrl-C), leaving it empty where it did not exist
    before, with the parents made for it: a run that wrote nothing leaves no empty folder."""
    path = Path(path)
    made = [folder for folder in (path, *path.parents) if not folder.exists()]  # innermost first
    path.mkdir(parents=True, exist_ok=True)
    try:
        yield path
    finally:
        for folder in made:
            if not folder.is_dir() or any(folder.iterdir()):
                break
            folder.rmdir()
