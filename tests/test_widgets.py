"""hooks/widgets.py in-process: the static calculator HTML and its DOM contract."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

from calc.api import COMMANDS, Command, Param, Result, evaluate, format_result
from calc.errors import CalcError
from hooks.markers import MARKER_RE, MarkerError, parse
from hooks.widgets import render_calculator, render_form, render_results, render_shell


class Tree(HTMLParser):
    """Every start tag as (tag, attrs dict), plus the text inside each data-result."""

    def __init__(self, html: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.result_text: dict[str, str] = {}
        self._result: str | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "data-result" in a:
            self._result = a["data-result"]
            self.result_text[self._result] = ""

    def handle_endtag(self, tag):
        if tag == "dd":
            self._result = None

    def handle_data(self, data):
        if self._result:
            self.result_text[self._result] += data

    def find(self, **want) -> list[dict]:
        return [a for _, a in self.tags if all(a.get(k.replace("_", "-")) == v for k, v in want.items())]


def render(text: str) -> str:
    return render_calculator(parse(MARKER_RE.search(text)))


@pytest.mark.parametrize("command", COMMANDS)
def test_every_calculator_keeps_the_dom_contract(command):
    """Root data-calc/data-state, one named field per parameter, results with the CLI's JSON text."""
    html = render(f"<!-- calc:calculator {command} -->")
    tree = Tree(html)
    cmd = COMMANDS[command]
    (root,) = tree.find(data_calc=command)
    assert root["data-state"] == "static"
    ids = {a.get("id") for _, a in tree.tags}
    for p in cmd.params:
        (field,) = [a for _, a in tree.tags if a.get("name") == p.name]
        assert field["data-default"] == cmd.fields(cmd.example)[p.name]
        # a text field is read-only and a <select> disabled until the script makes them live
        assert ("disabled" if p.kind == "choice" else "readonly") in field
        described = field["aria-describedby"].split()
        assert f"{field['id']}-error" in described and set(described) <= ids
    result = evaluate(command, cmd.example)
    for r in cmd.results:
        (dd,) = tree.find(data_result=r.key)
        assert dd["data-value"] == json.dumps(result[r.key])
        assert tree.result_text[r.key] == format_result(r.unit, result[r.key])
    assert tree.find(role="status")
    assert tree.find(**{"class": "calc__results"})[0]["data-current"] == "true"


def test_allreduce_has_its_chart_drawn_and_a_place_for_the_ring():
    """Only the all-reduce calculator gets the chart, drawn at build time for the inputs it shows (two panels of
    inline SVG, marked data-built), and the place of the ring the page's script draws."""
    html = render("<!-- calc:calculator allreduce -->")
    assert 'data-chart data-built id="calc-allreduce-chart"' in html and 'data-ring id="calc-allreduce-ring"' in html
    tree = Tree(html)
    svgs = [a for tag, a in tree.tags if tag == "svg"]
    assert [a["aria-labelledby"] for a in svgs] == ["calc-allreduce-chart-ranks-t calc-allreduce-chart-ranks-d",
                                                    "calc-allreduce-chart-payload-t calc-allreduce-chart-payload-d"]
    assert sum(1 for tag, a in tree.tags if a.get("class") == "chart__current") == 2
    time_text = tree.result_text["time_s"]
    assert f"{time_text} at 64 ranks" in html  # the page's example: its result is in the panel's title
    other = render("<!-- calc:calculator allreduce ranks=8 -->")
    assert "at 8 ranks" in other and "at 64 ranks" not in other
    assert "data-chart" not in render("<!-- calc:calculator batch -->")


def test_marker_options_override_the_example():
    """Options set the static inputs and the results computed for them."""
    tree = Tree(render('<!-- calc:calculator allreduce id=x ranks=8 payload="4MB" -->'))
    assert tree.find(name="ranks")[0]["value"] == "8"
    assert tree.find(data_result="steps")[0]["data-value"] == "14"


def test_markup_in_an_option_is_refused_naming_the_parameter():
    """calc refuses the value before any HTML is written; the marker hook makes it a build failure.

    (A value holding ``>`` would end the HTML comment, so the marker itself is not found.)
    """
    with pytest.raises(CalcError, match=r"^payload must be a size such as 512MiB, 1GB or 4096 \(bytes\), got '<b x=\"&\"'$"):
        render("""<!-- calc:calculator allreduce payload='<b x="&"' -->""")


def test_labels_titles_and_values_are_escaped():
    """Markup and quotes in a title, a label or a result's text reach the page as text, in elements and attributes."""
    cmd = Command("x", "X", (Param("n", "count", "N"),), (Result("out", '<b>"out"</b>', "text"),), dict)
    html = render_shell(cmd, "u", 'A <i>"title"</i> & more', "", render_results(cmd, {"out": "<script>'&'</script>"}))
    assert "<i>" not in html and "<b>" not in html and "<script>" not in html
    assert "A &lt;i&gt;&quot;title&quot;&lt;/i&gt; &amp; more" in html
    assert "&lt;b&gt;&quot;out&quot;&lt;/b&gt;" in html
    assert 'data-value="&quot;&lt;script&gt;&#x27;&amp;&#x27;&lt;/script&gt;&quot;"' in html
    tree = Tree(html)
    assert tree.result_text["out"] == "<script>'&'</script>"
    assert json.loads(tree.find(data_result="out")[0]["data-value"]) == "<script>'&'</script>"


def test_form_labels_help_groups_and_values_are_escaped():
    """Markup and quotes in a label, a help text, a group, a choice or a field's text reach the form as text."""
    cmd = Command("x", 'T "<x>"', (
        Param("n", "count", '<b>"N"</b>', help="a & <i>b</i>", group="<g>"),
        Param("c", "choice", "C", choices=('a"b', "<c>"), default='a"b', group="<g>")), (), dict)
    html = render_form(cmd, "u", {"n": '"><script>'})
    assert not any(tag in html for tag in ("<b>", "<i>", "<script>", "<g>", "<c>", "<x>"))
    assert 'aria-label="T &quot;&lt;x&gt;&quot; inputs"' in html and "<legend>&lt;g&gt;</legend>" in html
    assert '>&lt;b&gt;&quot;N&quot;&lt;/b&gt;</label>' in html and ">a &amp; &lt;i&gt;b&lt;/i&gt;</span>" in html
    tree = Tree(html)
    (field,) = tree.find(name="n")
    assert field["value"] == field["data-default"] == '"><script>'
    assert [a["value"] for tag, a in tree.tags if tag == "option"] == ['a"b', "<c>"]
    assert tree.find(value='a"b')[0].keys() >= {"selected"} and "selected" not in tree.find(value="<c>")[0]


def test_an_unknown_parameter_fails_naming_it():
    """An option that is none of the command's parameters is a CalcError that lists them."""
    with pytest.raises(CalcError, match=r"^parameter must be one of micro_batch, .*, got 'colour'$"):
        render("<!-- calc:calculator batch colour=blue -->")


def test_an_unknown_command_fails_listing_the_commands():
    """The one command lookup of hooks/arguments.py, whatever the marker's kind."""
    with pytest.raises(MarkerError, match=r"^needs one command name, got 'nope' \(known: batch, sequences, "):
        render("<!-- calc:calculator nope -->")
