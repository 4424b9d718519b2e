"""Explicit game configuration: no module globals, no environment variables."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from umbrella_env.core import facts as F
from umbrella_env.core.components import ComponentSet, default_components
from umbrella_env.core.errors import ConfigError

#: Default turn limit (whole player turns, extra turns included) after which a game is
#: truncated.  Over 99% of uniformly random games end before it (docs/rules.md §5.4).
DEFAULT_MAX_TURNS = 3000
#: The largest ``max_turns``: the batched engine counts turns in int32.
MAX_TURNS_LIMIT = 2**31 - 1


@dataclass(frozen=True)
class GameConfig:
    """Settings of one game, or of every game of a batch.

    Args:
        num_players: 1 (solo, docs/rules.md §8) to 4.
        plate_level: score-plate level 1 to 4 (docs/rules.md §7).
        max_turns: turns (whole player turns) after which a game is truncated.
        components: the component set; :func:`~umbrella_env.core.components.load_components`
            reads one from a file.
    """

    num_players: int = 2
    plate_level: int = 1
    max_turns: int = DEFAULT_MAX_TURNS
    components: ComponentSet = field(default_factory=default_components, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("num_players", "plate_level", "max_turns"):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise ConfigError(f"{name} must be an int, got {value!r} of type {type(value).__name__}")
            object.__setattr__(self, name, int(value))  # a NumPy integer is stored as an int
        if not 1 <= self.num_players <= 4:
            raise ConfigError(f"num_players must be 1 (solo), 2, 3 or 4, got {self.num_players}")
        if not 1 <= self.plate_level <= 4:
            raise ConfigError(f"plate_level must be 1, 2, 3 or 4, got {self.plate_level}")
        if not 1 <= self.max_turns <= MAX_TURNS_LIMIT:
            raise ConfigError(f"max_turns must be an int in [1, {MAX_TURNS_LIMIT}], got {self.max_turns}")
        if not isinstance(self.components, ComponentSet):
            raise ConfigError(
                f"components must be a ComponentSet (see load_components), got {type(self.components).__name__}"
            )

    @property
    def solo(self) -> bool:
        return self.num_players == 1

    @property
    def num_zones(self) -> int:
        """Zones in the game (:func:`umbrella_env.core.facts.num_zones`)."""
        return F.num_zones(self.num_players)

    @property
    def initial_supply(self) -> int:
        return self.components.solo_tokens if self.solo else self.components.supply[self.num_players]

    @property
    def max_stack(self) -> int:
        """Largest possible stack on one slot: every tile in play."""
        return 6 if self.solo else 4 * self.num_players
