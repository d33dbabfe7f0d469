"""What a command is: its parameters, its results, and how raw text becomes values.

A :class:`Command` lists its parameters (name, kind, label, default) and its
results (JSON key, label, unit). :func:`parse_param` turns one raw value, as
typed in a terminal, a form field or a URL, into the value a calculation takes;
:func:`format_result` gives the text shown beside a raw value, always with its
unit. The commands themselves are in :mod:`calc.commands`; :mod:`calc.api`
assembles and evaluates them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from . import units
from .check import MAX_COUNT, count, fraction, real
from .errors import CalcError
from .spec import parse_text

__all__ = ["Param", "Result", "Command", "KINDS", "UNITS", "parse_param", "is_blank", "format_result", "unit_of_field", "format_field"]

#: A decimal number as typed (ASCII digits only; the grammar of :mod:`calc.units`, matched in linear time).
_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: The texts a flag takes (a JSON boolean is taken as itself; a number is not a flag).
_TRUE, _FALSE = ("true", "1", "on", "yes"), ("false", "0", "off", "no")
#: Longest text of a microbatch-sizes list (characters), and of one size in it (digits: sizes are counts).
MAX_SIZES_TEXT, _MAX_SIZE_DIGITS = 100_000, len(str(MAX_COUNT))


@dataclass(frozen=True, slots=True)
class Param:
    """One input. ``default`` is raw text; ``None`` means optional and absent."""

    name: str  #: snake_case; the CLI option is ``--`` + name with ``-``
    kind: str  #: one of :data:`KINDS` (count, number, fraction, size, bandwidth, time, flop_rate, ...)
    label: str  #: what the field is, with its unit
    help: str = ""
    default: str | None = None
    group: str = ""  #: fields are grouped under this heading in the page
    choices: tuple[str, ...] = ()
    minimum: float = 1  #: for count (whole) and number (real, inclusive)
    required: bool = False  #: blank is an error rather than "absent"
    maximum: float | None = None  #: for count and number; None: check.MAX_COUNT (count) or 1e18 (number)
    section: str = ""  #: the SPEC.json section holding it (plan and search only)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:  # a bug in a command's declaration, not input
            raise ValueError(f"parameter {self.name}: unknown kind {self.kind!r} (known: {', '.join(KINDS)})")


@dataclass(frozen=True, slots=True)
class Result:
    """One output: its JSON key, a label, and the unit word used to format it."""

    key: str
    label: str
    unit: str  #: one of :data:`UNITS` (examples, tokens, bytes, seconds, ratio, percent, fits, json, text, ...)

    def __post_init__(self) -> None:
        if self.unit not in UNITS:  # a bug in a command's declaration, not input
            raise ValueError(f"result {self.key}: unknown unit {self.unit!r} (known: {', '.join(UNITS)})")


@dataclass(frozen=True, slots=True)
class Command:
    """A calculation the CLI, the hooks and the page all offer."""

    name: str
    title: str
    params: tuple[Param, ...]
    results: tuple[Result, ...]
    compute: Callable[[dict], dict] = field(repr=False)
    example: Mapping[str, str] = field(default_factory=dict)  #: the page's default inputs
    #: the CLI's text output when it is not one line per result (a file format, such as launch settings)
    render: Callable[[dict], str] | None = field(default=None, repr=False)
    #: what the page computes instead of :attr:`compute`: the same result but for what only the CLI prints and the
    #: page neither shows nor draws (the plan's listing of every rank: 1024 tuples for the atlas's default)
    page_compute: Callable[[dict], dict] | None = field(default=None, repr=False)

    @property
    def spec_fields(self) -> dict[str, str]:
        """Flat field name → its SPEC.json section (empty for a command that reads no SPEC)."""
        return {p.name: p.section for p in self.params if p.section}

    def fields(self, given: Mapping[str, str] | None = None) -> dict[str, str]:
        """Every field's text as a form shows it: ``given``'s (a preset or an example), else the default, else blank.

        The one rule for a form's starting values (the build's forms, preset buttons, the atlas's defaults).

        >>> cmd = Command("x", "X", (Param("n", "count", "N", default="2"), Param("m", "count", "M")), (), dict)
        >>> cmd.fields(), cmd.fields({"m": "5"})
        ({'n': '2', 'm': ''}, {'n': '2', 'm': '5'})
        """
        given = given or {}
        return {p.name: given.get(p.name, p.default or "") for p in self.params}

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise CalcError("parameter", f"one of {', '.join(p.name for p in self.params)}", name)

    def parse(self, raw: Mapping[str, object]) -> dict:
        """Raw values (text as typed, or JSON values) → the values :attr:`compute` takes.

        Unknown names are errors; a blank or missing value takes the parameter's default,
        and a required one must be given.

        >>> cmd = Command("x", "X", (Param("n", "count", "N", default="2"),), (), dict)
        >>> cmd.parse({}), cmd.parse({"n": "5"})
        ({'n': 2}, {'n': 5})
        """
        known = {p.name for p in self.params}
        for key in raw:
            if key not in known:
                raise CalcError(str(key), f"a parameter of {self.name} ({', '.join(sorted(known))})", raw[key])
        values: dict[str, object] = {}
        for p in self.params:
            text = raw.get(p.name)
            if is_blank(text):
                text = p.default
            if is_blank(text) and p.required:
                raise CalcError(p.name, "given (it is required)", "" if text is None else text)
            values[p.name] = None if is_blank(text) else parse_param(p, text)
        return values


def _parse_number_text(p: Param, raw: object, rule: str) -> object:
    """A number typed as text (at most :data:`calc.units.MAX_TEXT` characters); other values pass through."""
    if isinstance(raw, str):
        if len(raw) > units.MAX_TEXT or not _NUMBER_RE.fullmatch(text := raw.strip()):
            raise CalcError(p.name, rule, raw)
        return int(text) if text.lstrip("+-").isdigit() else float(text)
    return raw


def _parse_count(p: Param, raw: object) -> int:
    top = MAX_COUNT if p.maximum is None else int(p.maximum)
    return count(p.name, _parse_number_text(p, raw, f"a whole number >= {int(p.minimum)}"), minimum=int(p.minimum),
                 maximum=top)


def _parse_number(p: Param, raw: object) -> float:
    return real(p.name, _parse_number_text(p, raw, f"a number >= {p.minimum:g}"), minimum=p.minimum,
                allow_minimum=True, maximum=1e18 if p.maximum is None else p.maximum)


def _parse_choice(p: Param, raw: object) -> str:
    if raw not in p.choices:
        raise CalcError(p.name, "one of " + ", ".join(p.choices), raw)
    return raw  # type: ignore[return-value]


def _parse_flag(p: Param, raw: object) -> bool:
    if raw is True or (isinstance(raw, str) and raw in _TRUE):
        return True
    if raw is False or (isinstance(raw, str) and raw in _FALSE):
        return False
    raise CalcError(p.name, "true or false", raw)


def _parse_spec(p: Param, raw: object) -> dict:
    """A whole SPEC (JSON text, or the object itself): its fields are checked by the command."""
    data = parse_text(raw, p.name) if isinstance(raw, str) else raw
    if not isinstance(data, dict):
        raise CalcError(p.name, "a JSON object of sections", raw)
    return data


#: Every parameter kind and its parser (raw text or JSON value → the value ``compute`` takes).
#: A :class:`Param` of any other kind is refused when it is declared.
KINDS: dict[str, Callable[[Param, object], object]] = {
    "count": _parse_count,
    "number": _parse_number,
    "fraction": lambda p, raw: fraction(p.name, _parse_number_text(p, raw, "a number >= 0 and < 1")),
    "size": lambda p, raw: units.parse_size(raw, p.name),
    "bandwidth": lambda p, raw: units.parse_bandwidth(raw, p.name),
    "time": lambda p, raw: units.parse_time(raw, p.name),
    "flop_rate": lambda p, raw: units.parse_flop_rate(raw, p.name),
    "choice": _parse_choice,
    "flag": _parse_flag,
    "sizes": lambda p, raw: _parse_sizes(p.name, raw),
    "counts": lambda p, raw: _parse_counts(p, raw),
    "spec": _parse_spec,
}


def parse_param(p: Param, raw: object) -> object:
    """Turn one raw value (text or number) into the value the calculation takes (by :data:`KINDS`)."""
    return KINDS[p.kind](p, raw)


def _parse_sizes(name: str, raw: object) -> list[list[int]]:
    """``"8,8,5; 8,8,8"``: replicas separated by ``;``, microbatch sizes by ``,`` (ASCII digits)."""
    rule = "microbatch sizes per replica such as 8,8,5;8,8,8"
    if not isinstance(raw, str) or len(raw) > MAX_SIZES_TEXT:
        raise CalcError(name, rule, raw)
    rows = []
    for part in raw.split(";"):
        cells = [c.strip() for c in part.split(",")]
        if not all(_SIZE_RE.fullmatch(c) for c in cells):
            raise CalcError(name, rule, raw)
        rows.append([int(c) for c in cells])
    return rows


def _parse_counts(p: Param, raw: object) -> tuple[int, ...]:
    """A list of whole numbers: a JSON list (``[7, 8, 7]``) or text (``"7, 8, 7"``).

    >>> _parse_counts(Param("stage_layers", "counts", ""), "7, 8,7"), _parse_counts(Param("x", "counts", ""), [2, 2])
    ((7, 8, 7), (2, 2))
    """
    rule = "whole numbers separated by commas, such as 7,8,8,7"
    if isinstance(raw, str):
        if len(raw) > 100_000:
            raise CalcError(p.name, rule, raw)
        cells = [c.strip() for c in raw.split(",")]
        if not all(c.isascii() and c.isdigit() and len(c) <= 9 for c in cells):
            raise CalcError(p.name, rule, raw)
        raw = [int(c) for c in cells]
    if not isinstance(raw, (list, tuple)) or not raw or len(raw) > 100_000:
        raise CalcError(p.name, rule, raw)
    top = MAX_COUNT if p.maximum is None else int(p.maximum)
    return tuple(count(p.name, x, minimum=int(p.minimum), maximum=top) for x in raw)


_SIZE_RE = re.compile(f"[0-9]{{1,{_MAX_SIZE_DIGITS}}}")


def is_blank(raw: object) -> bool:
    """A missing value: None or only white space."""
    return raw is None or (isinstance(raw, str) and raw.strip() == "")


def _count_of(word: str) -> Callable[[object], str]:
    return lambda value: units.format_count(value, word)  # type: ignore[arg-type]


#: Every result unit and its formatter. A :class:`Result` in any other unit is refused when it is declared.
#: How a readable line shows a value that is not there (a result or a field that is None).
MISSING = "n/a"

UNITS: dict[str, Callable[[object], str]] = {
    **{word: _count_of(word) for word in ("examples", "sequences", "tokens", "steps", "replicas", "GPUs",
                                          "microbatches")},
    "count": units.format_count,  # type: ignore[dict-item]
    "bytes": lambda v: f"{units.format_bytes(v)} ({units.format_bytes(v, 'iec')})",  # type: ignore[arg-type]
    "seconds": units.format_time,  # type: ignore[dict-item]
    "bytes_per_s": units.format_rate,  # type: ignore[dict-item]
    "ratio": lambda v: f"{v:.4g}",
    "percent": lambda v: f"{100 * v:.3g} %",  # type: ignore[operator]
    "flops": units.format_flops,  # type: ignore[dict-item]
    "days": lambda v: f"{v:.4g} days",
    "tokens_per_s": lambda v: units.format_count(round(v), "tokens/s"),  # type: ignore[arg-type]
    "flop_rate": lambda v: units.format_flops(v, per_second=True),  # type: ignore[arg-type]
    "fits": lambda v: "fits" if v else "does not fit",
    "json": json.dumps,
    "text": lambda v: str(v) or "none",  # an empty text (no uneven split, no cap reached) says so
}


def format_result(unit: str, value: object) -> str:
    """The text shown beside a raw value: always with its unit (:data:`UNITS`).

    >>> format_result("bytes", 1073741824.0), format_result("seconds", 0.01757)
    ('1.074 GB (1 GiB)', '17.57 ms')
    """
    formatter = UNITS[unit]
    return MISSING if value is None else formatter(value)


#: A nested field's unit follows from its name's suffix (the project's naming rule).
_SUFFIX_UNITS = (("_bytes_per_s", "bytes_per_s"), ("_flop_per_s", "flop_rate"), ("_bytes", "bytes"),
                 ("_s", "seconds"), ("_gb", "ratio"), ("_gib", "ratio"))


_NAMED_UNITS = {"mfu": "percent", "hfu": "percent", "tokens_per_s": "tokens_per_s", "training_days": "days",
                "achieved_flops_per_gpu": "flop_rate", "fits": "fits", "error": "percent",
                "mean_abs_error": "percent", "mean_error": "percent", "max_abs_error": "percent",
                "lowest_error": "percent", "highest_error": "percent", "predicted_flops_per_gpu": "flop_rate",
                "ceiling_flops_per_gpu": "flop_rate"}


def unit_of_field(name: str) -> str:
    """The unit of a nested result field, from its name: ``total_bytes`` -> bytes, ``time_s`` -> seconds.

    >>> unit_of_field("bytes_per_call"), unit_of_field("time_s"), unit_of_field("group_size")
    ('bytes', 'seconds', 'text')
    >>> unit_of_field("tokens_per_s"), unit_of_field("mfu")
    ('tokens_per_s', 'percent')
    """
    if name in _NAMED_UNITS:
        return _NAMED_UNITS[name]
    if name.startswith("bytes_"):
        return "bytes"
    if name.endswith("_per_s") and not name.endswith(("_bytes_per_s", "_flop_per_s")):
        return "text"
    return next((u for suffix, u in _SUFFIX_UNITS if name.endswith(suffix)), "text")


def format_field(name: str, value: object) -> str:
    """A nested field formatted by :func:`unit_of_field` (numbers without a unit suffix stay plain)."""
    if isinstance(value, (list, tuple)) and value and all(isinstance(x, int) and not isinstance(x, bool)
                                                          for x in value):
        return ", ".join(str(x) for x in value)
    if value is None:  # as format_result shows it: a readable line has no JSON null
        return MISSING
    if isinstance(value, (dict, list, tuple, bool)):
        return json.dumps(value)
    unit = unit_of_field(name)
    if unit == "text" and isinstance(value, (int, float)):
        return units.format_count(value)
    return format_result(unit, value)
