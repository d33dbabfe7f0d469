"""Math rendered at build time by KaTeX (the npm package, run by Node), not in the reader's browser.

``pymdownx.arithmatex`` (generic mode) leaves ``<span class="arithmatex">\\(…\\)</span>``
and ``<div class="arithmatex">\\[…\\]</div>`` in each page. :class:`Katex` sends every
formula to one Node process per build running ``katex.renderToString`` (HTML for the
eye, MathML for screen readers) and puts the result in place. The page then needs
KaTeX's stylesheet and fonts but none of its script: formulas show with JavaScript off,
the page does no rendering work while it loads, and nothing shifts when it would have.

A formula KaTeX cannot parse fails the build, naming the page and the TeX.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

#: Reads one JSON request per line ({tex, display}) and answers one JSON line ({html} or {error}).
_RENDERER = r"""
const katex = require(process.argv[1]);
const lines = require("readline").createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const { tex, display } = JSON.parse(line);
  let answer;
  try {
    answer = { html: katex.renderToString(tex, { displayMode: display, throwOnError: true, output: "htmlAndMathml" }) };
  } catch (error) {
    answer = { error: String(error.message || error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
"""

MATH_RE = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>', re.S)
_DELIMITERS = re.compile(r"^\s*\\[(\[](?P<body>.*)\\[)\]]\s*$", re.S)


class MathError(Exception):
    """A formula KaTeX rejects; the hook turns it into a build failure."""


class Katex:
    """One Node process running KaTeX for the whole build; :meth:`close` ends it."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        node = shutil.which("node")
        katex = self._root / "node_modules" / "katex"
        if node is None:
            raise MathError("node is not on PATH; it renders the math (Node >= 20 is part of the set-up)")
        if not katex.is_dir():
            raise MathError(f"{katex} is missing: run `npm ci` (make serve and make test do)")
        return subprocess.Popen(
            [node, "-e", _RENDERER, str(katex)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, encoding="utf-8", bufsize=1,
        )

    def render(self, tex: str, display: bool) -> str:
        if self._proc is None:
            self._proc = self._start()
        self._proc.stdin.write(json.dumps({"tex": tex, "display": display}) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise MathError("the KaTeX process ended unexpectedly")
        answer = json.loads(line)
        if "error" in answer:
            raise MathError(f"KaTeX cannot render {tex!r}: {answer['error']}")
        return answer["html"]

    def close(self) -> None:
        if self._proc is not None:
            self._proc.stdin.close()
            self._proc.wait(timeout=30)
            self._proc.stdout.close()
            self._proc = None


def render_page(page_html: str, katex: Katex, page: str) -> str:
    """Replace each arithmatex element's TeX with KaTeX's HTML + MathML (``data-katex`` marks it done).

    Not from a template, on purpose: the one element written is the element matched, rewritten in
    place with the same tag (``span`` or ``div``, from :data:`MATH_RE`) and one attribute more, around
    KaTeX's HTML, which goes in as it is. Nothing in it needs escaping, and the string beside the
    regex shows the rewrite one for one, where a template would hide it in another file.
    """

    def one(m: re.Match[str]) -> str:
        source = html.unescape(m["tex"])
        body = _DELIMITERS.match(source)
        if body is None:
            raise MathError(f"{page}: math without \\( \\) or \\[ \\] delimiters: {source[:80]!r}")
        try:
            rendered = katex.render(body["body"].strip(), display=m["tag"] == "div")
        except MathError as e:
            raise MathError(f"{page}: {e}") from None
        return f'<{m["tag"]} class="arithmatex" data-katex="build">{rendered}</{m["tag"]}>'

    return MATH_RE.sub(one, page_html)
