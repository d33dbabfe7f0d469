"""The theme overrides (``overrides/partials``) differ from the installed theme only by what they say.

The hooks' own templates (``overrides/partials/calc/``, rendered by :mod:`hooks.templates`) are not overrides.

Each override is a copy of a Material partial that adds an accessible name; when a Material
upgrade changes the original, this fails, so the copy is refreshed rather than silently stale.
"""

from __future__ import annotations

import re
from pathlib import Path

import material
import pytest

from tests.support import ROOT

THEME = Path(material.__file__).parent / "templates"
#: override -> the one attribute it adds to the theme's markup
ADDED = {
    "partials/progress.html": ' aria-label="Loading page"',
    "partials/search.html": """ aria-label="{{ lang.t('search') }}\"""",
}


def body(text: str) -> str:
    """The template without its leading ``{#- ... -#}`` comment."""
    return re.sub(r"\A\{#-.*?-#\}\n", "", text, flags=re.S)


@pytest.mark.parametrize("name", ADDED)
def test_override_is_the_theme_partial_plus_an_accessible_name(name):
    """Removing the added attribute gives back the installed theme's partial exactly."""
    ours = body((ROOT / "overrides" / name).read_text())
    assert ADDED[name] in ours
    assert ours.replace(ADDED[name], "", 1) == body((THEME / name).read_text())


def test_every_override_is_checked():
    """No override escapes the checks here: the other templates are the hooks' own (partials/calc/)."""
    found = {p.relative_to(ROOT / "overrides").as_posix() for p in (ROOT / "overrides").rglob("*.html")}
    assert {name for name in found if not name.startswith("partials/calc/")} == set(ADDED) | {"main.html"}


def test_main_replaces_the_theme_search_worker_in_its_config_block():
    """main.html rewrites the theme's worker path in the config block; the path must be there to rewrite."""
    ours = (ROOT / "overrides/main.html").read_text()
    old, new = re.search(r'replace\("([^"]+)", "([^"]+)"\)', ours).groups()
    block = re.search(r"\{% block config %\}(.*?)\{% endblock %\}", (THEME / "base.html").read_text(), re.S).group(1)
    assert block.count(old) == 1, "the theme's search worker is no longer named where main.html rewrites it"
    assert new == "assets/js/search-worker.js?theme=search." and (ROOT / "docs/assets/js/search-worker.js").is_file()


def test_the_hooks_templates_replace_no_theme_template():
    """The theme has no partials/calc/, so the hooks' templates add to it and override nothing."""
    assert (ROOT / "overrides/partials/calc/shell.html").is_file()
    assert not (THEME / "partials/calc").exists()


def test_no_page_preloads_a_font(built_site):
    """Preloading KaTeX's fonts held the first paint back under Lighthouse (README): no page asks for one."""
    for page in built_site.rglob("*.html"):
        assert 'as="font"' not in page.read_text(), page


def test_main_does_in_the_head_what_the_themes_bundle_does_at_start():
    """main.html's head script repeats what the theme's bundle does when it starts, so the bundle finds nothing to
    change. It must repeat it exactly: the bundle must still swap the root's no-js for js, still give the root the
    focus-visible polyfill's class and attribute, and still
    skip an href or src that its regular expression calls absolute while rewriting the others (``t[r]=t[r]``)."""
    bundle = next((THEME / "assets/javascripts").glob("bundle.*.min.js")).read_text()
    assert 'document.documentElement.classList.remove("no-js");document.documentElement.classList.add("js")' in bundle
    assert ('r.nodeType===Node.DOCUMENT_NODE&&(document.documentElement.classList.add("js-focus-visible"),'
            'document.documentElement.setAttribute("data-js-focus-visible",""))') in bundle  # the focus-visible polyfill
    assert re.search(r'for\(let (\w)\ of M\("\[href\], \[src\]",\w\)\)for\(let (\w) of\["href","src"\]\)\{let (\w)=\1\.'
                     r'getAttribute\(\2\);if\(\3&&!/\^\(\?:\[a-z\]\+:\)\?\\/\\//i\.test\(\3\)\)\{\1\[\2\]=\1\[\2\];break\}\}',
                     bundle), "the theme's instant navigation no longer rewrites links as main.html's head script does"
    ours = (ROOT / "overrides/main.html").read_text()
    assert ('classList.replace("no-js","js");document.documentElement.classList.add("js-focus-visible");'
            'document.documentElement.setAttribute("data-js-focus-visible","")') in ours
    assert r'if(v&&!/^(?:[a-z]+:)?\/\//i.test(v)){e[a]=e[a];break}' in ours
