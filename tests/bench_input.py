"""Timing of bad input (issue 11, §5): how long calc takes to refuse a value far past every limit.

``bench_bad_input()`` returns the slowest answer, in seconds, to: a 1 MB value of each kind of
input through ``calc.api.evaluate`` and through the page's ``evaluate_for_page``; a 100 kB value on
the command line and a 999,000-character SPEC value (each a whole ``python -m calc`` process, start-up
included); ``plan /dev/zero``. The target is under a second each; the tests assert the answers,
this measures their time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from calc.api import COMMANDS, evaluate, evaluate_for_page
from calc.errors import CalcError
from tests.support import ROOT
from tests.test_command import HUGE, KINDS


def _best(run, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def _refused(command: str, raw: dict) -> None:
    try:
        evaluate(command, raw)
    except CalcError:
        return
    raise AssertionError(f"{command} accepted {list(raw)}")


def _cli(*argv: str) -> None:
    p = subprocess.run([sys.executable, "-m", "calc", *argv], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 2, p.stderr[-500:]


def bench_bad_input() -> dict:
    """Slowest refusal per entry point, in seconds (best of 3 for each value)."""
    api, page = {}, {}
    for kind, (command, name) in sorted(KINDS.items()):
        for shape, value in HUGE.items():
            raw = {**COMMANDS[command].example, name: value}
            api[f"{kind}/{shape}"] = _best(lambda: _refused(command, raw))
            text = json.dumps(raw)
            page[f"{kind}/{shape}"] = _best(lambda: evaluate_for_page(command, text))
    worst_api, worst_page = max(api, key=api.get), max(page, key=page.get)
    with tempfile.TemporaryDirectory(prefix="atlas-bench-") as tmp:
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps({"model": {"layers": 2}, "hardware": {"device_memory": "9" * 999_000}}))
        figures = {
            "evaluate_1MB_slowest_s": api[worst_api], "evaluate_1MB_slowest_input": worst_api,
            "evaluate_for_page_1MB_slowest_s": page[worst_page], "evaluate_for_page_1MB_slowest_input": worst_page,
            "cli_100kB_argv_s": _best(lambda: _cli("allreduce", "--payload", "9" * 100_000 + "x")),
            "cli_spec_999000_chars_s": _best(lambda: _cli("plan", str(spec))),
        }
    if Path("/dev/zero").exists():
        figures["cli_plan_dev_zero_s"] = _best(lambda: _cli("plan", "/dev/zero"))
    return figures


if __name__ == "__main__":
    for key, value in bench_bad_input().items():
        print(f"{key}: {value}")
