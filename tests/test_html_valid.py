"""Every built page is valid HTML (html-validate from npm), outside a committed, reasoned filter list."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.support import ROOT, time_limit

pytestmark = pytest.mark.build

VALIDATOR = ROOT / "node_modules" / ".bin" / "html-validate"
CONFIG = ROOT / "tests" / "htmlvalidate.json"
FILTER = json.loads((ROOT / "tests" / "html_validate_filter.json").read_text())


def validate(paths, tmp_dir) -> list[dict]:
    """html-validate's messages for the given files: [{file, ruleId, selector, message}]."""
    # Written to a file: node cuts a large stdout short when it exits.
    report = tmp_dir / "html-validate.json"
    proc = subprocess.run(
        [str(VALIDATOR), "--config", str(CONFIG), "--formatter", f"json={report}", *map(str, paths)],
        capture_output=True, text=True, timeout=time_limit(600),
    )
    if proc.returncode not in (0, 1) or not report.is_file():
        pytest.fail(f"html-validate did not run: {proc.returncode} {proc.stderr[-2000:]}")
    return [
        {"file": f["filePath"], "ruleId": m["ruleId"], "selector": m.get("selector") or "", "message": m["message"]}
        for f in json.loads(report.read_text())
        for m in f["messages"]
    ]


def filtered_by(entry: dict, message: dict) -> bool:
    return entry["rule"] == message["ruleId"] and bool(re.search(entry["selector"], message["selector"]))


def filtered(message: dict) -> bool:
    return any(filtered_by(e, message) for e in FILTER)


def test_filter_entries_have_reasons():
    """Every exclusion names a rule, a selector and a written reason."""
    for entry in FILTER:
        assert entry["rule"] and entry["selector"] and len(entry["reason"]) > 40


def test_every_page_is_valid_html(built_site, tmp_path):
    """Zero html-validate errors on any built page, except filtered ones."""
    pages = sorted(built_site.rglob("*.html"))
    assert pages
    messages = validate(pages, tmp_path)
    assert [m for m in messages if not filtered(m)] == []
    unused = [e["rule"] for e in FILTER if not any(filtered_by(e, m) for m in messages)]
    assert unused == [], "remove filter entries that no longer match anything"


def test_validator_catches_invalid_html(tmp_path):
    """The validator and the filter do not hide a real error (a duplicate id)."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html lang="en"><head><title>x</title></head><body><p id="a"></p><p id="a"></p></body></html>')
    errors = [m for m in validate([page], tmp_path) if not filtered(m)]
    assert any(m["ruleId"] == "no-dup-id" for m in errors)
