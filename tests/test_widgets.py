"""hooks/widgets.py in-process: the static calculator HTML and its DOM contract."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from calc.api import COMMANDS, evaluate, format_result
from hooks.markers import MARKER_RE, MarkerError, parse
from hooks.widgets import render_marker


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
    return render_marker(parse(MARKER_RE.search(text)))


@pytest.mark.parametrize("command", COMMANDS)
def test_contract(command):
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


def test_allreduce_has_places_for_chart_and_ring():
    html = render("<!-- calc:calculator allreduce -->")
    assert 'data-chart id="calc-allreduce-chart"' in html and 'data-ring id="calc-allreduce-ring"' in html
    assert "data-chart" not in render("<!-- calc:calculator batch -->")


def test_marker_options_override_defaults_and_are_escaped():
    """Options set the static inputs; quotes and markup in them stay text."""
    html = render('<!-- calc:calculator allreduce id=x ranks=8 payload="4MB" -->')
    tree = Tree(html)
    assert tree.find(name="ranks")[0]["value"] == "8"
    assert tree.find(data_result="steps")[0]["data-value"] == "14"
    with pytest.raises(Exception):  # calc rejects it; the marker hook turns it into a build failure
        render('<!-- calc:calculator allreduce payload="<b>x</b>" -->')
    assert not re.search(r"<script", html)


def test_unknown_parameter_or_command_fails():
    with pytest.raises(Exception, match="colour"):
        render("<!-- calc:calculator batch colour=blue -->")
    with pytest.raises(MarkerError):
        render("<!-- calc:calculator nope -->")
