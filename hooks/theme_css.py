"""The theme's palette stylesheet without its "switching" rule, which restyles every element at load (issue 15).

Material (9.7) mounts its light/dark toggle on every page load and, even when nothing changes, sets
``data-md-color-switching`` on ``<body>``, reads the header's computed style (for the theme-color meta
tag) and removes the attribute a moment later. Its palette stylesheet has the one rule that names that
attribute, ``[data-md-color-switching] *, … :after, … :before {transition-duration: 0ms !important}``,
so each of the two changes makes the browser recompute the style of every element of the page, the
first at once inside the theme's script: on the atlas page Lighthouse counted 1.23 s of style and
layout with it and 0.80 s without it (mobile preset, medians of 3; README, "What a page loads").

Without the rule no selector names the attribute and setting it costs nothing. Its job, no colour
fading while the reader switches between light and dark (the header, links and buttons have colour
transitions; axe caught a button mid-fade), is done by ``docs/assets/js/palette.mjs`` with a rule of
``atlas.css`` on an attribute of its own, set only when the reader uses the toggle.
"""

from __future__ import annotations

from pathlib import Path

from .theme_patch import replace_once

#: Left in its place, so a rebuild that kept the file (``mkdocs serve --dirty``) finds it done.
NOTE = "/* the switching rule: dropped by hooks/theme_css.py */"
#: The rule as the theme's minified palette stylesheet writes it (``assets/stylesheets/palette.*.min.css``).
RULE = ("[data-md-color-switching] *,[data-md-color-switching] :after,[data-md-color-switching] :before"
        "{transition-duration:0ms!important}")


def drop_switching_rule(site_dir: Path) -> Path:
    """Remove :data:`RULE` from the built palette stylesheet; return its path.

    Raises ``ValueError`` (the build fails) when there is not exactly one palette stylesheet or it does
    not hold the rule once (:func:`hooks.theme_patch.replace_once`).
    """
    return replace_once(site_dir / "assets/stylesheets", "palette.*.min.css", [(RULE, NOTE, "the theme's switching rule")])
