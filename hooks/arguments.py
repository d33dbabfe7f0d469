"""A marker's arguments, read the one way every renderer reads them.

- :func:`command`: the command a marker names (its one word), or one message for every kind;
- :func:`no_command`: kinds that take none say so, with their usage;
- :func:`inputs`: the options left after the renderer took its own, as the command's inputs; each
  name must be one of the command's parameters (so a typo fails the build, whatever the kind), and
  ``inputs=example`` starts from the command's page example.
"""

from __future__ import annotations

from calc.api import COMMANDS, Command

from .markers import Marker, MarkerError

__all__ = ["command", "no_command", "inputs"]


def command(marker: Marker) -> Command:
    """The command named by the marker's one word.

    >>> from hooks.markers import MARKER_RE, parse
    >>> command(parse(MARKER_RE.search("<!-- calc:value batch -->"))).name
    'batch'
    """
    if len(marker.words) != 1 or marker.words[0] not in COMMANDS:
        named = repr(marker.words[0]) if len(marker.words) == 1 else f"{len(marker.words)} words"
        raise MarkerError(f"needs one command name, got {named} (known: {', '.join(COMMANDS)})")
    return COMMANDS[marker.words[0]]


def no_command(marker: Marker, usage: str) -> None:
    """Refuse positional words for a kind that takes none; ``usage`` is its syntax after the kind."""
    if marker.words:
        raise MarkerError(f"takes no command name: calc:{marker.kind} {usage}".rstrip())


def inputs(marker: Marker, cmd: Command, base: dict[str, str] | None = None) -> dict[str, str]:
    """The remaining options as ``cmd``'s inputs (consumed here), over ``base`` or, with ``inputs=example``,
    over the command's page example. A name that is not a parameter of ``cmd`` is a CalcError naming it."""
    start = marker.take("inputs")
    if start not in (None, "example"):
        raise MarkerError(f"inputs must be example, got {start!r}")
    given = dict(marker.options)
    marker.options.clear()
    for name in given:
        cmd.param(name)
    return {**(dict(cmd.example) if start else base or {}), **given}
