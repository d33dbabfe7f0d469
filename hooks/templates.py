"""HTML from Jinja templates in ``overrides/partials/calc/``, through the theme's environment.

As Material renders its own partials, the hooks take the environment MkDocs builds for the
theme (``config.theme.get_env()``: the ``custom_dir`` first, then the theme's templates), so an
override of a partial works the same way. :func:`use` binds it in ``on_config`` and
:func:`release` drops it after the build (the hooks are imported afresh for every build).

A template that is not found (a renderer naming a file that is not there, or a template including
one) raises :class:`TemplateMissing`, a :class:`~hooks.markers.MarkerError`: the build fails naming
the page, the marker and the template, as for any bad marker.

The templates escape with :func:`attr` (the ``esc`` filter) inside ``{% autoescape true %}``: the
same bytes ``html.escape`` gives, and anything left unfiltered is still escaped.
"""

from __future__ import annotations

from html import escape

from jinja2 import TemplateNotFound
from markupsafe import Markup

from .markers import MarkerError

__all__ = ["TemplateMissing", "attr", "use", "release", "render"]

_env: list = []  #: the build's one environment (a list, so the module holds no rebinding)


def attr(value: object) -> str:
    """``value`` as text safe inside an HTML attribute or element (``& < > " '`` escaped).

    >>> attr('a "b" <c>')
    'a &quot;b&quot; &lt;c&gt;'
    """
    return escape(str(value), quote=True)


def use(config) -> None:
    """Bind the theme's environment of ``config`` (a validated MkDocsConfig) for this build."""
    env = config.theme.get_env()
    env.filters["esc"] = lambda value: Markup(attr(value))
    env.filters["num"] = lambda x: f"{x:g}"
    _env[:] = [env]


def release() -> None:
    _env.clear()


class TemplateMissing(MarkerError):
    """A template a renderer needs is not among the theme's templates."""


def render(template: str, **context) -> str:
    """Render ``partials/calc/TEMPLATE`` with ``context``; raise :class:`TemplateMissing` naming what is not found."""
    if not _env:
        raise RuntimeError("no theme environment: hooks.templates.use(config) runs in on_config")
    env = _env[0]
    try:
        return env.get_template(f"partials/calc/{template}").render(**context)
    except TemplateNotFound as e:
        searched = ", ".join(getattr(env.loader, "searchpath", ()))
        raise TemplateMissing(f"template {e.name} not found (searched: {searched})") from None
