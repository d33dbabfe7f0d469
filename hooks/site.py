"""What the hooks do, event by event; :mod:`hooks.entry` delegates here.

Renderers: :mod:`hooks.tables` (values, tables), :mod:`hooks.widgets`
(calculators). Assets: :mod:`hooks.assets` (npm files served by the site).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import assets, content, csp, reproducible, tables, widgets
from .markers import MarkerError, Renderer, replace_markers

__all__ = ["BuildState", "MarkerError", "on_files", "on_page_markdown", "on_post_build"]


@dataclass(slots=True)
class BuildState:
    """Everything one build needs; made in ``on_config``, dropped after ``on_post_build``."""

    root: Path
    site_dir: Path
    renderers: dict[str, Renderer] = field(default_factory=dict)

    @classmethod
    def create(cls, config, root: Path) -> "BuildState":
        reproducible.fix_build_date(root)
        renderers: dict[str, Renderer] = {}
        for module in (tables, widgets, content):
            clash = renderers.keys() & module.RENDERERS.keys()
            assert not clash, f"marker kinds registered twice: {clash}"
            renderers.update(module.RENDERERS)
        return cls(root=root, site_dir=Path(config["site_dir"]), renderers=renderers)


def on_files(state: BuildState, files, config):
    return assets.add_vendor_files(files, config, state.root)


def on_page_markdown(state: BuildState, markdown: str, page) -> str:
    return replace_markers(markdown, state.renderers, page.file.src_uri)


def on_post_build(state: BuildState, config) -> None:
    csp.apply(state.site_dir)
