"""The rules core: component data, configuration, action codec, rule facts and three engines.

Modules: :mod:`~umbrella_env.core.components` (printed component data and its validator),
:mod:`~umbrella_env.core.config` (``GameConfig``), :mod:`~umbrella_env.core.actions`
(the flat action space), :mod:`~umbrella_env.core.facts` (the rule facts the engines
share), :mod:`~umbrella_env.core.engine` (the batched engine, with
:mod:`~umbrella_env.core.tables`), :mod:`~umbrella_env.core.single` (the single-game
engine, with :mod:`~umbrella_env.core.single_observer` and
:mod:`~umbrella_env.core.single_deal`), :mod:`~umbrella_env.core.reference` (the
plain-Python oracle), :mod:`~umbrella_env.core.observation`,
:mod:`~umbrella_env.core.serialize` (state dict), :mod:`~umbrella_env.core.batch_io`,
:mod:`~umbrella_env.core.jsonio` (the one JSON parser), :mod:`~umbrella_env.core.hidden`
(the hidden tiles a seat cannot see; determinization), :mod:`~umbrella_env.core.render`,
:mod:`~umbrella_env.core.image`, :mod:`~umbrella_env.core.svg`,
:mod:`~umbrella_env.core.playout` (a batched playout policy), :mod:`~umbrella_env.core.errors`.
"""

from umbrella_env.core.config import GameConfig
from umbrella_env.core.errors import (
    ActionError,
    ComponentError,
    ConfigError,
    GameOverError,
    IllegalActionError,
    StateError,
    UmbrellaError,
)

__all__ = [
    "GameConfig",
    "UmbrellaError",
    "ConfigError",
    "ComponentError",
    "ActionError",
    "IllegalActionError",
    "GameOverError",
    "StateError",
]
