"""Guard clauses shared by every ``calc`` module.

Each check returns the cleaned value or raises :class:`~calc.errors.CalcError`
naming the parameter, the rule and the value. Rejected everywhere: ``bool``
(a flag is not a count), NaN, infinities, integers too large for a float,
strings, values outside the documented limits. ``-0`` is read as ``0``.
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
    "MIN_BYTES",
    "MIN_SECONDS",
    "MIN_BANDWIDTH",
    "MIN_FLOP_RATE",
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
#: Smallest nonzero size accepted where a size divides (a device's memory): 1 byte.
MIN_BYTES = 1.0
#: Smallest nonzero duration accepted where a duration divides (scaling's compute time): 1 ps.
MIN_SECONDS = 1e-12
#: Smallest bandwidth accepted: 1 bit/s = 0.125 bytes/s.
MIN_BANDWIDTH = 0.125
#: Smallest FLOP rate accepted: 1 FLOP/s.
MIN_FLOP_RATE = 1.0
# The smallest values keep every result finite: a value such as 1e-300 GB/s is a typo, and dividing
# by it overflows to infinity (a duration of 5e-324 s divided by a GPU count underflows to 0, and a
# ratio with it as denominator is then a division by zero).


def _number(name: str, value: object, rule: str) -> float:
    """A finite float; ``-0`` is read as ``0`` (so no result prints ``-0.0``)."""
    # float and int first: the ABC check costs ten times as much, and most values are one of the two (bool is not)
    if type(value) not in (float, int) and (isinstance(value, bool) or not isinstance(value, Real)):
        raise CalcError(name, rule, value)
    try:
        x = float(value)
    except OverflowError:  # an integer beyond the largest float (about 1.8e308)
        raise CalcError(name, rule, value) from None
    if math.isnan(x) or math.isinf(x):
        raise CalcError(name, rule, value)
    return x + 0.0


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
    smallest: float = 0.0,
) -> float:
    """A finite real number ``> minimum`` (or ``>= minimum``) and ``<= maximum``.

    ``smallest`` is the smallest nonzero magnitude accepted: a value between 0 and it is refused
    (such values are typos, and dividing by them overflows to infinity).

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
    if 0 < abs(x) < smallest:
        zero = "0 or " if minimum == 0 and allow_minimum else ""
        raise CalcError(name, f"{zero}a number >= {smallest:g}{suffix}", value)
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
