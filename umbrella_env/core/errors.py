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


class ArgumentError(UmbrellaError, ValueError):
    """An argument of a call outside what the call takes: an unknown agent or option value,
    an observer seat, a layout, a reset option."""


class ArgumentTypeError(UmbrellaError, TypeError):
    """An argument of a call of the wrong type (a flag that is not a bool, options that are
    not a dict), or a change to what cannot be changed (a component set): a ``TypeError``,
    as these always were, not a ``ValueError``."""


class OutOfRangeError(UmbrellaError, IndexError):
    """An index argument out of range: a game of a batch, a seat or slot of a game's table."""


class NotStartedError(UmbrellaError, RuntimeError):
    """An environment used before its ``reset()`` (or ``step_wait`` before ``step_async``)."""


class IllegalActionWarning(UserWarning):
    """An illegal action under ``illegal_action="loss"``: the game ends as the mover's loss.
    One warning per step that has one; silence them with
    ``warnings.simplefilter("ignore", IllegalActionWarning)``."""
