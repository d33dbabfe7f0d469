"""Tests for hooks.entry: a fresh import of calc and the hooks on every build."""

import importlib.util
import sys

from mkdocs.config import load_config

from tests.support import ROOT


def load_entry():
    spec = importlib.util.spec_from_file_location("entry_under_test", ROOT / "hooks" / "entry.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_build_reimports_calc_and_hooks(tmp_path):
    """on_config drops calc and hooks modules so `mkdocs serve` picks up edits on the next rebuild."""
    entry = load_entry()
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path))
    entry.on_config(config)
    first_calc, first_site = sys.modules["calc.api"], sys.modules["hooks.site"]
    entry.on_post_build(config)
    entry.on_config(config)
    assert sys.modules["calc.api"] is not first_calc
    assert sys.modules["hooks.site"] is not first_site
    entry.on_post_build(config)


def test_state_is_dropped_after_the_build(tmp_path):
    """Nothing from one build survives into the next (per-build state is reset)."""
    entry = load_entry()
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path))
    entry.on_config(config)
    assert entry._build
    entry.on_post_build(config)
    assert entry._build == {}


def test_marker_error_while_rendering_content_is_one_plugin_error(tmp_path):
    """A template missing in on_page_content (quiz, accuracy chart) stops the build with one line, no traceback."""
    import pytest
    from mkdocs.exceptions import PluginError

    entry = load_entry()
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path))
    entry.on_config(config)
    site = entry._build["site"]

    def missing(state, html, page):
        raise site.MarkerError("docs/quiz.md: template partials/calc/quiz.html not found")

    site_render, site.on_page_content = site.on_page_content, missing
    try:
        with pytest.raises(PluginError, match="quiz.html not found") as caught:
            entry.on_page_content("<p></p>", None, config, None)
        assert caught.value.__cause__ is None and caught.value.__suppress_context__
    finally:
        site.on_page_content = site_render
        entry.on_post_build(config)
