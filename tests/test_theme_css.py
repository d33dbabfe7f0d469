"""hooks/theme_css.py: the theme's palette stylesheet loses its switching rule, and a theme that changes it fails
the build naming the rule (the edit's mechanics: tests/test_theme_patch.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hooks.theme_css import NOTE, RULE, drop_switching_rule
from tests.support import theme_file_site


def site_with(tmp_path: Path, text: str | None = None) -> Path:
    return theme_file_site(tmp_path, "assets/stylesheets", "palette.*.min.css", text)


def test_the_installed_themes_rule_is_dropped_and_nothing_else(tmp_path):
    """The theme's stylesheet holds the rule once; afterwards no selector names the attribute, and the rest is
    byte for byte the theme's."""
    site = site_with(tmp_path)
    (sheet,) = (site / "assets/stylesheets").glob("palette.*.min.css")
    before = sheet.read_text()
    assert before.count(RULE) == 1
    assert drop_switching_rule(site) == sheet
    after = sheet.read_text()
    assert "data-md-color-switching" not in after.replace(NOTE, "")
    assert after == before.replace(RULE, NOTE)


@pytest.mark.parametrize(("text", "message"), [
    ("body{color:red}", "does not hold the theme's switching rule once (found 0 times)"),
    (RULE + RULE, "does not hold the theme's switching rule once (found 2 times)"),
])
def test_a_theme_that_changed_the_rule_fails_the_build(tmp_path, text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        drop_switching_rule(site_with(tmp_path, text))

