"""Three edits to the theme's bundle, each removing work it does on the main thread at every page load (issue 15).

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

**Compiled off the main thread.** V8 compiles a script's functions lazily: each is pre-parsed while the script
streams in and compiled on the main thread the first time it is called. The bundle calls most of its functions
while it starts (RxJS and every component's mount), so that compiling is main-thread time inside its long task.
The comment ``//# allFunctionsCalledOnLoad`` on a script's first line (V8's explicit compile hints, Chrome 136 and
later; v8.dev/blog/explicit-compile-hints) has V8 compile every function eagerly, on the streaming thread while
the file downloads. Measured (README, "What a page loads"): the bundle's evaluation task, Chromium's trace,
unthrottled, median of 6 alternating loads: ``/calculators/`` 58 → 44 ms, ``/scope/`` 92 → 49 ms. The hint is a
new first line, so the source map gets one empty line (a leading ``;`` in its ``mappings``) and still points
right. A browser without the hint reads a comment.
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


#: V8's explicit compile hint for a whole file; it must be the file's first line.
COMPILE_HINT = "//# allFunctionsCalledOnLoad\n"
#: How the theme's bundle (esbuild's output) begins: the hint goes before it.
BUNDLE_START = '"use strict";(()=>{'
#: The source map's field that lists the generated lines, ``;`` between lines.
MAPPINGS = '"mappings": "'


def edit_bundle(site_dir: Path) -> Path:
    """Make the two same-length edits (:data:`APPEND` → :data:`KEPT_OUT`, :data:`FIND_TABLES` →
    :data:`NO_TABLES`) in the built theme bundle and put :data:`COMPILE_HINT` before it (:func:`hint_compile`);
    return its path.

    Raises ``ValueError`` (the build fails) when there is not exactly one bundle or it does not hold each
    statement once (:func:`hooks.theme_patch.replace_once`).
    """
    bundle = replace_once(site_dir / "assets/javascripts", "bundle.*.min.js", [
        (APPEND, KEPT_OUT, "the colour-scheme meta element's append"),
        (FIND_TABLES, NO_TABLES, "the content mount's table selector"),
    ])
    hint_compile(bundle)
    return bundle


def hint_compile(bundle: Path) -> None:
    """Make :data:`COMPILE_HINT` the bundle's first line and shift its source map (``<bundle>.map``, when the
    theme ships one) down one line, so that every mapping still points at its code.

    A rebuild that kept the file finds the hint there and changes nothing. Raises ``ValueError`` when the bundle
    does not begin with :data:`BUNDLE_START` or its map does not hold :data:`MAPPINGS` once.
    """
    text = bundle.read_text(encoding="utf-8")
    if text.startswith(COMPILE_HINT):
        return
    if not text.startswith(BUNDLE_START):
        raise ValueError(f"{bundle.name} does not begin with {BUNDLE_START!r}: re-check hooks/theme_js.py "
                         f"against the theme before putting the compile hint first")
    source_map = bundle.with_name(bundle.name + ".map")
    if source_map.is_file():
        data = source_map.read_text(encoding="utf-8")
        if data.count(MAPPINGS) != 1:
            raise ValueError(f"{source_map.name} does not hold {MAPPINGS!r} once: re-check hooks/theme_js.py")
        source_map.write_text(data.replace(MAPPINGS, MAPPINGS + ";"), encoding="utf-8")
    bundle.write_text(COMPILE_HINT + text, encoding="utf-8")
