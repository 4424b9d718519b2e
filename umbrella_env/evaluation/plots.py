"""PNG plots of a tournament summary (matplotlib): solo score histograms and merit bands;
win rates with intervals and ratings at 2-4 players.

The figures are :class:`matplotlib.figure.Figure` objects, not pyplot's: drawing them
changes neither the caller's backend (a notebook's inline one) nor pyplot's open figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from umbrella_env.core.facts import MERIT_BANDS
from umbrella_env.evaluation.stats import ranked
from umbrella_env.match import band_label
from umbrella_env.paths import write_atomically


def write_plots(summary: dict[str, Any], out: Path) -> list[Path]:
    """PNG plots in the folder ``out``; returns their paths."""
    from matplotlib.figure import Figure

    paths = []
    ranked_agents = ranked(summary)
    labels = [e["label"] for e in ranked_agents]
    if summary["mode"] == "solo":
        fig = Figure(figsize=(9, 4.8))
        ax = fig.subplots()
        all_scores = [int(k) for e in ranked_agents for k in e["histogram"]]
        lo_s, hi_s = min([0, *all_scores]), max([32, *all_scores])
        shades = ["#f2f2f2", "#e0e0e0"]
        for i, (low, high, name) in enumerate(MERIT_BANDS):
            a, b = max(low, lo_s) - 0.5, min(high, hi_s) + 0.5
            ax.axvspan(a, b, color=shades[i % 2], zorder=0)
            ax.text((a + b) / 2, 1.0, name, transform=ax.get_xaxis_transform(), ha="center", va="bottom", fontsize=8)
        bins = np.arange(lo_s - 0.5, hi_s + 1.5).tolist()
        for e in ranked_agents:
            values = [int(k) for k, v in e["histogram"].items() for _ in range(v)]
            label = f"{e['label']} (mean {e['mean_score']:.1f})"
            ax.hist(values, bins=bins, histtype="step", linewidth=1.8, label=label)
        ax.set_xlabel("solo score")
        ax.set_ylabel("games")
        ax.set_xlim(lo_s - 0.5, hi_s + 0.5)
        ax.legend(loc="upper right", fontsize=8)
        fig.tight_layout()
        paths.append(out / "scores.png")
        _save(fig, paths[-1])

        fig = Figure(figsize=(9, 4))
        ax = fig.subplots()
        names = [f"{name}\n{band_label(lo, hi)}" for lo, hi, name in MERIT_BANDS]
        width = 0.8 / max(1, len(ranked_agents))
        for i, e in enumerate(ranked_agents):
            share = [100 * c / max(1, e["games"]) for c in e["merit_bands"].values()]
            ax.bar(np.arange(len(names)) + (i - (len(ranked_agents) - 1) / 2) * width, share, width, label=e["label"])
        ax.set_xticks(np.arange(len(names)), names, fontsize=8)
        ax.set_ylabel("% of games")
        ax.set_title("Merit bands (docs/rules.md §8)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        paths.append(out / "merit.png")
        _save(fig, paths[-1])
        return paths

    y = np.arange(len(ranked_agents))[::-1]
    fig = Figure(figsize=(8, 1.2 + 0.5 * len(ranked_agents)))
    ax = fig.subplots()
    rate = np.array([e["win_rate"] for e in ranked_agents])
    lo = np.array([e["win_ci"][0] for e in ranked_agents])
    hi = np.array([e["win_ci"][1] for e in ranked_agents])
    ax.barh(y, 100 * rate, xerr=100 * np.vstack([rate - lo, hi - rate]), capsize=4, color="#4c72b0")
    equal = 100 / summary["num_players"]
    ax.axvline(equal, color="grey", linestyle="--", linewidth=1)
    ax.set_yticks(y, labels)
    ax.set_xlabel("win rate % (95% Wilson interval)")
    ax.set_title(f"{summary['num_players']} players: win rates (dashed: equal strength, {equal:.0f}%)", fontsize=10)
    ax.set_xlim(0, 100)
    fig.tight_layout()
    paths.append(out / "winrates.png")
    _save(fig, paths[-1])

    fig = Figure(figsize=(8, 1.2 + 0.5 * len(ranked_agents)))
    ax = fig.subplots()
    mu = np.array([e["mu"] for e in ranked_agents])
    sigma = np.array([e["sigma"] for e in ranked_agents])
    ax.barh(y, mu, xerr=3 * sigma, capsize=4, color="#55a868")
    ax.set_yticks(y, labels)
    ax.set_xlabel("mu ± 3 sigma")
    ax.set_title("OpenSkill Plackett-Luce ratings (left whisker: ordinal = mu - 3 sigma)", fontsize=10)
    fig.tight_layout()
    paths.append(out / "ratings.png")
    _save(fig, paths[-1])
    return paths


def _save(fig: Any, path: Path) -> None:
    """``fig`` as the PNG ``path``, which appears only once complete (a full disk leaves no
    truncated picture)."""
    write_atomically(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
