"""One small interface over the rules engines, so every rule test runs on each of them.

An adapter (reference, batched, single) has: ``new(config, seed) -> handle``,
``load(state_dict) -> handle``, ``dump(handle) -> dict`` (canonical state dict),
``legal(handle) -> list[int]`` (sorted), ``step(handle, action)`` (checked: raises on bad
input), ``scores(handle) -> list[int]``, ``ranks(handle) -> list[int]``, ``actor(handle) -> int``.
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


class BatchedAdapter:
    """The batched engine behind the same interface, as a batch of one game."""

    name = "batched"

    def new(self, config: GameConfig, seed: int) -> Any:
        from umbrella_env.core import engine

        return engine.init(config, 1, seed=seed)

    def load(self, state: dict) -> Any:
        from umbrella_env.core import batch_io

        return batch_io.from_dict(state)

    def dump(self, game: Any) -> dict:
        from umbrella_env.core import batch_io

        return batch_io.to_dict(game, 0)

    def legal(self, game: Any) -> list[int]:
        import numpy as np

        from umbrella_env.core import engine

        return np.flatnonzero(engine.legal_action_mask(game)[0]).tolist()

    def step(self, game: Any, action: int) -> None:
        import numpy as np

        from umbrella_env.core import actions, engine

        actions.check_action_id(action)
        engine.step(game, np.array([action]))

    def scores(self, game: Any) -> list[int]:
        from umbrella_env.core import engine

        return engine.scores(game)[0].tolist()

    def ranks(self, game: Any) -> list[int]:
        from umbrella_env.core import engine

        return engine.ranks(game)[0].tolist()

    def actor(self, game: Any) -> int:
        from umbrella_env.core import engine

        return int(engine.actor(game)[0])


ADAPTERS["batched"] = BatchedAdapter()


class SingleAdapter:
    """The fast single-game engine (umbrella_env.core.single) behind the same interface."""

    name = "single"

    def new(self, config: GameConfig, seed: int) -> Any:
        from umbrella_env.core.single import SingleGame

        return SingleGame.new(config, key=seed)

    def load(self, state: dict) -> Any:
        from umbrella_env.core.single import SingleGame

        return SingleGame.from_dict(state)

    def dump(self, game: Any) -> dict:
        return game.to_dict()

    def legal(self, game: Any) -> list[int]:
        return game.legal_actions()

    def step(self, game: Any, action: int) -> None:
        game.step_checked(action)

    def scores(self, game: Any) -> list[int]:
        return game.scores()

    def ranks(self, game: Any) -> list[int]:
        return game.ranks()

    def actor(self, game: Any) -> int:
        return game.actor


ADAPTERS["single"] = SingleAdapter()
