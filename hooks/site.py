"""What the hooks do, event by event; :mod:`hooks.entry` delegates here.

Renderers take their command and inputs through :mod:`hooks.arguments` and write HTML from the
theme's Jinja templates through :mod:`hooks.templates`: :mod:`hooks.tables` (values, tables),
:mod:`hooks.content` (cases, schedules, commands, names, parameter counts), :mod:`hooks.widgets`
(calculators), :mod:`hooks.views` (the tool pages: atlas, memory, timeline, planner), :mod:`hooks.modes` (the atlas's training / serving switch),
:mod:`hooks.accuracy` (the planner against measured runs). Assets: :mod:`hooks.assets` (npm files served by the site), :mod:`hooks.runtime`
(Pyodide and the ``calc`` wheel for the page's worker), :mod:`hooks.quiz` (questions with
options as quizzes), :mod:`hooks.math` (formulas rendered by KaTeX at build time),
:mod:`hooks.theme_css`, :mod:`hooks.theme_js` and :mod:`hooks.table_frames` (the theme's start-up costs removed), :mod:`hooks.csp`, :mod:`hooks.reproducible`, :mod:`hooks.search_index` (the search index fetched on first use).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import (accuracy, assets, content, csp, math, modes, quiz, reproducible, runtime, search_index, table_frames, tables,
               theme_css, theme_js, templates, views, widgets)
from .markers import MarkerError, Renderer, replace_markers
from .math import MathError
from .quiz import QuizError

__all__ = ["BuildState", "all_renderers", "MarkerError", "MathError", "QuizError", "on_files", "on_page_markdown", "on_page_content",
           "on_post_build", "close"]


@dataclass(slots=True)
class BuildState:
    """Everything one build needs; made in ``on_config``, dropped after ``on_post_build``."""

    root: Path
    site_dir: Path
    renderers: dict[str, Renderer] = field(default_factory=dict)
    runtime: dict = field(default_factory=dict)  #: the manifest written for the page's worker
    katex: math.Katex | None = None  #: the build's one KaTeX process (started at the first formula)
    restore_date: Callable[[], None] = field(default=lambda: None)  #: undoes the build's SOURCE_DATE_EPOCH

    @classmethod
    def create(cls, config, root: Path) -> "BuildState":
        templates.use(config)
        return cls(root=root, site_dir=Path(config["site_dir"]), renderers=all_renderers(), katex=math.Katex(root),
                   restore_date=reproducible.fix_build_date(root))


def all_renderers() -> dict[str, Renderer]:
    """Every marker kind and its renderer, from the renderer modules; a kind registered twice is a bug."""
    renderers: dict[str, Renderer] = {}
    for module in (tables, widgets, content, views, accuracy, modes):
        clash = renderers.keys() & module.RENDERERS.keys()
        assert not clash, f"marker kinds registered twice: {clash}"
        renderers.update(module.RENDERERS)
    return renderers


def on_files(state: BuildState, files, config):
    files = assets.add_vendor_files(files, config, state.root)
    state.runtime = runtime.add_runtime_files(files, config, state.root)
    return files


def on_page_markdown(state: BuildState, markdown: str, page) -> str:
    return replace_markers(markdown, state.renderers, page.file.src_uri)


def on_page_content(state: BuildState, html: str, page) -> str:
    html = quiz.render_page(html, page.file.src_uri)  # first: options and answers may hold math
    html = math.render_page(html, state.katex, page.file.src_uri)
    return table_frames.frame_tables(html, page.file.src_uri)


def on_post_build(state: BuildState, config) -> None:
    close(state)
    if (state.site_dir / search_index.INDEX).is_file():  # none when search is off, or nothing was built
        search_index.defer_documents(state.site_dir)
    if (state.site_dir / "assets/stylesheets").is_dir():  # none when nothing was built
        theme_css.drop_switching_rule(state.site_dir)
    if (state.site_dir / "assets/javascripts").is_dir():
        theme_js.edit_bundle(state.site_dir)
    csp.apply(state.site_dir)


def close(state: BuildState) -> None:
    """End the build's helper processes, drop its templates and its build date (also when the build fails)."""
    state.restore_date()
    templates.release()
    if state.katex is not None:
        state.katex.close()
