"""Each table of a page's content in the theme's scrolling frame, written at build rather than by the theme's
bundle after the first paint (issue 15).

Material (9.7) wraps every ``table:not([class])`` of the content, at each page view, in
``<div class="md-typeset__scrollwrap"><div class="md-typeset__table">``: it moves each table out of the page
and back in, and Chromium then restyles the whole article, inside the theme's DOMContentLoaded task
(Chromium's trace: an "invalidates subtree" on the article for each table moved). Written into the HTML,
the frames are there from the first style, cost nothing at load, and wide tables scroll without scripts
too; :mod:`hooks.theme_js` stops the bundle from looking for tables to wrap, so none is wrapped twice.
"""

from __future__ import annotations

import re

OPEN = '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
CLOSE = "</div></div>"
#: A table's start or end tag; a start tag with a class attribute is not the theme's to wrap.
TAG = re.compile(r"<(/?)table\b([^>]*)>", re.I)
#: A table that scrolls in a region of its own (a tool's view: ``partials/calc/table.html``), framed once already.
OWN_FRAME = re.compile(r"""\bdata-frame\s*=\s*["']?own\b""", re.I)


def frame_tables(html: str, where: str) -> str:
    """``html`` with each table that has no class attribute in the theme's frame, but for a table marked
    ``data-frame="own"``: a tool's table, which scrolls in its own focusable region, as the page draws it.
    A second frame in that region was a second scrolling box, which the page's observer of scrolling frames
    (``scrollable.mjs``) could not measure while the view's tables off screen are not rendered (``tools.css``).

    Raises ``ValueError`` naming ``where`` (the page) for a table inside a table, which the theme would
    frame too and this does not, or for unbalanced table tags.
    """
    out, last, depth, framed = [], 0, 0, []
    for m in TAG.finditer(html):
        closing, attributes = m.group(1) == "/", m.group(2)
        if not closing:
            depth += 1
            if depth > 1:
                raise ValueError(f"{where}: a table inside a table; hooks/table_frames.py frames top-level tables only")
            framed.append(re.search(r"\bclass\s*=", attributes, re.I) is None and not OWN_FRAME.search(attributes))
            if framed[-1]:
                out += [html[last:m.start()], OPEN]
                last = m.start()
        else:
            if depth == 0:
                raise ValueError(f"{where}: </table> without its <table>")
            depth -= 1
            if framed.pop():
                out += [html[last:m.end()], CLOSE]
                last = m.end()
    if depth:
        raise ValueError(f"{where}: <table> without its </table>")
    out.append(html[last:])
    return "".join(out)
