"""Property tests over every command and the page's entry points: strict finite JSON or a CalcError.

Every command in :data:`calc.api.COMMANDS` is covered, so a command added later is too. Inputs
start from the command's page example and replace some values with hostile ones: huge and
denormal numbers, integers beyond a float, Unicode digits, control characters, wrong types,
deep structures, unknown names. What must hold:

- :func:`calc.api.evaluate` returns a result that strict JSON can hold (no NaN, no Infinity), or
  raises :class:`CalcError` whose message is one printable line naming a parameter the command
  has (or ``inputs``, or the unknown name given);
- :func:`calc.api.evaluate_for_page` and :func:`calc.page.page_request` never raise and always
  answer strict JSON: ``{"ok": true, ...}`` or ``{"ok": false, "param", "message"}``.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calc import jsontext
from calc.api import COMMANDS, evaluate, evaluate_for_page
from calc.errors import CalcError
from calc.page import page_request

NAMES = sorted(COMMANDS)

#: Texts that broke, or nearly broke, a parser or a formula once (issue 11's fuzz run), and their kin.
EDGE_TEXTS = [
    "0", "-0", "+0", "-0.0", "1", "-1", "2.5", "1e309", "-1e309", "1e-300", "5e-324", "1e-400", "nan", "NaN",
    "inf", "-inf", "Infinity", "9" * 400, "9" * 5000, "1" + "0" * 64, "0." + "0" * 400 + "1", "1e" + "9" * 50,
    "１２", "٣", "߂", "²", "8\u00a0GB", "1e-300GB/s", "5e-324FLOP/s", "1e-300B", "1e-300 s", "1e-300GB",
    "8,8;8,8", "8," + "9" * 5000, "true", "false", "yes", "1GiB", "100GB/s", "5us", "989TFLOP/s", "80GB",
    "\n", "a\nb", "\x1b[31mred", "\u202e8", "\x00", " ", "", "selective", "full", "bf16-adam", "1f1b",
]
huge_ints = st.one_of(st.integers(), st.integers(min_value=10**300, max_value=10**400),
                      st.sampled_from([10**4000, -(10**400), 2**1023, 2**1024]))
floats = st.floats(allow_nan=True, allow_infinity=True)
scalars = st.one_of(st.none(), st.booleans(), huge_ints, floats, st.sampled_from(EDGE_TEXTS),
                    st.text(max_size=16), st.text(alphabet="0123456789.eE+-", max_size=30))
hostile = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                       max_leaves=6)


@st.composite
def inputs_for(draw, name: str) -> dict:
    """The command's example with up to three values replaced, sometimes with an unknown name added."""
    cmd = COMMANDS[name]
    raw: dict = dict(cmd.example)
    params = [p.name for p in cmd.params]
    for param in draw(st.lists(st.sampled_from(params), max_size=3, unique=True)):
        raw[param] = draw(hostile)
    if draw(st.integers(0, 9)) == 0:
        raw[draw(st.text(min_size=1, max_size=8))] = draw(scalars)
    return raw


def assert_names_a_parameter(error: CalcError, name: str, raw: dict) -> None:
    """One printable line, naming a parameter the command has (or all inputs, or the unknown name)."""
    text = str(error)
    assert text.isprintable() and "\n" not in text, text
    known = {p.name for p in COMMANDS[name].params}
    # compare's a.model.layers names a; microbatch_sizes[0][2] an element of microbatch_sizes
    parts = {part.split(".")[0].split("[")[0] for part in str(error.param).split(" × ")}
    assert parts <= known or error.param in ("inputs",) or error.param in raw, (error.param, text)


settings_ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                              HealthCheck.filter_too_much])


@settings_
@given(st.sampled_from(NAMES), st.data())
def test_every_command_gives_finite_json_or_a_calc_error(name, data):
    """evaluate: a result strict JSON can hold, or a one-line CalcError naming one of the command's parameters."""
    raw = data.draw(inputs_for(name))
    try:
        result = evaluate(name, raw)
    except CalcError as e:
        assert_names_a_parameter(e, name, raw)
        return
    json.loads(jsontext.dumps(result))  # raises ValueError on NaN or an infinity


def strict(text: str) -> dict:
    """Parse an answer as strict JSON: NaN and Infinity are refused."""
    def refuse(constant):
        raise AssertionError(f"not strict JSON: {constant}")

    answer = json.loads(text, parse_constant=refuse)
    assert isinstance(answer, dict) and isinstance(answer["ok"], bool)
    if not answer["ok"]:
        assert set(answer) == {"ok", "param", "message"}
        assert answer["message"].isprintable(), answer["message"]
    return answer


deep = st.integers(1, 20_000).map(lambda n: "[" * n + "]" * n)
page_texts = st.one_of(st.text(max_size=40), deep, st.sampled_from(['{"a": 1, "a": 2}', "{", "[]", "null", "1e999",
                                                                     '{"ranks": ' + "9" * 5000 + "}"]))


@settings_
@given(st.sampled_from(NAMES), st.data())
def test_evaluate_for_page_answers_strict_json(name, data):
    """evaluate_for_page: never raises; strict JSON, for any inputs object and any text at all."""
    if data.draw(st.booleans()):
        text = json.dumps(data.draw(inputs_for(name)))
    else:
        text = data.draw(page_texts)
    strict(evaluate_for_page(name, text))


@settings_
@given(st.sampled_from(NAMES), st.data())
def test_page_request_answers_strict_json(name, data):
    """page_request, the worker's one entry point: never raises; strict JSON for evaluate, ring and junk."""
    kind = data.draw(st.sampled_from(["evaluate", "ring", "text"]))
    if kind == "evaluate":
        text = json.dumps({"op": "evaluate", "command": name, "inputs": data.draw(inputs_for(name))})
    elif kind == "ring":
        text = json.dumps({"op": "ring", "ranks": data.draw(hostile)})
    else:
        text = data.draw(page_texts)
    strict(page_request(text))
