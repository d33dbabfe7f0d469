"""A Content-Security-Policy for every built page, as a ``<meta>`` tag.

Static hosts often cannot set headers, so the policy travels in the page. It
allows nothing from another origin and no ``'unsafe-eval'``; Pyodide needs
``'wasm-unsafe-eval'`` to compile WebAssembly and a module worker from
``'self'``. The theme's inline scripts are allowed by their SHA-256 hashes.

With instant navigation the first page's policy stays in force while later
pages' inline scripts run, so the hashes are the union over the whole site,
computed after the build and written into every page (``on_post_build``).
Styles allow ``'unsafe-inline'``: KaTeX and the theme set ``style`` attributes.

Source: W3C, Content Security Policy Level 3 (hash sources, ``wasm-unsafe-eval``;
``frame-ancestors``, ``report-uri`` and ``sandbox`` are ignored in a meta tag,
so they are not used).
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

_SCRIPT_RE = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S | re.I)
_TYPE_RE = re.compile(r"""\btype\s*=\s*["']?([^"'\s>]+)""", re.I)
_HEAD_RE = re.compile(r"<meta charset=[^>]*>", re.I)
MARK = 'http-equiv="Content-Security-Policy"'
_OLD_META_RE = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')
_EXECUTABLE_TYPES = {"", "text/javascript", "application/javascript", "module"}


def inline_script_hashes(html: str) -> set[str]:
    """``'sha256-…'`` sources for each inline script that the browser would execute.

    >>> len(inline_script_hashes('<script>a=1</script><script type="application/json">{}</script>'))
    1
    """
    hashes = set()
    for m in _SCRIPT_RE.finditer(html):
        attrs = m["attrs"]
        if re.search(r"\bsrc\s*=", attrs, re.I):
            continue
        t = _TYPE_RE.search(attrs)
        if (t.group(1).lower() if t else "") not in _EXECUTABLE_TYPES:
            continue
        digest = hashlib.sha256(m["body"].encode("utf-8")).digest()
        hashes.add("'sha256-" + base64.b64encode(digest).decode("ascii") + "'")
    return hashes


def policy(script_hashes: set[str]) -> str:
    """The policy text: same-origin only, hashed inline scripts, WebAssembly allowed."""
    scripts = " ".join(["'self'", "'wasm-unsafe-eval'", *sorted(script_hashes)])
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src {scripts}",
            "worker-src 'self'",
            "connect-src 'self'",
            "img-src 'self' data:",
            "font-src 'self'",
            "style-src 'self' 'unsafe-inline'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
        ]
    )


def apply(site_dir: Path) -> int:
    """Write the site-wide policy into every HTML page; return how many pages carry it.

    The ``<meta>`` is one element written as a string, not from a template, on purpose: it is written
    after the build (the theme's environment is gone by then), its text must be what
    ``_OLD_META_RE`` removes on the next run (so the two sit side by side here), and its one value,
    :func:`policy`, holds only fixed words, ``'`` and base64 hashes: nothing an attribute must escape.
    """
    pages = sorted(site_dir.rglob("*.html"))
    # idempotent: a page kept from an earlier (dirty) build loses its old policy first
    texts = {p: _OLD_META_RE.sub("", p.read_text(encoding="utf-8")) for p in pages}
    hashes: set[str] = set()
    for html in texts.values():
        hashes |= inline_script_hashes(html)
    meta = f'<meta {MARK} content="{policy(hashes)}">'
    count = 0
    for path, html in texts.items():
        new, n = _HEAD_RE.subn(lambda m: m.group(0) + meta, html, count=1)
        if n != 1:
            raise RuntimeError(f"{path}: no <meta charset> to put the Content-Security-Policy after")
        path.write_text(new, encoding="utf-8")
        count += 1
    return count
