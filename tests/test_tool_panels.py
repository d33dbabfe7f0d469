"""hooks/views.py and hooks/widgets.py in-process: the tool pages' fold, launch panel and pin panel as built."""

from __future__ import annotations

import re
from html import unescape

import pytest

from calc.api import COMMANDS, run
from calc.commands.export import launches
from calc.export import FRAMEWORKS, TARGETS
from hooks.markers import MARKER_RE, parse
from hooks.views import FOLD_LABEL, render_launch, render_tool_marker
from hooks.widgets import render_form


def tool(text: str) -> str:
    return render_tool_marker(parse(MARKER_RE.search(text)))


@pytest.fixture(scope="module")
def atlas() -> str:
    return tool("<!-- calc:tool plan id=atlas preset=gpt3-175b presets=all -->")


def panel_texts(html: str) -> dict[str, tuple[str, str]]:
    """Each framework's (text, error) as the build wrote them."""
    out = {}
    for name, body in re.findall(r'<div class="launch__panel" data-launch-panel="([a-z]+)"[^>]*>(.*?)</div>', html, re.S):
        text = re.search(r"<code>(.*?)</code>", body, re.S).group(1)
        error = re.search(r"<p class=\"launch__error\"[^>]*>(.*?)</p>", body, re.S).group(1)
        out[name] = (unescape(text), unescape(error))
    return out


def test_the_atlas_panel_holds_each_frameworks_export_of_the_default_inputs(atlas):
    """The build writes launches() of the default inputs: text where a framework takes the plan, else its line."""
    values, _ = run("plan", values_text(atlas))
    expected = launches(values)
    got = panel_texts(atlas)
    assert list(got) == list(FRAMEWORKS)
    for name, one in expected.items():
        assert got[name] == ((one["text"], "") if one["ok"] else ("", one["message"])), name
    assert 'data-launch-panel="megatron">' in atlas and 'data-launch-panel="torchtitan" hidden' in atlas
    assert "Megatron-LM core_v0.15.3" in atlas and "data-launch-copy disabled" in atlas


def test_the_planner_panel_offers_every_row_and_shows_the_first():
    """The planner: one option per ranked row; the first row's exports are written."""
    html = tool("<!-- calc:tool search id=plan-search preset=llama3-8b presets=all -->")
    options = re.findall(r'<option value="(\d+)"[^>]*>#(\d+)</option>', html.split("data-launch-row")[1].split("</select>")[0])
    _, result = run("search", values_text(html))
    assert [int(r) for _, r in options] == [p["rank"] for p in result["plans"]]
    from calc.views import plan_inputs
    first = launches(COMMANDS["plan"].parse(plan_inputs(values_text(html), result["plans"][0]["parallel"])))
    assert panel_texts(html)["megatron"][0] == first["megatron"]["text"]
    assert "data-pin" not in html  # pinning is the atlas's


def values_text(html: str) -> dict[str, str]:
    """Every field's text in a built form (inputs and selects)."""
    fields = dict(re.findall(r'name="([a-z_]+)" type="text"[^>]*value="([^"]*)"', html))
    for name, body in re.findall(r'<select id="[^"]*" name="([a-z_]+)".*?>(.*?)</select>', html):
        selected = re.search(r'<option value="([^"]*)" selected>', body)
        fields[name] = selected.group(1) if selected else ""
    return {k: unescape(v) for k, v in fields.items()}


def test_the_atlas_has_a_pin_panel_with_polite_status(atlas):
    """Pin and Unpin buttons (Unpin hidden until something is pinned), a polite status, an empty view."""
    pin = atlas[atlas.index("<section class=\"pin\""):]
    pin = pin[:pin.index("</section>")]
    assert "data-pin-set disabled>Pin this plan</button>" in pin
    assert "data-pin-clear hidden>Unpin</button>" in pin
    assert 'role="status" data-pin-status' in pin and '<div class="pin__view" data-pin-view></div>' in pin


def test_model_hardware_and_training_are_folded_first_and_the_split_is_not(atlas):
    """One closed <details> right after the presets holds the Model, Hardware and Training groups."""
    form = atlas[atlas.index('<form class="calc__form"'):atlas.index("</form>")]
    assert form.index("<details") < form.index("<legend>Split</legend>")
    fold = form[form.index("<details"):form.index("</details>")]
    assert f"<summary>{FOLD_LABEL}</summary>" in fold and "<details class=\"calc__fold\" id=\"atlas-fold\">" in fold
    assert re.findall(r"<legend>(\w+)</legend>", fold) == ["Model", "Hardware", "Training"]
    assert 'name="tensor_parallel"' not in fold and 'name="layers"' in fold


def test_render_form_without_fold_is_unchanged():
    """The calculators' forms (no fold asked) have no <details>; a fold of absent groups adds none."""
    cmd = COMMANDS["batch"]
    plain = render_form(cmd, "b", cmd.example)
    assert "<details" not in plain
    assert render_form(cmd, "b", cmd.example, ("Model",), "Edit") == plain


def test_launch_text_and_refusals_are_escaped_and_only_the_first_panel_shows():
    """Launch settings and a refusal holding markup reach the panel as text; later frameworks are hidden."""
    html = render_launch({"megatron": {"ok": True, "text": "--a <b> & 'c'\n--d"},
                          "deepspeed": {"ok": False, "message": "<i>no</i> & \"why\""}}, "u", ranks=[3, 1])
    assert "<b>" not in html and "<i>" not in html
    assert panel_texts(html) == {"megatron": ("--a <b> & 'c'\n--d", ""), "deepspeed": ("", '<i>no</i> & "why"')}
    assert 'data-launch-panel="megatron">' in html and 'data-launch-panel="deepspeed" hidden>' in html
    label = " + ".join(t.name for t in TARGETS["deepspeed"])
    assert f'<option value="deepspeed">{label}</option>' in html and label.startswith("DeepSpeed ")
    assert re.findall(r'<option value="(\d)"( selected)?>#(\d)</option>', html) == [("0", " selected", "3"), ("1", "", "1")]
