"""JSON-safe copies of what experiments compute (numpy scalars and arrays, tuples, inf)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["to_jsonable"]


def to_jsonable(value: Any) -> Any:
    """A JSON-safe copy: numpy scalars and arrays as numbers and lists, non-finite floats as None.

    Tuples become lists, mapping keys strings; an object with ``to_json()`` its JSON; anything
    else becomes its ``repr``.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if callable(getattr(value, "to_json", None)):
        return to_jsonable(value.to_json())
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return repr(value)
