"""Tests for hooks.math: formulas rendered by KaTeX at build time, none left for the browser."""

import re

import pytest

from hooks.math import Katex, MathError, render_page
from tests.support import ROOT


@pytest.fixture(scope="module")
def katex():
    k = Katex(ROOT)
    yield k
    k.close()


def test_inline_and_display_math_become_katex_html_and_mathml(katex):
    """Inline \\( \\) and display \\[ \\] are rendered; MathML is kept for screen readers."""
    page = ('<p><span class="arithmatex">\\(2(p-1)\\alpha\\)</span></p>'
            '<div class="arithmatex">\\[T = \\frac{n}{\\beta}\\]</div>')
    out = render_page(page, katex, "p.md")
    assert out.count('data-katex="build"') == 2
    assert out.count('class="katex"') == 2 and out.count('class="katex-display"') == 1
    assert out.count("<math") == 2 and 'display="block"' in out
    assert "\\(" not in out and "\\[" not in out


def test_html_escapes_in_tex_are_undone_before_rendering(katex):
    """Arithmatex escapes < and &; KaTeX must see the TeX itself."""
    out = render_page('<span class="arithmatex">\\(a &lt; b\\)</span>', katex, "p.md")
    assert "<mo>&lt;</mo>" in out


def test_bad_tex_fails_naming_the_page(katex):
    """A formula KaTeX cannot parse stops the build with the page and the TeX."""
    with pytest.raises(MathError, match=r"^p\.md: KaTeX cannot render '\\\\frac\{1\}'"):
        render_page('<span class="arithmatex">\\(\\frac{1}\\)</span>', katex, "p.md")


def test_missing_delimiters_fail(katex):
    """Arithmatex output without its delimiters is reported, not guessed at."""
    with pytest.raises(MathError, match="without"):
        render_page('<span class="arithmatex">x</span>', katex, "p.md")


def test_built_site_has_no_tex_left_and_loads_no_katex_script(built_site):
    """Every formula of every page is rendered; pages load KaTeX's CSS, never its script."""
    pages = list(built_site.rglob("*.html"))
    rendered = 0
    for page in pages:
        text = page.read_text()
        assert not re.search(r'class="arithmatex">\\[(\[]', text), page
        assert "katex.min.js" not in text, page
        rendered += text.count('data-katex="build"')
    assert rendered > 100
    assert (built_site / "assets/vendor/katex/katex.min.css").is_file()
    assert not (built_site / "assets/vendor/katex/katex.min.js").exists()
