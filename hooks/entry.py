"""The MkDocs hook module (the only one named in ``mkdocs.yml``): thin on purpose.

MkDocs imports a hook file once and never reloads it, nor what it imports; it
also restores ``sys.path`` after importing it. So every build, in ``on_config``,
this module puts the project root on ``sys.path``, drops ``calc`` and the other
``hooks`` modules from ``sys.modules`` and imports them afresh: an edit under
``calc/`` or ``hooks/`` shows on the next rebuild of ``mkdocs serve``. The
per-build state lives in :data:`_build` and is reset in ``on_post_build``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parent.parent
_build: dict = {}


def _fresh_import():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    # Packages go too: `from . import x` would otherwise reuse the old submodule
    # still set as an attribute of the old package object.
    for name in list(sys.modules):
        if name in ("calc", "hooks") or name.startswith(("calc.", "hooks.")):
            del sys.modules[name]
    return importlib.import_module("hooks.site")


def on_config(config):
    _build.clear()
    _build["site"] = _fresh_import()
    _build["state"] = _build["site"].BuildState.create(config, ROOT)
    return config


def on_files(files, config):
    return _build["site"].on_files(_build["state"], files, config)


def on_page_markdown(markdown, page, config, files):
    try:
        return _build["site"].on_page_markdown(_build["state"], markdown, page)
    except _build["site"].MarkerError as e:
        raise PluginError(str(e)) from None


def on_page_content(html, page, config, files):
    try:
        return _build["site"].on_page_content(_build["state"], html, page)
    except (_build["site"].MathError, _build["site"].QuizError, _build["site"].MarkerError) as e:
        raise PluginError(str(e)) from None


def on_build_error(error):
    if "state" in _build:
        _build["site"].close(_build["state"])
    _build.clear()


def on_post_build(config):
    try:
        _build["site"].on_post_build(_build["state"], config)
    finally:
        _build.clear()
