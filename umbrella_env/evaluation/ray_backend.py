"""``evaluate.py --backend ray [--address HOST:PORT]``: a tournament's games as Ray tasks.

The games are cut into the same chunks as for the process pool and each chunk is one Ray
task (one CPU) running :func:`umbrella_env.evaluation.tournament._play_chunk`: the
workers build their agents from the spec strings once per tournament and reset them before
every game, exactly as pool processes do.  A Ray worker outlives a tournament (a notebook's
second tournament, on the Ray instance of the first, gets the same workers), so it drops
the agents of an earlier tournament before its first chunk of a new one: a checkpoint
replaced in between is loaded again, as in the fresh processes of a pool.  Every game's deal and agent seeds depend on
its index alone (tournament module doc), so the records, and the report, are the same as
the process pool's for the same ``--seed``.

Checkpoint paths are made absolute before they are sent (a worker's current folder is not
the command's); on a cluster every machine needs umbrella-env installed and the
checkpoint files at the same path (docs/scaling.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

from umbrella_env.core.config import GameConfig
from umbrella_env.match import absolute_spec
from umbrella_env.ray_cluster import cluster_cpus, ray_session

#: The tournament whose agents this process holds (in a Ray worker).
_held = {"tournament": ""}


def _play_in_tournament(
    tournament: str, forget_agents: Callable[[], None], play_chunk: Callable[..., list[Any]], *args: Any
) -> list[Any]:
    """``play_chunk(*args)`` in a Ray worker, after ``forget_agents()`` when the worker last
    played a chunk of another tournament."""
    if _held["tournament"] != tournament:
        forget_agents()
        _held["tournament"] = tournament
    return play_chunk(*args)


def play_on_ray(
    play_chunk: Callable[..., list[Any]],
    tasks: Sequence[Any],
    specs: list[str],
    labels: list[str],
    config: GameConfig,
    address: str | None,
    on_done: Callable[[int], None],
    forget_agents: Callable[[], None],
) -> list[Any]:
    """The records of ``tasks`` (tournament ``_Task``s), each chunk played by
    ``play_chunk(tasks, specs, labels, config)`` as a Ray task on the cluster at ``address``
    (default: a local Ray); ``on_done(n)`` after every finished chunk.  A worker calls
    ``forget_agents()`` (a module-level function: it runs in the worker's own module)
    before its first chunk of this tournament.

    Raises :class:`~umbrella_env.ray_cluster.RayUnavailable` when Ray is missing or
    unreachable, and the game's own exception (``AgentError``, ...) when a game fails on a
    worker.
    """
    remote_specs = [absolute_spec(s) for s in specs]
    with ray_session(address, what="evaluate.py --backend ray") as ray:
        workers = max(1, cluster_cpus(ray))
        chunk = max(1, min(32, len(tasks) // (workers * 8)))
        play = ray.remote(num_cpus=1, max_retries=0)(_play_in_tournament)
        tournament = uuid.uuid4().hex
        pending = [play.remote(tournament, forget_agents, play_chunk, list(tasks[i : i + chunk]), remote_specs,
                               labels, config) for i in range(0, len(tasks), chunk)]  # fmt: skip
        records: list[Any] = []
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    part = ray.get(ref)
                    records += part
                    on_done(len(part))
        except ray.exceptions.RayTaskError as exc:
            for ref in pending:
                ray.cancel(ref)
            cause = getattr(exc, "cause", None)
            raise (cause if isinstance(cause, Exception) else exc) from None
        return records
