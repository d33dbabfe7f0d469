"""calc.spec: SPEC.json parsing and flattening."""

import pytest

from calc.errors import CalcError
from calc.api import COMMANDS
from calc.spec import AXES, NAMES, flatten, parse_text, qualified, spec_key

FIELDS = {"layers": "model", "hidden": "model", "global_batch": "batch", "data_parallel": "parallel",
          "zero": "parallel"}


def test_flatten_nested_sections():
    """Fields of every section end up in one flat dict."""
    spec = {"model": {"layers": 2, "hidden": "64"}, "batch": {"global_batch": 8}, "parallel": {"data": 4}}
    assert flatten(spec, FIELDS) == {"layers": 2, "hidden": "64", "global_batch": 8, "data_parallel": 4}


@pytest.mark.parametrize(
    "spec,message",
    [
        ({"model": {"foo": 1}}, "model.foo must be a field of model (layers, hidden), got 1"),
        ({"model": {"data": 1}}, "model.data must be a field of model (layers, hidden), got 1"),
        ({"parallel": {"data_parallel": 1}}, "parallel.data_parallel must be a field of parallel (data, zero), got 1"),
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


def test_a_flat_name_maps_back_to_its_section_and_field():
    """Flat names map back to section.field, a degree to its bare axis."""
    assert qualified("data_parallel", FIELDS) == "parallel.data" and qualified("top", FIELDS) == "top"
    assert qualified("zero", FIELDS) == "parallel.zero"


def test_a_degree_is_its_axis_only_inside_the_parallel_section():
    """The one rule: ``<axis>_parallel`` flat, ``axis`` inside ``parallel``; nothing else is renamed."""
    assert [spec_key(f"{a}_parallel", "parallel") for a in AXES] == list(AXES)
    assert spec_key("sequence_parallel", "parallel") == "sequence_parallel"
    assert spec_key("tensor_parallel", "model") == "tensor_parallel"


def _names():
    """Every flat name the commands use for a value: parameters and top-level result keys, with the command.

    JSON-valued results (``stages``: what each stage holds; ``memory``: a table of terms) are
    structures, not the concept a banned name stands for.
    """
    for c in COMMANDS.values():
        for p in c.params:
            yield c.name, "parameter", p.name
        for r in c.results:
            if r.unit != "json":
                yield c.name, "result", r.key


def test_no_command_uses_a_second_name_for_a_concept():
    """Walk every command's parameters and results against the table of names."""
    banned = {x: n.name for n in NAMES for x in n.not_names}
    wrong = [f"{cmd} {what} {name!r} (call it {banned[name]!r})" for cmd, what, name in _names() if name in banned]
    assert not wrong, wrong


def test_the_table_of_names_is_consistent():
    """A name is never also another concept's banned name, and a banned name belongs to one concept."""
    names = [n.name for n in NAMES]
    banned = [x for n in NAMES for x in n.not_names]
    assert len(set(names)) == len(names) and len(set(banned)) == len(banned)
    assert not set(names) & set(banned)


def test_one_name_is_one_kind_everywhere():
    """A parameter of the table has the same kind in every command that takes it."""
    kinds: dict[str, set] = {}
    for c in COMMANDS.values():
        for p in c.params:
            kinds.setdefault(p.name, set()).add(p.kind)
    assert {n.name: kinds[n.name] for n in NAMES if len(kinds.get(n.name, ())) > 1} == {}
