"""Checks of agent options: one place for the words of a refused value.

Every agent constructor checks its options with these before it builds anything, so a bad
value is refused with a :class:`ValueError` naming the option and its valid range, not
met as a crash (or a silently weaker agent) in the middle of a game.  NumPy scalars are
accepted like Python numbers; ``bool`` is not a number here.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np


def check_int(name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_real(
    name: str, value: Any, *, minimum: float | None = None, maximum: float | None = None, positive: bool = False
) -> float:
    """``value`` as a finite float, > 0 when ``positive``, within [minimum, maximum] when given."""
    try:
        ok = not isinstance(value, (bool, np.bool_)) and isinstance(value, Real) and math.isfinite(value)
    except OverflowError:  # an int too large for a float
        ok = False
    ok = ok and not (positive and value <= 0)
    ok = ok and (minimum is None or value >= minimum) and (maximum is None or value <= maximum)
    if not ok:
        if positive and maximum is not None:
            want = f"a number in (0, {maximum}]"
        elif positive:
            want = "a finite number > 0"
        elif minimum is not None and maximum is not None:
            want = f"a number in [{minimum}, {maximum}]"
        elif minimum is not None:
            want = f"a finite number >= {minimum}"
        elif maximum is not None:
            want = f"a finite number <= {maximum}"
        else:
            want = "a finite number"
        raise ValueError(f"{name} must be {want}, got {value!r}")
    return float(value)


def check_flag(name: str, value: Any) -> bool:
    """``value`` as a bool; only True and False (or NumPy's) are accepted."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)
