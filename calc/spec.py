"""SPEC.json: the nested description ``plan`` and ``search`` read, flattened to their parameters.

A SPEC is a JSON object of sections (``model``, ``batch``, ``hardware``,
``parallel``, ``training``), each an object of fields. Field names are unique
across sections, so the flat parameter of ``model.kv_heads`` is ``kv_heads``.
Values may be numbers, booleans or unit strings (``"80GB"``, ``"989TFLOP/s"``,
``"450GB/s"``, ``"5us"``); they are parsed by :func:`calc.api.evaluate` like any
other input. The defaults of omitted fields are those of the command's
parameters (``calc.api``): ``kv_heads`` = heads, ``ffn_hidden`` = 4 × hidden,
``gated_mlp`` false, ``tied_embeddings`` false, every parallel degree 1, ``zero``
0, ``sequence_parallel`` false, ``recompute`` none, ``interleave`` 1.

An unknown section or field is a :class:`CalcError` naming it (``model.foo``).
"""

from __future__ import annotations

from collections.abc import Mapping

from . import jsontext
from .errors import CalcError

__all__ = ["parse_text", "flatten", "qualified"]

#: Longest SPEC text accepted (characters).
MAX_SPEC_CHARS = 1_000_000


def parse_text(text: str, name: str = "SPEC.json") -> dict:
    """The JSON object in ``text``, read by :func:`calc.jsontext.loads` (bounded; a key given twice is an error).

    >>> parse_text('{"model": {"layers": 2}}')
    {'model': {'layers': 2}}
    >>> parse_text('[1]')
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: SPEC.json must be a JSON object of sections, got '[1]'
    """
    data = jsontext.loads(text, name, MAX_SPEC_CHARS)
    if not isinstance(data, dict):
        raise CalcError(name, "a JSON object of sections", text)
    return data


def flatten(spec: Mapping, fields: Mapping[str, str]) -> dict:
    """``{"model": {"layers": 32}}`` → ``{"layers": 32}``, checking every name.

    ``fields`` maps each flat field name to its section.

    >>> flatten({"model": {"layers": 32}, "batch": {}}, {"layers": "model", "micro_batch": "batch"})
    {'layers': 32}
    >>> flatten({"model": {"foo": 1}}, {"layers": "model"})
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: model.foo must be a field of model (layers), got 1
    """
    sections: dict[str, list[str]] = {}
    for name, section in fields.items():
        sections.setdefault(section, []).append(name)
    flat: dict[str, object] = {}
    for section, body in spec.items():
        if section not in sections:
            raise CalcError(str(section), "a section of the spec (" + ", ".join(sections) + ")", body)
        if not isinstance(body, Mapping):
            raise CalcError(str(section), "a JSON object of fields", body)
        for name, value in body.items():
            if fields.get(name) != section:
                raise CalcError(f"{section}.{name}", f"a field of {section} ({', '.join(sections[section])})",
                                value)
            flat[name] = value
    return flat


def qualified(name: str, fields: Mapping[str, str]) -> str:
    """``kv_heads`` → ``model.kv_heads`` (names outside the spec are returned unchanged).

    >>> qualified("kv_heads", {"kv_heads": "model"}), qualified("top", {})
    ('model.kv_heads', 'top')
    """
    section = fields.get(name)
    return f"{section}.{name}" if section else name
