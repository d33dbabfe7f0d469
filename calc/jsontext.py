"""JSON text at ``calc``'s edges: read it bounded and strict, write it strict.

Read (:func:`loads`) is used for a SPEC file, the page's inputs and the page's requests:

- the text is at most ``max_chars`` characters, checked before parsing;
- values are nested at most :data:`MAX_DEPTH` deep, checked in one pass over the text before it is
  parsed: Python's parser recurses once per level, and in Pyodide a text nested 100,000 deep
  overflows the WebAssembly stack, a fatal error that would end the page's worker;
- a name given twice in one object is an error naming it (RFC 8259 §4 leaves duplicates undefined,
  and a SPEC that sets ``layers`` twice is a mistake, not a choice);
- an integer literal longer than :data:`calc.units.MAX_TEXT` digits is kept as its text, so the
  parameter it is given to refuses it by name (instead of Python failing to convert more than 4,300
  digits to ``int``, or ``float`` overflowing).

Write (:func:`dumps`): strict JSON; NaN and infinities, which RFC 8259 does not have, raise
``ValueError`` (:func:`calc.api.evaluate` refuses non-finite results before anything is written).

Source: RFC 8259, "The JavaScript Object Notation (JSON) Data Interchange Format" (2017).
"""

from __future__ import annotations

import json
import re
from dataclasses import fields, is_dataclass
from json.decoder import scanstring

from .errors import CalcError
from .units import MAX_TEXT

__all__ = ["MAX_CHARS", "MAX_DEPTH", "loads", "dumps", "plain"]

#: Longest JSON text accepted from the page (its inputs, a request), in characters: room for a 1 MB
#: value in one field, which that field's own limit then refuses by name. A SPEC file has its own limit.
MAX_CHARS = 4_000_000
#: Deepest nesting accepted (a SPEC is 2 deep: sections of fields; a page request 3).
MAX_DEPTH = 16


def _int(text: str) -> int | str:
    return int(text) if len(text) <= MAX_TEXT else text


def _object(pairs: list[tuple[str, object]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise CalcError(key, "given once (the name appears twice in one JSON object)", value)
        out[key] = value
    return out


_TOKEN = re.compile(r'["\[\]{}]')


def _too_deep(text: str) -> bool:
    """Whether arrays and objects in JSON ``text`` nest deeper than :data:`MAX_DEPTH` (linear, no recursion).

    Strings are skipped with the json module's own scanner, so a bracket inside one is not counted;
    at an unterminated string the answer is False (the text is invalid, and the parser says so).
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:  # cannot nest deeper: nothing to scan
        return False
    depth, pos = 0, 0
    while m := _TOKEN.search(text, pos):
        pos = m.end()
        if m[0] == '"':
            try:
                pos = scanstring(text, pos)[1]
            except ValueError:
                return False
        elif m[0] in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        else:
            depth -= 1
    return False


def loads(text: object, name: str, max_chars: int = MAX_CHARS) -> object:
    """The value in JSON ``text``; a :class:`CalcError` naming ``name`` if it is not acceptable.

    >>> loads('{"model": {"layers": 2}}', "SPEC.json", 100)
    {'model': {'layers': 2}}
    >>> loads('{"a": 1, "a": 2}', "SPEC.json", 100)
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: a must be given once (the name appears twice in one JSON object), got 2
    >>> loads("[" * 20 + "]" * 20, "inputs", 100)
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: inputs must be JSON nested at most 16 deep, got '[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]'
    """
    if not isinstance(text, str) or len(text) > max_chars:
        raise CalcError(name, f"JSON text of at most {max_chars} characters", text)
    if _too_deep(text):
        raise CalcError(name, f"JSON nested at most {MAX_DEPTH} deep", text)
    try:
        return json.loads(text, parse_int=_int, object_pairs_hook=_object)
    except CalcError:
        raise
    except ValueError as e:
        raise CalcError(name, f"valid JSON ({e})", text) from None


def dumps(value: object) -> str:
    """Strict JSON text of ``value`` (``ValueError`` for NaN or an infinity).

    >>> dumps({"a": [1, 2.5, None, True]})
    '{"a": [1, 2.5, null, true]}'
    """
    return json.dumps(value, allow_nan=False)


#: Leaves :func:`plain` returns as they are, found by their exact type before any other test.
_LEAVES = frozenset({int, float, str, bool, type(None)})
#: Field names of each dataclass :func:`plain` has met (``dataclasses.fields`` rebuilds them at every call).
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def plain(x):
    """A JSON-able copy of ``x``: dataclasses as dicts of their fields, dicts, lists and tuples copied, other values
    as they are. What :func:`dataclasses.asdict` returns for the results ``calc`` builds (their leaves are numbers,
    strings, booleans and None), without its deep copy of every leaf: a plan of 1024 GPUs lists 7168 numbers.
    Leaves are told by their exact type first, and a dataclass's field names are looked up once per class: the
    atlas's plan is some 300 values, copied at every input (issue 15).

    >>> from dataclasses import asdict
    >>> from calc.plan import parallel
    >>> par = parallel(data=2, tensor=4, stage_layers=(3, 3))
    >>> plain(par) == asdict(par), plain((1, [2.5, {"a": None}]))
    (True, (1, [2.5, {'a': None}]))
    """
    t = type(x)
    if t in _LEAVES:
        return x
    names = _FIELD_NAMES.get(t)
    if names is None and is_dataclass(t):
        names = _FIELD_NAMES[t] = tuple(f.name for f in fields(t))
    if names is not None:
        return {name: plain(getattr(x, name)) for name in names}
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return t(plain(v) for v in x)
    return x
