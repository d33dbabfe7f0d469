"""``python -m calc``: the command line, built from :data:`calc.api.COMMANDS`.

Every option is a command parameter spelled with dashes (``--micro-batch``).
``plan`` and ``search`` take a positional SPEC.json instead (see :mod:`calc.spec`);
its fields are named ``section.field`` in error messages (``model.kv_heads``). A
parameter of kind ``spec`` is a positional file too, read whole (``compare A.json B.json``).
Output is a short readable summary with units, or with ``--json`` one JSON
object. Bad input: exit status 2 and one line on stderr naming the parameter.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .api import COMMANDS, Command, evaluate, format_field, format_result
from .errors import CalcError
from .spec import flatten, parse_text, qualified

__all__ = ["main"]

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _add_command(sub: argparse._SubParsersAction, cmd: Command) -> None:
    p = sub.add_parser(cmd.name, help=cmd.title, description=cmd.title)
    fields = cmd.spec_fields
    if fields:
        sections = ", ".join(dict.fromkeys(fields.values()))
        p.add_argument("spec", metavar="SPEC.json", help=f"a JSON object with the sections {sections}")
    for param in cmd.params:
        if param.section:
            continue
        if param.kind == "spec":
            p.add_argument(param.name, metavar=param.name.upper() + ".json", help=param.label)
            continue
        flag = "--" + param.name.replace("_", "-")
        if param.kind == "flag":
            p.add_argument(flag, dest=param.name, action="store_const", const="true", help=param.label)
        else:
            extra = f" (default {param.default})" if param.default is not None else ""
            p.add_argument(flag, dest=param.name, metavar="VALUE", help=param.label + extra)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m calc", description="Parallelism Atlas calculations.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for cmd in COMMANDS.values():
        _add_command(sub, cmd)
    return parser


def _cell(name: str, value: object) -> str:
    """A table cell; a nested dict (such as a plan's parallel degrees) as ``k=v`` pairs."""
    if isinstance(value, dict):
        return " ".join(f"{k}={format_field(k, v)}" for k, v in value.items() if not isinstance(v, (dict, list, tuple)))
    return format_field(name, value)


def _nested_lines(value: object) -> list[str]:
    """A nested result as indented lines: a dict as ``name  value``; a list of dicts as a table."""
    if isinstance(value, dict) and value:
        width = max(len(k) for k in value)
        return [f"  {k:<{width}}  {format_field(k, v)}" for k, v in value.items()]
    if isinstance(value, (list, tuple)) and value and all(isinstance(row, dict) for row in value):
        keys = [k for k in value[0] if not isinstance(value[0][k], (list, tuple))]
        cells = [keys] + [[_cell(k, row.get(k)) for k in keys] for row in value]
        widths = [max(len(r[i]) for r in cells) for i in range(len(keys))]
        return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    return [f"  {format_field('value', value)}"] if value not in (None, "", [], {}) else []


def render_text(cmd: Command, result: dict) -> str:
    """The readable summary: one ``label  value unit`` line per result; nested results indented below.

    A command that prints a file format instead (``export``) says so in ``Command.render``.
    """
    if cmd.render is not None:
        return cmd.render(result)
    width = max(len(r.label) for r in cmd.results)
    lines = []
    for r in cmd.results:
        value = result[r.key]
        if r.unit == "json":
            lines.append(r.label)
            lines.extend(_nested_lines(value))
        else:
            lines.append(f"{r.label:<{width}}  {format_result(r.unit, value)}")
    return "\n".join(lines)


def _read(path: str) -> str:
    """The SPEC file's text (the one place ``calc`` reads a file)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise CalcError("SPEC.json", f"a readable UTF-8 file ({e.__class__.__name__})", path) from None


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cmd = COMMANDS[args.command]
    fields = cmd.spec_fields
    raw = {p.name: getattr(args, p.name) for p in cmd.params
           if not p.section and getattr(args, p.name) is not None}
    try:
        if fields:
            raw.update(flatten(parse_text(_read(args.spec)), fields))
        raw.update({p.name: _read(raw[p.name]) for p in cmd.params if p.kind == "spec"})
        result = evaluate(cmd.name, raw)
    except CalcError as e:
        e.param = qualified(e.param, fields)
        sys.stderr.write(f"python -m calc {cmd.name}: error: {e}\n")
        return EXIT_USAGE
    print(json.dumps(result) if args.json else render_text(cmd, result))
    return 0
