"""JSON text as every file this project reads is parsed: one place for what a damaged or
crafted file can do to ``json.loads``."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["parse_json"]


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, refused when a name repeats (``json`` keeps the last silently,
    where TOML, the other component-file format, refuses it)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} is given twice in one object")
        out[key] = value
    return out


def parse_json(text: str | bytes) -> Any:
    """``json.loads`` whose every refusal is a ``ValueError`` with a short message: text
    nested too deeply (``json`` raises ``RecursionError``) and a number of more digits than
    Python converts (its message suggests raising the limit) included.  Every file this
    project reads as JSON (sidecars, histories, progress lines, component files, states) is
    parsed here, so that a damaged or crafted file gets an error naming it, not a traceback."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as exc:  # UnicodeDecodeError of bytes, a number past the digit limit
        said = str(exc)  # a number past the digit limit: its advice to raise the limit is left out
        raise ValueError(f"not valid JSON ({said.split(';')[0] if 'Exceeds the limit' in said else said})") from None
