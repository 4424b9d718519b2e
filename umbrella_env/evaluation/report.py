"""The tournament report: terminal tables (rich when installed), ``report.md`` with the
plots, ``summary.json`` and ``games.jsonl``."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import math
import os
import shlex
import shutil
import sys
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from umbrella_env.cli_args import program_name
from umbrella_env.core.facts import MERIT_BANDS
from umbrella_env.evaluation.plots import write_plots
from umbrella_env.evaluation.provenance import provenance, provenance_lines
from umbrella_env.evaluation.stats import ELO_BOOTSTRAP, ranked, summarise
from umbrella_env.evaluation.tournament import PROG, SCRIPTS, TournamentResult
from umbrella_env.match import band_label
from umbrella_env.paths import json_text, output_folder, remove_entry, remove_run, signals_held


def _f(x: float | None, digits: int = 2) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _interval(bounds: list[float], digits: int) -> str:
    """``[low, high]``, or "–" when there is none (nan)."""
    low, high = bounds
    return "–" if math.isnan(low) or math.isnan(high) else f"[{_f(low, digits)}, {_f(high, digits)}]"


def _pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{100 * x:.1f}%"


def standings_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the standings table, best agent first."""
    rows = []
    if summary["mode"] == "solo":
        header = ["agent", "games", "mean score", "95% CI", "sd", "median", "min", "max", "truncated"]
        for e in ranked(summary):
            lo, hi = e["score_ci"]
            rows.append([
                e["label"], str(e["games"]), _f(e["mean_score"]), f"[{_f(lo)}, {_f(hi)}]", _f(e["score_sd"]),
                _f(e["median_score"], 1), str(e["min_score"]), str(e["max_score"]), str(e["truncated"]),
            ])  # fmt: skip
        return header, rows
    header = [
        "agent",
        "seats" if summary["multi_seat"] else "games",  # an agent may hold several seats of a game
        "win rate",
        "95% CI",
        "mean score ± 95% CI",
        "mu",
        "sigma",
        "ordinal",
        "Elo",
        "Elo 95% CI",
    ]
    for e in ranked(summary):
        lo, hi = e["win_ci"]
        slo, shi = e["score_ci"]
        half = (shi - slo) / 2 if not math.isnan(slo) else math.nan
        rows.append([
            e["label"], str(e["games"]), _pct(e["win_rate"]), f"[{_pct(lo)}, {_pct(hi)}]",
            f"{_f(e['mean_score'])} ± {_f(half)}", _f(e["mu"]), _f(e["sigma"]), _f(e["ordinal"]),
            _f(e["elo"], 0), _interval(e["elo_ci"], 0),
        ])  # fmt: skip
    return header, rows


def head_to_head_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    h = summary["head_to_head"]
    labels = h["labels"]
    header = ["row vs column", *labels]
    rows = []
    for i, label in enumerate(labels):
        cells = []
        for j in range(len(labels)):
            rate, n = h["rate"][i][j], h["n"][i][j]
            cells.append("" if i == j else "–" if rate is None else f"{100 * rate:.0f}% ({n})")
        rows.append([label, *cells])
    return header, rows


def paired_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Solo: the row agent's mean score minus the column agent's on the same deals, with the
    95% Student-t interval of the paired differences."""
    p = summary["paired"]
    labels = p["labels"]
    rows = []
    for i, label in enumerate(labels):
        cells = []
        for j in range(len(labels)):
            cell = p["difference"][i][j]
            cells.append("" if cell is None else f"{cell[0]:+.2f} {_interval(cell[1:], 2)}")
        rows.append([label, *cells])
    return ["row − column", *labels], rows


def merit_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    header = ["agent", *[f"{name} ({band_label(lo, hi)})" for lo, hi, name in MERIT_BANDS]]
    rows = []
    for e in ranked(summary):
        g = max(1, e["games"])
        rows.append([e["label"], *[f"{c} ({100 * c / g:.0f}%)" for c in e["merit_bands"].values()]])
    return header, rows


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    esc = [[c.replace("|", "\\|") for c in row] for row in [header, *rows]]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return "\n".join(lines)


def _text_histogram(counts: dict[str, int], width: int = 40) -> str:
    top = max(counts.values(), default=0) or 1
    name_w = max(len(k) for k in counts)
    return "\n".join(f"{k:>{name_w}} {'█' * round(width * v / top):<{width}} {v}" for k, v in counts.items())


def _format_report(summary: dict[str, Any], plots: Iterable[Path], argv: Sequence[str] | None) -> str:
    P = summary["num_players"]
    mode = "solo" if P == 1 else f"{P} players"
    lines = [
        f"# Umbrella evaluation: {mode}, plate level {summary['plate_level']}",
        "",
        "Replay with (results do not depend on `--workers`):",
        "",
        "```bash",
        summary["command"],
        "```",
        "",
    ]
    if argv is not None:
        lines += [f"Invoked as: `{program_name(PROG, SCRIPTS)} {shlex.join(argv)}`", ""]
    lines += [
        f"- seed {summary['seed']}; {len(summary['tables'])} {'agent' if P == 1 else 'table'}(s) × "
        f"{summary['games_per_table']} games = "
        f"{summary['games']} games, {summary['elapsed_seconds']:.1f} s",
        f"- turns per game: mean {_f(summary['mean_turns'], 1)}; truncated at {summary['max_turns']} turns: "
        f"{summary['truncated_games']}",
        f"- written {datetime.now().isoformat(timespec='seconds')}",
        *(provenance_lines(summary["provenance"]) if "provenance" in summary else []),
        "",
        "## Standings",
        "",
        _markdown_table(*standings_rows(summary)),
        "",
    ]
    if summary["mode"] == "solo":
        lines += [
            "Mean score with a 95% Student-t interval; every agent played the same deals.",
            "",
            "## Merit bands (docs/rules.md §8)",
            "",
            _markdown_table(*merit_rows(summary)),
            "",
        ]
        for e in ranked(summary):
            lines += [f"**{e['label']}**", "", "```", _text_histogram(e["merit_bands"]), "```", ""]
        if len(summary["head_to_head"]["labels"]) > 1:  # one agent has no one to compare with
            lines += [
                "## Paired differences (same deals)",
                "",
                "Mean score of the row agent minus the column agent's on the same deals, with the 95% "
                "Student-t interval of the differences: the measure of which agent is stronger (the deal's luck "
                "cancels out, so it is usually narrower than the two agents' own intervals).",
                "",
                _markdown_table(*paired_rows(summary)),
                "",
                "## Head to head (same deals)",
                "",
                "Share of deals on which the row agent scored more than the column agent (ties count ½), (deals).",
                "",
                _markdown_table(*head_to_head_rows(summary)),
                "",
            ]
    else:
        lines += [
            f"Win rate per seat played (a win shared by k counts 1/k; equal strength is {100 / P:.0f}%), "
            "95% Wilson interval"
            + (
                " and mean score with a 95% Student-t interval, both over deals: every deal is played in every "
                "seating, and those games share its luck, so the win rate's interval counts the games as their "
                "effective number (summary.json: effective_games) and the mean score's is over the deals' means"
                + (
                    " (agents held several seats of a game: the seats column counts them)"
                    if summary["multi_seat"]
                    else ""
                )
                if summary.get("intervals_over") == "deals"
                else ""
            )
            + "; OpenSkill Plackett-Luce rating from each game's ranks (mean over "
            f"{summary['rating_orders']} seeded orderings of the games), ordinal = mu − 3 sigma (the sort key; "
            "sigma is OpenSkill's uncertainty, not a standard error: it shrinks more slowly than the "
            "sampling noise, so mu ± 2 sigma is no 95% interval); "
            "Bradley–Terry rating on the Elo scale (mean 1500; 400 points = odds of 10 to 1) from every "
            f"pair of seats of every game, its 95% interval from {ELO_BOOTSTRAP} bootstrap resamples of the games "
            "(– for an agent that won or lost every comparison, whose rating is then set by the prior and "
            "the number of games, only a bound that also moves the mean and so every other rating: compare "
            "the others by their differences; or whose rating every resample repeats: "
            "resampling cannot vary its record).",
            "",
            "## Head to head",
            "",
            "Rate at which the row agent finished ahead of the column agent in the games both played "
            "(ties count ½), (seat pairs).",
            "",
            _markdown_table(*head_to_head_rows(summary)),
            "",
            "## Seats",
            "",
            "Every agent sat in every seat of its tables equally often:",
            "",
            _markdown_table(
                ["seat", "games", "win rate", "mean score"],
                [[str(s["seat"]), str(s["games"]), _pct(s["win_rate"]), _f(s["mean_score"])] for s in summary["seats"]],
            ),
            "",
            "## Tables",
            "",
            ", ".join("(" + " · ".join(t) + ")" for t in summary["tables"]),
            "",
        ]
    lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots] + [""]
    return "\n".join(lines)


#: The folder inside ``out`` where :func:`write_report` writes a report before it replaces the
#: previous one.
STAGING = ".report-partial"
#: The files of a report in its folder (``--overwrite`` removes them; a new report refuses a
#: folder that holds them).
REPORT_FILES = ("report.md", "summary.json", "games.jsonl", "scores.png", "merit.png", "winrates.png", "ratings.png")


def write_report(
    result: TournamentResult,
    out: str | Path,
    summary: dict[str, Any] | None = None,
    argv: Sequence[str] | None = None,
) -> Path:
    """Write games.jsonl, summary.json, the PNG plots and report.md into ``out``; returns
    report.md.  The files are written into a staging folder in ``out`` first, and replace the
    files of a previous report (every one of :data:`REPORT_FILES`: none stays beside the new
    report) only once all are complete: a failure (a full disk, Ctrl-C) leaves ``out`` as
    it was, and no part of a report can be taken for a whole one."""
    out = Path(out)
    summary = summary if summary is not None else summarise(result)
    if "provenance" not in summary:  # versions, commit and checkpoint hashes: where the numbers came from
        summary = {**summary, "provenance": provenance(result.checkpoints)}
    staging = out / STAGING
    remove_entry(staging)  # left by a process killed while writing
    with output_folder(out), _removed(staging):
        staging.mkdir()
        try:
            with open(staging / "games.jsonl", "w", encoding="utf-8") as fh:
                for rec in result.records:
                    fh.write(json_text(dataclasses.asdict(rec)) + "\n")
            text = json_text(summary, indent=2) + "\n"
            (staging / "summary.json").write_text(text, encoding="utf-8")
            plots = write_plots(summary, staging)
            (staging / "report.md").write_text(_format_report(summary, plots, argv), encoding="utf-8")
        except OSError as exc:  # named as the file of the report (the staging folder is gone)
            if isinstance(exc.filename, (str, os.PathLike)) and Path(exc.filename).parent == staging:
                exc.filename = str(out / Path(exc.filename).name)
            raise
        new = [name for name in REPORT_FILES if (staging / name).exists()]
        with signals_held():  # the swap is never cut in the middle: the old report or the new one
            for name in sorted(new, key=lambda name: name == "report.md"):  # report.md last
                os.replace(staging / name, out / name)
            remove_run(out, [name for name in REPORT_FILES if name not in new])
    return out / "report.md"


@contextlib.contextmanager
def _removed(folder: Path) -> Iterator[None]:
    """Remove ``folder`` on leaving, however the block ends."""
    try:
        yield
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _broken_pipe() -> None:
    raise BrokenPipeError(errno.EPIPE, "Broken pipe")


def print_summary(summary: dict[str, Any], file: Any = None) -> None:
    """The standings (and merit bands or head-to-head) on the terminal: rich if installed.
    A reader that went away (``| head``) is a ``BrokenPipeError``, as for ``print`` (rich
    alone would end the process)."""
    file = file if file is not None else sys.stdout
    tables = [("Standings", standings_rows(summary))]
    if summary["mode"] == "solo":
        tables.append(("Merit bands", merit_rows(summary)))
        if len(summary["paired"]["labels"]) > 1:
            tables.append(("Paired differences of the mean score (row − column, same deals)", paired_rows(summary)))
    if len(summary["head_to_head"]["labels"]) > 1:
        tables.append(("Head to head (row vs column)", head_to_head_rows(summary)))
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        for title, (header, rows) in tables:
            widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
            print(f"\n{title}", file=file)
            for row in [header, *rows]:
                print("  ".join(c.ljust(w) for c, w in zip(row, widths)), file=file)
        return
    console = Console(file=file)
    console.on_broken_pipe = _broken_pipe  # type: ignore[method-assign]  # rich would exit the process
    if not console.is_terminal:
        console.width = max(console.width, 160)
    for title, (header, rows) in tables:
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        if sum(widths) + 3 * len(header) + 1 > console.width:
            # Too narrow for the table: rich would cut the cells ("gree…", "[52.…"), so that
            # two agents could look alike; a block per row instead, every figure whole.
            console.print(f"\n{title}", markup=False, highlight=False)
            for row in rows:
                console.print(row[0], markup=False, highlight=False)
                for h, value in zip(header[1:], row[1:]):
                    console.print(f"  {h}: {value}", markup=False, highlight=False)
            continue
        table = Table(title=title)
        for i, h in enumerate(header):
            table.add_column(h, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*row)
        console.print(table)
