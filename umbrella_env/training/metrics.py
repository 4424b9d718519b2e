"""The trainers' ``progress.csv``: every scalar a run logs, a row per iteration, readable
without TensorBoard (``pandas.read_csv``, a spreadsheet).

A row holds the step columns first (the alphazero trainer's ``iteration`` and ``games``,
MaskablePPO's ``timesteps``), then each scalar under its TensorBoard tag (``loss/policy``,
``eval/vs_heuristic``, ``train/approx_kl``) in the order the run first logged it; a
scalar a row does not have is left empty.  Each row is written when its iteration ends, so
a killed run leaves the rows it finished.  A resumed run carries the rows of its
checkpoint's run up to the checkpoint (:func:`read_rows`) and replaces what the stopped run
logged after it, as TensorBoard's ``purge_step`` does."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from umbrella_env.paths import write_atomically

#: The name of the file in a run's ``--out`` folder.
METRICS_FILE = "progress.csv"
#: The first column of each trainer's file: alphazero's, MaskablePPO's.
STEP_COLUMNS = ("iteration", "timesteps")


def written_by_a_trainer(path: Path) -> bool:
    """Whether the file at ``path`` is a trainer's metrics (empty, or a header that starts
    with a step column): ``--overwrite`` removes it, and nothing else of that name."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            first = f.readline()
    except (OSError, UnicodeDecodeError):
        return False
    return not first or first.split(",", 1)[0].strip() in STEP_COLUMNS


def _cell(value: Any) -> str:
    """A scalar as the CSV shows it: integers as such, floats in the shortest form that reads
    back to the same number (NumPy's for a NumPy float: ``0.1`` for a float32 0.1), nan and
    inf as Python and pandas read them, missing as the empty cell."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, np.floating):
        return str(value)
    return repr(float(value))


class MetricsFile:
    """The rows of ``path`` (``progress.csv``), written as they come (:meth:`add`).
    ``rows`` are those a resumed run carries (:func:`read_rows`): the first :meth:`add`
    writes them with its own row."""

    def __init__(self, path: Path, rows: list[dict[str, str]] | None = None) -> None:
        self.path = Path(path)
        self.rows: list[dict[str, str]] = list(rows or [])
        self.columns: list[str] = list(dict.fromkeys(k for row in self.rows for k in row))
        self._written = False

    def flush(self) -> None:
        """Write the file now if no :meth:`add` has: a resumed run stopped before its first
        row leaves the rows it carried, not the stopped run's file."""
        if not self._written and self.rows:
            self._rewrite()

    def _rewrite(self) -> None:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=self.columns, restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.rows)
        text = out.getvalue()
        write_atomically(self.path, lambda tmp: tmp.write_text(text, encoding="utf-8", newline=""))
        self._written = True

    def add(self, row: Mapping[str, Any]) -> None:
        """Append ``row`` (column -> scalar) to the file.  A row that brings a new column
        (the first losses, the first evaluation) rewrites the file whole, atomically, with
        the wider header; any other is appended as one line, so a long run writes each row
        once."""
        cells = {str(k): _cell(v) for k, v in row.items()}
        new = [k for k in cells if k not in self.columns]
        self.rows.append(cells)
        self.columns.extend(new)
        if new or not self._written:
            self._rewrite()
        else:
            line = io.StringIO()
            csv.DictWriter(line, fieldnames=self.columns, restval="", lineterminator="\n").writerow(cells)
            with open(self.path, "a", encoding="utf-8", newline="") as f:
                f.write(line.getvalue())


def read_rows(path: Path, step: str, through: float) -> list[dict[str, str]]:
    """The rows of the ``progress.csv`` at ``path`` whose ``step`` column is at most
    ``through`` (the resumed checkpoint's), or ValueError naming the file when it is not one
    a trainer wrote (unreadable, a header without a step column first, a row without a
    number in ``step``, or one of more or fewer cells than the header before the last row: a
    last row cut short by a kill is left out); none when there is no file (a run of a
    version before the file)."""
    if not Path(path).is_file():
        return []
    try:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"--resume: the run's metrics {str(path)!r} are unreadable ({exc!r})") from None
    header = reader.fieldnames or []  # none: an empty file
    if header and header[0].strip() not in STEP_COLUMNS:  # a foreign file was replaced, silently, by this run's
        raise ValueError(
            f"--resume: the run's metrics {str(path)!r} are not a file this trainer wrote (its header does not "
            f"begin with a step column, one of {', '.join(STEP_COLUMNS)}); remove it to start the metrics anew"
        )
    if rows and None in rows[-1].values():
        rows.pop()  # a last row cut short by a kill: left out, as the rows after the checkpoint are
    kept = []
    for number, row in enumerate(rows, start=2):
        if None in row.values():  # fewer cells than the header, before the last row
            raise ValueError(
                f"--resume: the run's metrics {str(path)!r} are not a file this trainer wrote (line {number} has "
                "fewer cells than the header); remove it to start the metrics anew"
            )
        try:
            at = float(row.get(step) or "")
        except ValueError:
            raise ValueError(
                f"--resume: the run's metrics {str(path)!r} are not a file this trainer wrote (line {number} has "
                f"no number in its {step!r} column); remove it to start the metrics anew"
            ) from None
        if None in row:  # more cells than the header names
            raise ValueError(
                f"--resume: the run's metrics {str(path)!r} are not a file this trainer wrote (line {number} has "
                "more cells than the header); remove it to start the metrics anew"
            )
        if at <= through:
            kept.append({k: v or "" for k, v in row.items()})
    return kept
