"""The trainers' progress.csv (:mod:`umbrella_env.training.metrics`): every scalar a run
logs, readable without TensorBoard, carried over by a resume up to its checkpoint."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from umbrella_env.training.metrics import MetricsFile, read_rows


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def test_rows_widen_the_header_in_the_order_scalars_first_come(tmp_path) -> None:
    path = tmp_path / "progress.csv"
    m = MetricsFile(path)
    m.add({"iteration": 0, "games": 0, "eval/vs_heuristic": 0.5})
    m.add({"iteration": 1, "games": np.int64(8), "loss/policy": np.float32(0.1), "loss/value": 0.123456789})
    m.add({"iteration": 2, "games": 16, "loss/policy": 1.5, "loss/value": float("nan")})
    header, rows = _read(path)
    assert header == ["iteration", "games", "eval/vs_heuristic", "loss/policy", "loss/value"]
    assert rows == [
        {"iteration": "0", "games": "0", "eval/vs_heuristic": "0.5", "loss/policy": "", "loss/value": ""},
        {"iteration": "1", "games": "8", "eval/vs_heuristic": "", "loss/policy": "0.1", "loss/value": "0.123456789"},
        {"iteration": "2", "games": "16", "eval/vs_heuristic": "", "loss/policy": "1.5", "loss/value": "nan"},
    ]
    assert not list(tmp_path.glob("*.tmp"))


def test_a_row_without_a_new_column_is_appended_not_rewritten(tmp_path) -> None:
    """A long run (a PPO row per rollout) wrote the whole file at every row: quadratic."""
    path = tmp_path / "progress.csv"
    m = MetricsFile(path)
    m.add({"timesteps": 64, "train/loss": 1.0})
    inode = path.stat().st_ino
    m.add({"timesteps": 128, "train/loss": 0.5})
    assert path.stat().st_ino == inode  # appended in place (an atomic rewrite is a new file)
    m.add({"timesteps": 192, "train/loss": 0.25, "eval/metric": 0.75})  # a new column: rewritten whole
    assert path.stat().st_ino != inode
    assert _read(path) == (
        ["timesteps", "train/loss", "eval/metric"],
        [
            {"timesteps": "64", "train/loss": "1.0", "eval/metric": ""},
            {"timesteps": "128", "train/loss": "0.5", "eval/metric": ""},
            {"timesteps": "192", "train/loss": "0.25", "eval/metric": "0.75"},
        ],
    )


def test_a_resume_keeps_the_rows_up_to_its_checkpoint_and_replaces_the_rest(tmp_path) -> None:
    old = tmp_path / "old.csv"
    m = MetricsFile(old)
    for i in range(5):
        m.add({"iteration": i, "loss/policy": 1.0 / (i + 1)})
    kept = read_rows(old, "iteration", 2)  # the checkpoint was written at iteration 2
    assert [r["iteration"] for r in kept] == ["0", "1", "2"]
    new = tmp_path / "new.csv"
    resumed = MetricsFile(new, kept)
    resumed.add({"iteration": 3, "loss/policy": 9.0, "eval/metric": 0.5})
    header, rows = _read(new)
    assert header == ["iteration", "loss/policy", "eval/metric"]
    assert [(r["iteration"], r["loss/policy"]) for r in rows] == [
        ("0", "1.0"),
        ("1", "0.5"),
        ("2", "0.3333333333333333"),
        ("3", "9.0"),
    ]
    assert read_rows(tmp_path / "missing.csv", "iteration", 2) == []  # a run of before the file


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("iteration,loss\nabc,1\n", "line 2 has no number in its 'iteration' column"),
        ("loss\n1\n", "its header does not begin with a step column"),
        ("garbage,,,\n", "its header does not begin with a step column"),  # it was replaced, silently
        ("iteration,loss,x\n1,2,3\n2,3\n4,5,6\n", "line 3 has fewer cells than the header"),
        ("iteration,loss\n1,2,3\n", "line 2 has more cells than the header"),
        (b"iteration\n\xff\xfe\n", "are unreadable (UnicodeDecodeError"),
    ],
)
def test_a_damaged_file_is_refused_naming_it(tmp_path, text: str | bytes, words: str) -> None:
    path = tmp_path / "progress.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ValueError) as info:
        read_rows(path, "iteration", 10)
    assert f"--resume: the run's metrics {str(path)!r}" in str(info.value) and words in str(info.value)


def test_a_last_row_cut_short_by_a_kill_is_left_out(tmp_path) -> None:
    """It was kept with its missing cells empty (trainer audit, 2026-12-07)."""
    path = tmp_path / "progress.csv"
    path.write_text("iteration,loss,entropy\n1,0.5,2\n2,0.4\n")
    assert read_rows(path, "iteration", 10) == [{"iteration": "1", "loss": "0.5", "entropy": "2"}]


def test_flush_writes_the_carried_rows_of_a_resume_that_stops_before_its_first_row(tmp_path) -> None:
    path = tmp_path / "progress.csv"
    path.write_text("timesteps,train/loss\n128,1.0\n256,0.5\n384,0.25\n")  # the stopped run's file
    resumed = MetricsFile(path, read_rows(path, "timesteps", 256))
    resumed.flush()  # a Ctrl-C before the first rollout's end: the file is the resumed lineage's
    assert [r["timesteps"] for r in read_rows(path, "timesteps", float("inf"))] == ["128", "256"]
    resumed.add({"timesteps": 512, "train/loss": 0.1})
    resumed.flush()  # written already: nothing more
    assert [r["timesteps"] for r in read_rows(path, "timesteps", float("inf"))] == ["128", "256", "512"]
    MetricsFile(tmp_path / "none.csv").flush()
    assert not (tmp_path / "none.csv").exists()  # a fresh run with no row writes no file
