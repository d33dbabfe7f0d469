"""Invisible markers in page Markdown, replaced by what ``calc`` computes.

Syntax (one HTML comment, on one line)::

    <!-- calc:KIND [COMMAND] [key=value ...] -->

Values may be quoted (``"a b"``). Kinds are registered in :data:`RENDERERS`
by the renderer modules (``tables``, ``widgets``). An unknown kind, a bad
option or a :class:`~calc.errors.CalcError` fails the build, naming the page
and the marker. Without a matching kind the marker would stay invisible in the
page, so it is an error, never ignored.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from calc.errors import CalcError

MARKER_RE = re.compile(r"<!--\s*calc:(?P<kind>[a-z][a-z0-9_-]*)(?P<args>[^>]*?)\s*-->")


class MarkerError(Exception):
    """A marker that cannot be rendered; the hook turns it into a build failure."""


@dataclass(frozen=True, slots=True)
class Marker:
    """One parsed marker: its kind, positional words and ``key=value`` options."""

    kind: str
    words: tuple[str, ...]
    options: dict[str, str]
    text: str  #: the marker as written, for error messages

    def take(self, key: str, default: str | None = None) -> str | None:
        """Remove and return an option (so leftovers can be reported as unknown)."""
        return self.options.pop(key, default)


def parse(match: re.Match[str]) -> Marker:
    """Parse one marker match into a :class:`Marker`.

    >>> m = parse(MARKER_RE.search('<!-- calc:value allreduce ranks=8 show="time_s" -->'))
    >>> m.kind, m.words, m.options
    ('value', ('allreduce',), {'ranks': '8', 'show': 'time_s'})
    """
    try:
        tokens = shlex.split(match["args"])
    except ValueError as e:
        raise MarkerError(f"cannot split its options: {e}") from None
    words, options = [], {}
    for tok in tokens:
        if "=" in tok:
            key, _, value = tok.partition("=")
            if key in options:
                raise MarkerError(f"option {key!r} given twice")
            options[key] = value
        elif options:
            raise MarkerError(f"word {tok!r} after key=value options")
        else:
            words.append(tok)
    return Marker(match["kind"], tuple(words), options, match.group(0))


Renderer = Callable[[Marker], str]


def replace_markers(markdown: str, renderers: dict[str, Renderer], page: str) -> str:
    """Replace every marker by its rendering; raise :class:`MarkerError` naming page and marker.

    Markers inside fenced code blocks are left alone so pages can document the syntax.
    """
    out, pos = [], 0
    for start, end in _outside_fences(markdown):
        chunk = markdown[start:end]
        out.append(markdown[pos:start])
        out.append(MARKER_RE.sub(lambda m: _render(m, renderers, page), chunk))
        pos = end
    out.append(markdown[pos:])
    return "".join(out)


def _render(match: re.Match[str], renderers: dict[str, Renderer], page: str) -> str:
    try:
        marker = parse(match)
        renderer = renderers.get(marker.kind)
        if renderer is None:
            raise MarkerError(f"unknown kind {marker.kind!r} (known: {', '.join(sorted(renderers))})")
        text = renderer(marker)
        if marker.options:
            raise MarkerError(f"unknown option(s) {', '.join(sorted(marker.options))}")
        return text
    except (MarkerError, CalcError) as e:
        raise MarkerError(f"{page}: marker {match.group(0)!r}: {e}") from None


_FENCE_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})", re.M)


def _outside_fences(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that are not inside fenced code blocks."""
    spans, pos, open_fence = [], 0, None
    for m in _FENCE_RE.finditer(text):
        fence = m["fence"]
        if open_fence is None:
            spans.append((pos, m.start()))
            open_fence = fence
        elif fence[0] == open_fence[0] and len(fence) >= len(open_fence):
            line_end = text.find("\n", m.start())
            pos = len(text) if line_end < 0 else line_end
            open_fence = None
    if open_fence is None:
        spans.append((pos, len(text)))
    return spans
