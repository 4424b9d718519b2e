"""Output folders of the command-line tools (trainers, evaluation): checked before any work.

Every tool that writes a run folder asks :func:`output_dir_problem` first, so that a folder
that cannot be created is refused with the reason (exit status 2) instead of a traceback
after the work is done.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
    except OSError as exc:
        return f"{str(probe)!r} is not writable ({exc.strerror or exc})"
    return None
