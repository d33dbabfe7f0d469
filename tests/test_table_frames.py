"""hooks/table_frames.py: each table without a class is framed as the theme frames it, once; classed tables are
left alone; nesting and unbalanced tags fail the build with the page's name."""

from __future__ import annotations

import pytest

from hooks.table_frames import CLOSE, OPEN, frame_tables


def test_tables_without_a_class_are_framed_and_the_rest_is_unchanged():
    html = "<p>a</p><table><tr><td>1</td></tr></table><p>b</p><TABLE id=x><tr><td>2</td></tr></TABLE>"
    assert frame_tables(html, "p.md") == (
        f"<p>a</p>{OPEN}<table><tr><td>1</td></tr></table>{CLOSE}<p>b</p>{OPEN}<TABLE id=x><tr><td>2</td></tr></TABLE>{CLOSE}")


def test_a_table_with_a_class_is_not_the_themes_to_frame():
    html = '<table class="x"><tr><td>1</td></tr></table><table><tr><td>2</td></tr></table>'
    assert frame_tables(html, "p.md") == f'<table class="x"><tr><td>1</td></tr></table>{OPEN}<table><tr><td>2</td></tr></table>{CLOSE}'


def test_a_table_in_a_region_of_its_own_is_left_alone():
    html = '<div role="region"><table data-frame="own"><tr><td>1</td></tr></table></div><table data-frame="x"></table>'
    assert frame_tables(html, "p.md") == (
        f'<div role="region"><table data-frame="own"><tr><td>1</td></tr></table></div>{OPEN}<table data-frame="x"></table>{CLOSE}')


def test_no_table_no_change():
    assert frame_tables("<p>tablet</p><tablex>", "p.md") == "<p>tablet</p><tablex>"


@pytest.mark.parametrize(("html", "message"), [
    ("<table><tr><td><table></table></td></tr></table>", "p.md: a table inside a table"),
    ("</table>", "p.md: </table> without its <table>"),
    ("<table><tr><td>1</td></tr>", "p.md: <table> without its </table>"),
])
def test_what_it_cannot_frame_as_the_theme_would_fails_the_build(html, message):
    with pytest.raises(ValueError, match=message):
        frame_tables(html, "p.md")
