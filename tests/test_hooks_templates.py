"""hooks/templates.py: every template in ``overrides/partials/calc/`` is used, and a missing one fails loudly."""

from __future__ import annotations

import ast
import shutil

import pytest
from jinja2 import Environment, meta
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort, PluginError

from hooks import templates, widgets
from hooks.markers import MarkerError, replace_markers
from tests.support import ROOT

CALC = ROOT / "overrides" / "partials" / "calc"
PREFIX = "partials/calc/"


def rendered_by_hooks() -> dict[str, str]:
    """Template name -> the hooks module whose code calls ``templates.render(NAME, ...)`` with it."""
    found = {}
    for path in sorted((ROOT / "hooks").glob("*.py")):
        for call in ast.walk(ast.parse(path.read_text())):
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "render"
                    and isinstance(call.func.value, ast.Name) and call.func.value.id == "templates"):
                (first, *_) = call.args
                assert isinstance(first, ast.Constant), f"{path.name}: a template name computed at run time"
                found[first.value] = path.name
    return found


def included_by(name: str) -> set[str]:
    """The templates ``partials/calc/NAME`` includes (or imports, or extends), by their names in partials/calc/."""
    names = meta.find_referenced_templates(Environment().parse((CALC / name).read_text()))
    return {n.removeprefix(PREFIX) for n in names}


def test_every_template_is_rendered_by_a_hook_or_included_by_one_that_is():
    """No template in partials/calc/ is dead: each is rendered by a hook, or reached from one that is."""
    reached, todo = set(), list(rendered_by_hooks())
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(included_by(name))
    assert reached == {p.name for p in CALC.glob("*.html")}


def test_every_template_a_hook_names_is_there():
    """Each name in a hooks' templates.render call is a file of partials/calc/ (with the forms' and panels')."""
    named = rendered_by_hooks()
    assert {"form.html", "presets.html", "launch.html", "pin.html", "shell.html"} <= set(named)
    assert all((CALC / name).is_file() for name in named), named


@pytest.fixture
def without_form_template(tmp_path):
    """The theme's environment bound with a copy of overrides/ that lacks partials/calc/form.html; rebound after."""
    overrides = tmp_path / "overrides"
    shutil.copytree(ROOT / "overrides", overrides)
    (overrides / "partials" / "calc" / "form.html").unlink()
    yield overrides
    templates.use(load_config(str(ROOT / "mkdocs.yml")))


def test_a_missing_template_fails_the_marker_naming_page_marker_and_template(without_form_template):
    """The calculator cannot render without form.html: one MarkerError names the page, the marker and the file."""
    templates.use(load_config(str(ROOT / "mkdocs.yml"), theme={"name": "material", "custom_dir": str(without_form_template)}))
    with pytest.raises(MarkerError, match=r"^p\.md: marker '<!-- calc:calculator batch -->': template "
                                          r"partials/calc/form\.html not found \(searched: .*overrides, "):
        replace_markers("# x\n\n<!-- calc:calculator batch -->\n", widgets.RENDERERS, "p.md")


def test_an_included_template_that_is_missing_is_named_too(without_form_template, tmp_path):
    """A template including one that is not there fails naming the included file, not the one rendered."""
    (without_form_template / "partials" / "calc" / "holder.html").write_text('{% include "partials/calc/form.html" %}')
    templates.use(load_config(str(ROOT / "mkdocs.yml"), theme={"name": "material", "custom_dir": str(without_form_template)}))
    with pytest.raises(templates.TemplateMissing, match=r"^template partials/calc/form\.html not found"):
        templates.render("holder.html")


@pytest.mark.rebuild
def test_a_missing_template_fails_the_build(without_form_template, tmp_path, caplog):
    """A real build whose theme lacks form.html stops, naming the page, the marker and the template."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# x\n\n<!-- calc:calculator batch -->\n")
    (docs / "assets").symlink_to(ROOT / "docs" / "assets")
    config = load_config(str(ROOT / "mkdocs.yml"), docs_dir=str(docs), site_dir=str(tmp_path / "site"),
                         nav=["index.md"], strict=True,
                         theme={"name": "material", "custom_dir": str(without_form_template)})
    with pytest.raises((PluginError, Abort)):
        build(config)
    assert "index.md: marker '<!-- calc:calculator batch -->': template partials/calc/form.html not found" in caplog.text
