"""The Content-Security-Policy meta tag on every built page (the browser side is in tests/browser)."""

from __future__ import annotations

import re

import pytest

from hooks.csp import MARK, inline_script_hashes, policy

pytestmark = pytest.mark.build

META_RE = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


def test_every_page_carries_one_policy_first_in_head(built_site):
    """Each page has exactly one policy, right after <meta charset>, before any script."""
    for page in built_site.rglob("*.html"):
        html = page.read_text()
        assert html.count(MARK) == 1, page
        head = html[: html.index("</head>")]
        assert re.search(r"<meta charset=[^>]*>" + META_RE.pattern, head), page
        assert head.index(MARK) < head.find("<script") or "<script" not in head


def test_policy_has_no_unsafe_eval_and_no_other_origin(built_site):
    """No 'unsafe-eval', no http(s) or wildcard source; WebAssembly and same-origin workers allowed."""
    text = META_RE.search((built_site / "index.html").read_text()).group(1)
    directives = dict(d.strip().split(" ", 1) for d in text.split(";"))
    assert "'unsafe-eval'" not in text
    assert not re.search(r"https?:|\*|blob:", text)
    assert "'wasm-unsafe-eval'" in directives["script-src"]
    assert directives["worker-src"] == "'self'"
    assert directives["default-src"] == "'self'"


def test_every_inline_script_is_hashed(built_site):
    """Each inline script on any page is allowed by a hash in every page's policy (instant navigation)."""
    pages = list(built_site.rglob("*.html"))
    all_hashes = set()
    for page in pages:
        all_hashes |= inline_script_hashes(page.read_text())
    assert all_hashes, "the theme emits inline scripts; none found means the scan is broken"
    for page in pages:
        text = META_RE.search(page.read_text()).group(1)
        assert all(h in text for h in all_hashes), page


def test_policy_lists_hashes_in_stable_order():
    """The policy text is deterministic (reproducible builds)."""
    assert policy({"'sha256-b'", "'sha256-a'"}) == policy({"'sha256-a'", "'sha256-b'"})


def test_the_policy_is_safe_in_a_double_quoted_attribute_unescaped():
    """hooks/csp.py writes the policy into ``content="…"`` as it is: it holds no ``"``, ``&``, ``<`` or ``>``."""
    hashes = inline_script_hashes('<script>a="<&>"</script><script type="module">b=1</script>')
    assert len(hashes) == 2
    assert not re.search(r'["&<>]', policy(hashes))
