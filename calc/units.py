"""Parse and format sizes, bandwidths, times and FLOP rates.

SI prefixes are powers of 1000 (kB, MB, GB, TB, PB, EB); IEC prefixes are
powers of 1024 (KiB, MiB, GiB, TiB, PiB, EiB). A bare number is bytes, bytes/s
or seconds. Lower-case ``b`` or ``bit`` means bits (8 bits = 1 byte).

Grammar of the strings accepted (white space between number and unit allowed)::

    size       ::= number [size_unit]
    bandwidth  ::= number [byte_rate | bit_rate]
    time       ::= number [time_unit]
    flop_rate  ::= number [si_prefix] ("FLOP/s" | "FLOPS" | "flop/s")
    number     ::= [sign] (digits ["." [digits]] | "." digits) [("e" | "E") [sign] digits]
    digits     ::= ("0" | ... | "9")+    (ASCII digits only: no full-width or other scripts' digits)
    sign       ::= "+" | "-"
    size_unit  ::= "B" | si_prefix "B" | iec_prefix "B"
    byte_rate  ::= size_unit "/s" | size_unit "ps"
    bit_rate   ::= [si_prefix] ("bit/s" | "b/s" | "bps")
    time_unit  ::= "s" | "ms" | "us" | "µs" | "ns"
    si_prefix  ::= "k" | "K" | "M" | "G" | "T" | "P" | "E"
    iec_prefix ::= "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"

Every alternative consumes a digit in exactly one way, so matching takes time
linear in the length of the text; a text longer than :data:`MAX_TEXT` characters is
refused before it is matched. Bandwidths are at least 1 bit/s and FLOP rates at
least 1 FLOP/s (:mod:`calc.check`), so that no result that divides by one
overflows to infinity.

Source: SI prefixes (BIPM SI Brochure, 9th ed., 2019) and binary prefixes
(IEC 80000-13:2008).
"""

from __future__ import annotations

import math
import re

from .check import MAX_BYTES, MAX_RATE, MAX_SECONDS, MIN_BANDWIDTH, MIN_FLOP_RATE, real
from .errors import CalcError

__all__ = [
    "parse_size",
    "parse_bandwidth",
    "parse_time",
    "parse_flop_rate",
    "format_bytes",
    "format_rate",
    "format_time",
    "format_count",
    "format_flops",
    "MAX_TEXT",
]

#: Longest text a size, bandwidth, time or FLOP rate may be (characters, surrounding blanks included).
MAX_TEXT = 64

SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
IEC = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60}
#: Divisors to seconds (dividing by 1e6 is exact where multiplying by 1e-6 is not).
TIME = {"s": 1.0, "ms": 1e3, "us": 1e6, "\u00b5s": 1e6, "\u03bcs": 1e6, "ns": 1e9}

_NUMBER = r"(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
_SIZE_RE = re.compile(_NUMBER + r"\s*(?:(?P<pre>Ki|Mi|Gi|Ti|Pi|Ei|[kKMGTPE])?(?P<unit>B))?")
_RATE_RE = re.compile(
    _NUMBER
    + r"\s*(?:(?P<pre>Ki|Mi|Gi|Ti|Pi|Ei|[kKMGTPE])?(?P<unit>B/s|Bps|bit/s|b/s|bps))?"
)
_TIME_RE = re.compile(_NUMBER + r"\s*(?P<unit>s|ms|us|\u00b5s|\u03bcs|ns)?")
_FLOP_RE = re.compile(_NUMBER + r"\s*(?:(?P<pre>[kKMGTPE])?(?P<unit>FLOP/s|FLOPS|flop/s))?")


def _match(pattern: re.Pattern[str], name: str, text: object, rule: str) -> re.Match[str]:
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise CalcError(name, rule, text)
    m = pattern.fullmatch(text.strip())
    if m is None:
        raise CalcError(name, rule, text)
    return m


def _as_number(name: str, value: object, rule: str) -> object | None:
    """Numbers pass straight through (to be range-checked by :func:`calc.check.real`); text gives None."""
    if isinstance(value, str):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CalcError(name, rule, value)
    return value


def _finite(name: str, value: float, rule: str, text: object) -> float:
    if math.isinf(value) or math.isnan(value):
        raise CalcError(name, rule, text)
    return value


def parse_size(text: str | float, name: str = "size") -> float:
    """Bytes from ``"1GiB"``, ``"512 MB"``, ``"8e9"`` (bare = bytes); must be >= 0.

    >>> parse_size("1GiB"), parse_size("1.5 kB"), parse_size(64)
    (1073741824.0, 1500.0, 64.0)
    """
    rule = "a size such as 512MiB, 1GB or 4096 (bytes)"
    x = _as_number(name, text, rule)
    if x is None:
        m = _match(_SIZE_RE, name, text, rule)
        scale = IEC.get(m["pre"] or "", SI.get(m["pre"] or "", 1.0))
        x = _finite(name, float(m["num"]) * scale, rule, text)
    return real(name, x, maximum=MAX_BYTES, allow_minimum=True, unit="bytes")


def parse_bandwidth(text: str | float, name: str = "bandwidth") -> float:
    """Bytes per second from ``"100GB/s"``, ``"400Gbit/s"``, ``"25 GiB/s"`` (bare = bytes/s); > 0.

    >>> parse_bandwidth("100GB/s"), parse_bandwidth("400Gbit/s"), parse_bandwidth("1KiB/s")
    (100000000000.0, 50000000000.0, 1024.0)
    """
    rule = "a bandwidth such as 100GB/s, 400Gbit/s or 1e9 (bytes/s)"
    x = _as_number(name, text, rule)
    if x is None:
        m = _match(_RATE_RE, name, text, rule)
        pre, unit = m["pre"] or "", m["unit"] or "B/s"
        if unit in ("bit/s", "b/s", "bps"):
            if pre in IEC:
                raise CalcError(name, rule, text)
            scale = SI[pre] / 8.0
        else:
            scale = IEC.get(pre, SI.get(pre, 1.0))
        x = _finite(name, float(m["num"]) * scale, rule, text)
    return real(name, x, maximum=MAX_RATE, unit="bytes/s", smallest=MIN_BANDWIDTH)


def parse_time(text: str | float, name: str = "time") -> float:
    """Seconds from ``"5us"``, ``"5 µs"``, ``"1.5ms"``, ``"2e-6"`` (bare = seconds); >= 0.

    >>> parse_time("5us"), parse_time("1.5 ms"), parse_time(0)
    (5e-06, 0.0015, 0.0)
    """
    rule = "a time such as 5us, 1.5ms or 0.002 (seconds)"
    x = _as_number(name, text, rule)
    if x is None:
        m = _match(_TIME_RE, name, text, rule)
        x = _finite(name, float(m["num"]) / TIME[m["unit"] or "s"], rule, text)
    return real(name, x, maximum=MAX_SECONDS, allow_minimum=True, unit="s")


def parse_flop_rate(text: str | float, name: str = "flops_per_gpu") -> float:
    """FLOP per second from ``"989TFLOP/s"``, ``"312e12"`` (bare = FLOP/s); > 0.

    >>> parse_flop_rate("989TFLOP/s"), parse_flop_rate("1.5 PFLOP/s")
    (989000000000000.0, 1500000000000000.0)
    """
    rule = "a rate such as 989TFLOP/s or 312e12 (FLOP/s)"
    x = _as_number(name, text, rule)
    if x is None:
        m = _match(_FLOP_RE, name, text, rule)
        x = _finite(name, float(m["num"]) * SI[m["pre"] or ""], rule, text)
    return real(name, x, maximum=MAX_RATE, unit="FLOP/s", smallest=MIN_FLOP_RATE)


def _scaled(value: float, base: float, prefixes: tuple[str, ...]) -> tuple[float, str]:
    if value == 0:
        return 0.0, prefixes[0]
    i = 0
    while i + 1 < len(prefixes) and abs(value) >= base ** (i + 1) * 0.9995:
        i += 1
    return value / base**i, prefixes[i]


def _sig(x: float, digits: int = 4) -> str:
    """Four significant digits, no exponent for ordinary magnitudes.

    >>> _sig(0.0175700), _sig(1536.0), _sig(1.75)
    ('0.01757', '1536', '1.75')
    """
    if x == 0:
        return "0"
    text = f"{x:.{digits}g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant}e{int(exp)}"
    return text


def format_bytes(n: float, system: str = "si") -> str:
    """A byte count with its unit: SI (kB, MB, GB; powers of 1000) or IEC (KiB...; 1024).

    >>> format_bytes(1073741824), format_bytes(1073741824, "iec"), format_bytes(512)
    ('1.074 GB', '1 GiB', '512 B')
    """
    if system == "iec":
        v, p = _scaled(n, 1024.0, ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))
    elif system == "si":
        v, p = _scaled(n, 1000.0, ("", "k", "M", "G", "T", "P", "E"))
    else:
        raise CalcError("system", "'si' or 'iec'", system)
    return f"{_sig(v)} {p}B"


def format_rate(bytes_per_s: float) -> str:
    """A bandwidth in SI bytes per second.

    >>> format_rate(1e11)
    '100 GB/s'
    """
    return format_bytes(bytes_per_s) + "/s"


def format_time(seconds: float) -> str:
    """A duration with the largest unit that keeps the number >= 1 (ns ... s, then min, h, days).

    >>> format_time(0.01757), format_time(5e-6), format_time(0), format_time(2.93e6)
    ('17.57 ms', '5 µs', '0 s', '33.91 days')
    """
    a = abs(seconds)
    if a == 0:
        return "0 s"
    if a >= 86400 * 2:
        return f"{_sig(seconds / 86400)} days"
    if a >= 3600 * 2:
        return f"{_sig(seconds / 3600)} h"
    if a >= 120:
        return f"{_sig(seconds / 60)} min"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if a >= scale * 0.9995:
            return f"{_sig(seconds / scale)} {unit}"
    return f"{_sig(seconds / 1e-9)} ns"


def _singular(unit: str) -> str:
    """'GPUs' -> 'GPU', 'microbatches' -> 'microbatch', 'examples' -> 'example'."""
    if unit.endswith(("ches", "shes", "xes")):
        return unit[:-2]
    return unit[:-1] if unit.endswith("s") else unit


def format_count(n: float, unit: str = "") -> str:
    """A count with thousands separators and a unit word (singular for exactly 1).

    Whole numbers print exactly below 10^16; other reals of 1000 or more are rounded
    to whole units; smaller reals keep 4 significant digits.

    >>> format_count(8192, "examples"), format_count(3145728, "tokens"), format_count(1.5)
    ('8,192 examples', '3,145,728 tokens', '1.5')
    >>> format_count(1, "GPUs"), format_count(1, "microbatches"), format_count(4110417.92, "tokens")
    ('1 GPU', '1 microbatch', '4,110,418 tokens')
    """
    if float(n).is_integer() and abs(n) < 1e16:
        text = f"{int(n):,}"
    elif 1000 <= abs(n) < 1e16:
        text = f"{n:,.0f}"
    else:
        text = _sig(n)
    word = _singular(unit) if n == 1 else unit
    return f"{text} {word}".rstrip()


def format_flops(flops: float, per_second: bool = False) -> str:
    """A FLOP count (or rate) with an SI prefix.

    >>> format_flops(4.511e18), format_flops(1.4e14, per_second=True)
    ('4.511 EFLOP', '140 TFLOP/s')
    """
    v, p = _scaled(flops, 1000.0, ("", "k", "M", "G", "T", "P", "E"))
    return f"{_sig(v)} {p}FLOP" + ("/s" if per_second else "")
