"""Two edits to the theme's bundle, each removing work it does at every page load (issue 15).

**The colour-scheme meta element.** Material (9.7) mounts its light/dark toggle on every page load: it
appends an empty ``<meta name="color-scheme">`` to the head, then sets its content to the header's computed
``color-scheme``. Chromium recomputes the style of every element for each of the two changes (a platform
colour change), inside the theme's start-up task. Measured in Chromium's trace of a page load (elements
restyled, summed over the load; README, "What a page loads"): /strategies/sharding/ 7910 → 4767,
/strategies/pipeline/ 8784 → 5792, /tools/accuracy/ 9010 → 5937. The element only tells the browser which
colour scheme the page's root uses (its scrollbars, its canvas); ``atlas.css`` gives the root the body's
scheme by a rule instead, from the first style. The theme still makes the element and sets its content
when the reader switches, on an element left out of the document.

**The tables' frames.** The theme wraps each table of the content in a scrolling frame at each page view;
:mod:`hooks.table_frames` writes the frames at build, so the bundle's query for tables is made to match
nothing.

Each replacement has the length of what it replaces, so every later column of the bundle, and its source
map, stay right.
"""

from __future__ import annotations

from pathlib import Path

from .theme_patch import replace_once

#: The theme's minified statement that puts the element in the head (``assets/javascripts/bundle.*.min.js``).
APPEND = 'let o=x("meta",{name:"color-scheme"});document.head.appendChild(o);'
#: What replaces it: the element made, not appended; a comment of the same length in place of the call.
KEPT_OUT = 'let o=x("meta",{name:"color-scheme"});/*not appended: theme_js.py*/'
#: The theme's content mount: every table without a class, each wrapped in a scrolling frame at each page view.
FIND_TABLES = 'M("table:not([class])",e).map(i=>ti(i))'
#: What replaces it: a selector that matches nothing (padded to the same length): hooks/table_frames.py writes
#: the frames into every page, so the theme would only move each table out and back in, restyling the article.
NO_TABLES = 'M("table:not(table)  ",e).map(i=>ti(i))'


def edit_bundle(site_dir: Path) -> Path:
    """Make both edits (:data:`APPEND` → :data:`KEPT_OUT`, :data:`FIND_TABLES` → :data:`NO_TABLES`) in the built
    theme bundle; return its path.

    Raises ``ValueError`` (the build fails) when there is not exactly one bundle or it does not hold each
    statement once (:func:`hooks.theme_patch.replace_once`).
    """
    return replace_once(site_dir / "assets/javascripts", "bundle.*.min.js", [
        (APPEND, KEPT_OUT, "the colour-scheme meta element's append"),
        (FIND_TABLES, NO_TABLES, "the content mount's table selector"),
    ])
