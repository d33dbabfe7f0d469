"""calc.spec: SPEC.json parsing and flattening."""

import pytest

from calc.errors import CalcError
from calc.spec import flatten, parse_text, qualified

FIELDS = {"layers": "model", "hidden": "model", "global_batch": "batch", "data": "parallel"}


def test_flatten_nested_sections():
    """Fields of every section end up in one flat dict."""
    spec = {"model": {"layers": 2, "hidden": "64"}, "batch": {"global_batch": 8}, "parallel": {}}
    assert flatten(spec, FIELDS) == {"layers": 2, "hidden": "64", "global_batch": 8}


@pytest.mark.parametrize(
    "spec,message",
    [
        ({"model": {"foo": 1}}, "model.foo must be a field of model (layers, hidden), got 1"),
        ({"model": {"data": 1}}, "model.data must be a field of model (layers, hidden), got 1"),
        ({"extra": {}}, "extra must be a section of the spec (model, batch, parallel), got {}"),
        ({"model": [1]}, "model must be a JSON object of fields, got [1]"),
    ],
)
def test_unknown_names_are_errors(spec, message):
    """An unknown section or field, or a field in the wrong section, names itself."""
    with pytest.raises(CalcError) as e:
        flatten(spec, FIELDS)
    assert str(e.value) == message


def test_parse_text_errors():
    """Invalid JSON and non-objects are CalcErrors naming SPEC.json."""
    with pytest.raises(CalcError, match="^SPEC.json must be valid JSON"):
        parse_text("{")
    with pytest.raises(CalcError, match="^SPEC.json must be JSON text of at most 1000000 characters"):
        parse_text(" " * 1_000_001)


def test_qualified():
    """Flat names map back to section.field."""
    assert qualified("data", FIELDS) == "parallel.data" and qualified("top", FIELDS) == "top"
