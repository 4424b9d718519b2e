"""One small interface over both rules engines, so every rule test runs on both.

An adapter has: ``new(config, seed) -> handle``, ``load(state_dict) -> handle``,
``dump(handle) -> dict`` (canonical state dict), ``legal(handle) -> list[int]`` (sorted),
``step(handle, action)`` (checked: raises on bad input), ``scores(handle) -> list[int]``,
``ranks(handle) -> list[int]``, ``actor(handle) -> int``.
"""

from __future__ import annotations

from typing import Any

from umbrella_env.core.config import GameConfig


class ReferenceAdapter:
    name = "reference"

    def new(self, config: GameConfig, seed: int) -> Any:
        from umbrella_env.core.reference import ReferenceGame

        return ReferenceGame.new(config, seed=seed)

    def load(self, state: dict) -> Any:
        from umbrella_env.core.reference import ReferenceGame

        return ReferenceGame.from_dict(state)

    def dump(self, game: Any) -> dict:
        return game.to_dict()

    def legal(self, game: Any) -> list[int]:
        return sorted(game.legal_actions())

    def step(self, game: Any, action: int) -> None:
        game.step(action)

    def scores(self, game: Any) -> list[int]:
        return list(game.scores())

    def ranks(self, game: Any) -> list[int]:
        return list(game.ranks())

    def actor(self, game: Any) -> int:
        return game.actor


ADAPTERS: dict[str, Any] = {"reference": ReferenceAdapter()}
