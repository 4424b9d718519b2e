"""Exceptions raised by umbrella-env.  All derive from :class:`UmbrellaError`."""

from __future__ import annotations


class UmbrellaError(Exception):
    """Base class of every error umbrella-env raises on bad input."""


class ConfigError(UmbrellaError, ValueError):
    """An invalid game configuration (player count, plate level, turn limit, types)."""


class ComponentError(UmbrellaError, ValueError):
    """A component set (built in or loaded from a file) breaks an invariant."""


class ActionError(UmbrellaError, ValueError):
    """An action id out of range, or actions of the wrong shape or dtype."""


class IllegalActionError(ActionError):
    """An action id that exists but is not legal in the game's current decision."""


class GameOverError(UmbrellaError, RuntimeError):
    """Stepping a game that has already terminated or been truncated."""


class StateError(UmbrellaError, ValueError):
    """A state dict that is corrupt or inconsistent; the message names the field."""


class IllegalActionWarning(UserWarning):
    """An illegal action under ``illegal_action="loss"``: the game ends as the mover's loss.
    One warning per step that has one; silence them with
    ``warnings.simplefilter("ignore", IllegalActionWarning)``."""
