"""hooks/arguments.py: the one command lookup and the one parameter check every renderer uses."""

import pytest

from calc.api import COMMANDS
from calc.errors import CalcError
from hooks.arguments import command, inputs, no_command
from hooks.markers import MARKER_RE, MarkerError, parse
from hooks.site import all_renderers


def marker(text: str):
    return parse(MARKER_RE.search(text))


@pytest.mark.parametrize("text, named", [("<!-- calc:value -->", "0 words"), ("<!-- calc:value nope -->", "'nope'"),
                                          ("<!-- calc:tool plan batch -->", "2 words")])
def test_a_marker_names_exactly_one_known_command(text, named):
    """No command, an unknown one or two: one message, which lists the commands."""
    with pytest.raises(MarkerError, match=rf"^needs one command name, got {named} \(known: batch, sequences, "):
        command(marker(text))


@pytest.mark.parametrize("kind", ["value", "table", "cases", "calculator", "tool"])
def test_every_kind_that_takes_a_command_says_the_same_for_an_unknown_one(kind):
    """The lookup is shared: calculator, tool, value, table and cases markers fail alike."""
    with pytest.raises(MarkerError, match=r"^needs one command name, got 'nope' "):
        all_renderers()[kind](marker(f"<!-- calc:{kind} nope -->"))


def test_no_command_names_the_kind_and_its_usage():
    """A kind that takes no command refuses one, giving its syntax."""
    with pytest.raises(MarkerError, match=r"^takes no command name: calc:schedule ranks=P$"):
        no_command(marker("<!-- calc:schedule allreduce ranks=4 -->"), "ranks=P")
    no_command(marker("<!-- calc:schedule ranks=4 -->"), "ranks=P")


def test_inputs_are_the_remaining_options_over_a_base():
    """Options override the base (or, with inputs=example, the command's example) and are consumed."""
    m = marker("<!-- calc:value batch inputs=example data_parallel=2 show=x -->")
    m.take("show")
    assert inputs(m, COMMANDS["batch"]) == {**COMMANDS["batch"].example, "data_parallel": "2"}
    assert m.options == {}
    assert inputs(marker("<!-- calc:value batch gpus=8 -->"), COMMANDS["batch"], base={"gpus": "4", "seq_len": "9"}) == {
        "gpus": "8", "seq_len": "9"}


def test_an_option_that_is_no_parameter_fails_naming_it():
    """Whatever the kind, a typo in a parameter's name is a CalcError listing the parameters."""
    with pytest.raises(CalcError, match=r"^parameter must be one of micro_batch, .*, got 'colour'$"):
        inputs(marker("<!-- calc:value batch colour=blue -->"), COMMANDS["batch"])
    with pytest.raises(MarkerError, match=r"^inputs must be example, got 'all'$"):
        inputs(marker("<!-- calc:value batch inputs=all -->"), COMMANDS["batch"])
