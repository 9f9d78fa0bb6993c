"""Checks shared by the bounds of several notes' sections (a private helper of smml.bounds)."""
from __future__ import annotations

import math
import numbers


def _check_pos(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")
