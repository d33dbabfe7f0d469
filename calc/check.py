"""Guard clauses shared by every ``calc`` module.

Each check returns the cleaned value or raises :class:`~calc.errors.CalcError`
naming the parameter, the rule and the value. Rejected everywhere: ``bool``
(a flag is not a count), NaN, infinities, strings, values outside the
documented limits.
"""

from __future__ import annotations

import math
from numbers import Real

from .errors import CalcError

__all__ = [
    "MAX_COUNT",
    "MAX_BYTES",
    "MAX_RATE",
    "MAX_SECONDS",
    "count",
    "real",
    "fraction",
]

#: Largest count (GPUs, ranks, microbatches, examples, layers, ...) accepted: 10^9.
MAX_COUNT = 10**9
#: Largest size accepted: 10^18 bytes (1 EB).
MAX_BYTES = 1e18
#: Largest rate accepted (bytes/s or FLOP/s): 10^21 per second.
MAX_RATE = 1e21
#: Largest duration accepted: 10^9 s (about 31.7 years).
MAX_SECONDS = 1e9


def _number(name: str, value: object, rule: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise CalcError(name, rule, value)
    x = float(value)
    if math.isnan(x) or math.isinf(x):
        raise CalcError(name, rule, value)
    return x


def count(name: str, value: object, minimum: int = 1, maximum: int = MAX_COUNT) -> int:
    """A whole number in ``[minimum, maximum]``; integral floats such as ``8.0`` pass.

    >>> count("ranks", 8), count("ranks", 8.0)
    (8, 8)
    >>> count("micro_batch", 0)
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: micro_batch must be a whole number >= 1, got 0
    """
    rule = f"a whole number >= {minimum}"
    x = _number(name, value, rule)
    if x != math.floor(x) or x < minimum:
        raise CalcError(name, rule, value)
    if x > maximum:
        raise CalcError(name, f"a whole number <= {maximum}", value)
    return int(x)


def real(
    name: str,
    value: object,
    *,
    minimum: float = 0.0,
    maximum: float,
    allow_minimum: bool = False,
    unit: str = "",
) -> float:
    """A finite real number ``> minimum`` (or ``>= minimum``) and ``<= maximum``.

    >>> real("startup", 0, maximum=1.0, allow_minimum=True, unit="s")
    0.0
    >>> real("bandwidth", 0, maximum=1e21, unit="bytes/s")
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: bandwidth must be a number > 0 bytes/s, got 0
    """
    op = ">=" if allow_minimum else ">"
    suffix = f" {unit}" if unit else ""
    rule = f"a number {op} {minimum:g}{suffix}"
    x = _number(name, value, rule)
    if x < minimum or (x == minimum and not allow_minimum):
        raise CalcError(name, rule, value)
    if x > maximum:
        raise CalcError(name, f"a number <= {maximum:g}{suffix}", value)
    return x


def fraction(name: str, value: object) -> float:
    """A number in ``[0, 1)`` (a share, such as a padding fraction).

    >>> fraction("padding_fraction", 0.25)
    0.25
    """
    rule = "a number >= 0 and < 1"
    x = _number(name, value, rule)
    if not 0.0 <= x < 1.0:
        raise CalcError(name, rule, value)
    return x
