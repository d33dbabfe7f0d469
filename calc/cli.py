"""``python -m calc``: the command line, built from :data:`calc.api.COMMANDS`.

Every option is a command parameter spelled with dashes (``--micro-batch``).
``plan`` and ``search`` take a positional SPEC.json instead (see :mod:`calc.spec`);
its fields are named ``section.field`` in error messages (``model.kv_heads``). A
parameter of kind ``spec`` is a positional file too, read whole (``compare A.json B.json``).
Output is a short readable summary with units, or with ``--json`` one strict JSON
object (no NaN, no Infinity). Bad input: exit status 2 and one line on stderr naming
the parameter, with any control character in it escaped.

Decided behaviours: an option given twice keeps its last value (a later option
overrides an earlier one); options are spelled in full (no abbreviations, which a
new parameter could make ambiguous); when the reader of the output goes away early
(``--json | head -c1``) the command stops quietly with exit status 1.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence

from . import jsontext
from .api import COMMANDS, Command, evaluate, format_field, format_result
from .errors import CalcError, show_name
from .spec import MAX_SPEC_CHARS, flatten, parse_text, qualified

__all__ = ["main"]

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 1

#: argparse's own messages about one option ("argument --ranks: expected one argument").
_ARGUMENT_RE = re.compile(r"argument (?P<option>--[a-z0-9-]+): (?P<message>.*)")
_IGNORED_RE = re.compile(r"ignored explicit argument (?P<value>.*)")


def _one_line(text: str) -> str:
    """``text`` with every character that is not printable escaped (newlines, terminal escape codes)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _fail(prog: str, message: object) -> int:
    sys.stderr.write(_one_line(f"{prog}: error: {message}") + "\n")
    return EXIT_USAGE


def _param_of(option: str) -> str:
    """``--micro-batch`` or ``--micro-batch=8`` → ``micro_batch``."""
    return option.lstrip("-").split("=", 1)[0].replace("-", "_")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr naming the parameter, and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        m = _ARGUMENT_RE.fullmatch(message)
        if m:
            option, text = m["option"], m["message"]
            name = _param_of(option)
            ignored = _IGNORED_RE.fullmatch(text)
            if ignored:
                message = str(CalcError(name, f"the flag {option} alone (it takes no value)", ignored["value"].strip("'")))
            elif text == "expected one argument":
                message = str(CalcError(name, f"followed by one value ({option} VALUE, or {option}=VALUE when "
                                        "the value starts with -)", ""))
            else:
                message = f"{show_name(name)}: {text}"
        raise SystemExit(_fail(self.prog, message))


def _add_command(sub: argparse._SubParsersAction, cmd: Command) -> None:
    p = sub.add_parser(cmd.name, help=cmd.title, description=cmd.title, allow_abbrev=False)
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
    parser = _Parser(prog="python -m calc", description="Parallelism Atlas calculations.", allow_abbrev=False)
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
    return [f"  {format_field('value', value)}"] if value not in (None, "", [], {}) else ["  none"]


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
    """The SPEC file's text (the one place ``calc`` reads a file), read no further than the size limit."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(MAX_SPEC_CHARS + 1)  # one more: parse_text refuses it by its length
    except (OSError, UnicodeDecodeError) as e:
        raise CalcError("SPEC.json", f"a readable UTF-8 file ({e.__class__.__name__})", path) from None


def _leftover(cmd: Command, argv: Sequence[str], extra: list[str]) -> CalcError:
    """What argparse could not place, as an error naming a parameter of ``cmd``.

    An unknown option names itself; a stray value names the option before it: a flag takes
    no value (``--gated-mlp true``), and an option takes one (``--ranks 8 9``).
    """
    token = extra[0]
    names = sorted(p.name for p in cmd.params if not p.section)
    known = ", ".join((["SPEC.json (its fields)"] if cmd.spec_fields else []) + names + ["json"])
    if token.startswith("--"):
        return CalcError(_param_of(token), f"a parameter of {cmd.name} ({known})", token)
    args = list(argv)
    at = args.index(token, args.index(cmd.name) + 1) if token in args else len(args)
    before = next((a for a in reversed(args[:at]) if a.startswith("--")), None)
    flags = {"--json"} | {"--" + p.name.replace("_", "-") for p in cmd.params if p.kind == "flag"}
    if before is None:
        if cmd.spec_fields:
            return CalcError("SPEC.json", "one file name", token)
        return CalcError("arguments", "options of the form --name VALUE", token)
    if before in flags:
        return CalcError(_param_of(before), f"the flag {before} alone (it takes no value)", token)
    return CalcError(_param_of(before), f"one value ({before.split('=', 1)[0]} VALUE)", token)


def _write(text: str) -> int:
    """Print ``text``; if the reader has gone (a closed pipe), stop quietly with exit status 1."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # Python would report the pipe again when it flushes stdout at exit: point stdout at nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args, extra = build_parser().parse_known_args(argv)
    cmd = COMMANDS[args.command]
    prog = f"python -m calc {cmd.name}"
    if extra:
        return _fail(prog, _leftover(cmd, argv, extra))
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
        return _fail(prog, e)
    return _write(jsontext.dumps(result) if args.json else render_text(cmd, result))
