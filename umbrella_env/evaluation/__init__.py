"""Tournaments and solo evaluations of umbrella-env agents (the evaluation layer).

* :mod:`~umbrella_env.evaluation.tournament`: tables, seeds, seat rotation, the schedule
  over a process pool (:func:`run_tournament`);
* :mod:`~umbrella_env.evaluation.stats`: win rates, intervals, ratings, head-to-head
  (:func:`summarise`);
* :mod:`~umbrella_env.evaluation.report` and :mod:`~umbrella_env.evaluation.plots`:
  terminal tables, ``report.md``, JSON and PNG plots;
* :mod:`~umbrella_env.evaluation.cli`: the ``evaluate.py`` / ``umbrella-evaluate`` command;
* :mod:`~umbrella_env.evaluation.ladder`: the agent-strength ladder (a development tool).

Games are played by :func:`umbrella_env.match.play_game`.
"""

from umbrella_env.core.facts import MERIT_BANDS, merit_band
from umbrella_env.evaluation.cli import main
from umbrella_env.evaluation.plots import write_plots
from umbrella_env.evaluation.report import head_to_head_rows, merit_rows, print_summary, standings_rows, write_report
from umbrella_env.evaluation.stats import Z95, mean_interval, openskill_ratings, ranked, summarise, wilson_interval
from umbrella_env.evaluation.tournament import (
    AgentError,
    EvaluationError,
    GameRecord,
    TournamentResult,
    create_agent,
    deal_key,
    game_seed,
    parse_specs,
    plan_tables,
    play_specs,
    run_tournament,
    validate,
)
from umbrella_env.match import win_credits

__all__ = [
    "MERIT_BANDS",
    "Z95",
    "AgentError",
    "EvaluationError",
    "GameRecord",
    "TournamentResult",
    "create_agent",
    "deal_key",
    "game_seed",
    "head_to_head_rows",
    "main",
    "mean_interval",
    "merit_band",
    "merit_rows",
    "openskill_ratings",
    "parse_specs",
    "plan_tables",
    "play_specs",
    "print_summary",
    "ranked",
    "run_tournament",
    "standings_rows",
    "summarise",
    "validate",
    "win_credits",
    "wilson_interval",
    "write_plots",
    "write_report",
]
