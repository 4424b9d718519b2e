"""Moving single games between a batch and the JSON-able state dict.

The dict schema is documented in ``docs/state.md``; validation lives in
:mod:`umbrella_env.core.serialize`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from umbrella_env.core import actions as A
from umbrella_env.core import engine as E
from umbrella_env.core.components import COLOURS, ComponentSet
from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import StateError
from umbrella_env.core.serialize import encode_state, tile_code, validate_state_dict, zone_count_rows


def to_dict(state: E.BatchState, b: int) -> dict[str, Any]:
    """Game ``b`` of the batch as a canonical state dict."""
    b = E.check_index(state, b)
    cfg = state.config
    P = cfg.num_players
    return encode_state(
        num_players=P,
        plate_level=cfg.plate_level,
        max_turns=cfg.max_turns,
        current_player=int(state.current[b]),
        phase=int(state.phase[b]),
        turn=int(state.turn[b]),
        stages=state.stage[b].reshape(P, 16).tolist(),
        zone_rows=state.zones[b].tolist(),
        discard=state.discard[b].tolist(),
        stacks=[[c for c in row[::-1] if c >= 0] for row in state.stacks[b].reshape(P * 4, -1).tolist()],
        plates=state.plates[b].tolist(),
        supply=int(state.supply[b]),
        reserve_used=int(state.reserve_used[b]),
        end_triggered_by=int(state.end_triggered_by[b]),
        passing=int(state.passing[b]),
        extra_turn=bool(state.extra_turn[b]),
        last_side=int(state.last_side[b]),
        last_colour=int(state.last_colour[b]),
        terminated=bool(state.terminated[b]),
        truncated=bool(state.truncated[b]),
        scores=E.scores(E.take(state, np.array([b])))[0].tolist(),
    )


def load_dict(state: E.BatchState, b: int, d: Mapping[str, Any]) -> None:
    """Overwrite game ``b`` of the batch with the state dict ``d`` (validated first)."""
    b = E.check_index(state, b)
    cfg = state.config
    d = validate_state_dict(d, components=cfg.components)
    for key, want in (("num_players", cfg.num_players), ("plate_level", cfg.plate_level), ("max_turns", cfg.max_turns)):
        if d[key] != want:
            raise StateError(f"{key}: the batch is configured for {want}, the dict has {d[key]}")
    P = cfg.num_players
    H = state.stacks.shape[3]
    stacks = np.full((P, 4, H), -1, np.int8)  # built before anything is written: a refusal changes nothing
    for p in range(P):
        for k in range(4):
            stack = d["slots"][p][k]
            if len(stack) > H:
                raise StateError(f"slots[{p}][{k}]: a stack holds at most {H} tiles, got {len(stack)}")
            for depth, entry in enumerate(reversed(stack)):
                stacks[p, k, depth] = tile_code(entry)
    state.stage[b] = [[[COLOURS.index(ch) for ch in row] for row in stage] for stage in d["stages"]]
    state.zones[b], state.discard[b] = zone_count_rows(P, d["zones"])
    state.stacks[b] = stacks
    state.plates[b] = [[-1 if c is None else COLOURS.index(c) for c in plate] for plate in d["plates"]]
    state.supply[b] = d["supply"]
    state.reserve_used[b] = d["reserve_used"]
    state.current[b] = d["current_player"]
    state.phase[b] = A.PHASES.index(d["phase"])
    state.end_triggered_by[b] = -1 if d["end_triggered_by"] is None else d["end_triggered_by"]
    state.turn[b] = d["turn"]
    state.passing[b] = -1 if d["passing"] is None else tile_code(d["passing"])
    state.extra_turn[b] = d["extra_turn"]
    last = d["last_slide"]
    state.last_side[b] = -1 if last is None else A.SIDES.index(last["side"])
    state.last_colour[b] = -1 if last is None else COLOURS.index(last["colour"])
    state.terminated[b] = d["terminated"]
    state.truncated[b] = d["truncated"]


def from_dict(d: Mapping[str, Any], components: ComponentSet | None = None) -> E.BatchState:
    """A batch of one game holding the state dict ``d``."""
    checked = validate_state_dict(d, components=components)
    kwargs: dict[str, Any] = {}
    if components is not None:
        kwargs["components"] = components
    config = GameConfig(
        num_players=checked["num_players"],
        plate_level=checked["plate_level"],
        max_turns=checked["max_turns"],
        **kwargs,
    )
    state = E.allocate(config, 1)
    load_dict(state, 0, checked)
    return state
