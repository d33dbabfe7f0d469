"""calc/page.py's launch and compare requests, and the calc.views functions they answer with."""

from __future__ import annotations

import json
import math

import pytest

from calc.api import COMMANDS, run
from calc.commands.export import launches
from calc.commands.plan import _planned  # with page_request: calc's modules of one import (test_hooks_entry re-imports)
from calc.errors import CalcError
from calc.export import FRAMEWORKS, TARGETS, export
from calc.page import _views as page_views, page_request
from calc.spec import qualified
from calc.views import MAX_PIN_CHARS, atlas_defaults, compare_view, pinned_inputs, plan_spec


def ask(**request) -> dict:
    return json.loads(page_request(json.dumps(request)))


def test_launch_answers_every_framework_as_export_does():
    """{"op": "launch"}: each framework's text is `export`'s, or its refusal's one line, named as the CLI names it."""
    fields = COMMANDS["plan"].spec_fields
    inputs = {**atlas_defaults(), "precision": "bf16-adam", "overlap_grad_reduce": "false"}
    answer = ask(op="launch", inputs=inputs)
    assert answer["ok"] and list(answer["launch"]) == list(FRAMEWORKS)
    kinds = []
    for name, one in answer["launch"].items():
        try:
            cli = run("export", {**inputs, "to": name})[1]
        except CalcError as e:
            e.param = qualified(e.param, fields)
            assert one == {"ok": False, "param": e.param, "message": str(e)}, name
            assert "\n" not in one["message"] and f"for {TARGETS[name][0].name}" in one["message"]
            kinds.append("refused")
        else:
            assert one == {"ok": True, "text": cli["text"], "targets": cli["targets"]}, name
            kinds.append("text")
    assert kinds == ["text", "refused", "text"]  # torchtitan's DDP runs alone: zero must be 3 here


def test_launch_of_a_plan_that_does_not_fit_is_refused_by_every_framework():
    """A plan over the GPU's memory is not a plan to run: every framework says so in one line."""
    answer = ask(op="launch", inputs={**atlas_defaults(), "device_memory": "24GiB"})
    assert all(not one["ok"] and one["param"] == "parallel" and "fits in its memory" in one["message"]
               for one in answer["launch"].values())


def test_launch_with_a_wrong_input_is_the_plans_error():
    """Wrong inputs: the same {"ok": false} answer naming the field as `evaluate` gives."""
    answer = ask(op="launch", inputs={**atlas_defaults(), "tensor_parallel": "0"})
    assert answer == {"ok": False, "param": "tensor_parallel",
                      "message": "tensor_parallel must be a whole number >= 1, got 0"}
    assert ask(op="launch", inputs="x")["param"] == "inputs"


def test_launches_plans_once_and_matches_export():
    """launches() is export() of one plan for every framework (the launch panel's source)."""
    values, _ = run("plan", atlas_defaults())
    out = launches(values)
    from calc.commands.plan import _spec_hardware, _spec_model, _spec_parallel
    from calc.plan import plan
    m = _spec_model(values)
    p = plan(m, values["micro_batch"], values["global_batch"], _spec_hardware(values), _spec_parallel(values),
             values["precision"], values["tokens"])
    assert out["megatron"]["text"] == export("megatron", p, m, values["precision"]).text


def test_compare_is_calc_compare_of_the_pinned_and_the_current_spec():
    """{"op": "compare"}: the pin (the atlas's query string) is plan A, the inputs plan B; values as `compare`."""
    b = {**atlas_defaults(), "tensor_parallel": "4", "pipeline_parallel": "16"}
    answer = ask(op="compare", pin="", inputs=b)
    _, expected = run("compare", {"a": plan_spec(atlas_defaults()), "b": plan_spec(b)})
    assert answer["ok"] and answer["values"]["faster"] == json.dumps(expected["faster"])
    assert answer["values"]["step_time"] == json.dumps(expected["step_time"])
    assert answer["text"]["reason"] == expected["reason"]
    assert set(answer["view"]["tables"]) == {"compare-summary", "compare-settings", "compare-step", "compare-memory",
                                              "compare-communications"}
    pinned = ask(op="compare", pin="tensor_parallel=4&pipeline_parallel=16", inputs=b)
    assert pinned["values"]["settings"] == "[]" and pinned["values"]["faster"] == '"neither"'


@pytest.mark.parametrize("pin,param,rule", [
    ("evil=1", "pin", "names of its fields"),
    ("x" * (MAX_PIN_CHARS + 1), "pin", f"at most {MAX_PIN_CHARS} characters"),
    ("zero=1&" * 200, "pin", "fields"),
    (None, "pin", "query string"),
    (7, "pin", "query string"),
    ("tensor_parallel=x", "a.parallel.tensor", "whole number"),
    ("layers=12", "model.layers", "the same in A and B"),
])
def test_a_wrong_pin_is_one_error_naming_it(pin, param, rule):
    """A pin is bounded and read as the atlas's own query string; its values are checked as plan A's."""
    answer = ask(op="compare", pin=pin, inputs=atlas_defaults())
    assert answer["ok"] is False and answer["param"] == param and rule in answer["message"], answer


def test_pinned_inputs_keep_the_last_of_a_repeated_name_and_default_the_rest():
    """A name given twice keeps its last value; fields not named keep the atlas's defaults; at the bound it is read."""
    inputs = pinned_inputs("zero=1&zero=2&layers=")
    assert inputs["zero"] == "2" and inputs["layers"] == "" and inputs["heads"] == atlas_defaults()["heads"]
    longest = "layers=" + "9" * (MAX_PIN_CHARS - 7)
    assert len(longest) == MAX_PIN_CHARS and pinned_inputs(longest)["layers"] == "9" * (MAX_PIN_CHARS - 7)
    with pytest.raises(CalcError, match="at most"):
        pinned_inputs(longest + "9")


def test_plan_spec_is_what_the_cli_reads():
    """The SPEC of the atlas's inputs evaluates, through the CLI's flattening, to the same plan."""
    from calc.spec import flatten
    inputs = {**atlas_defaults(), "tensor_parallel": "4", "pipeline_parallel": "16", "stage_layers": ""}
    flat = flatten(plan_spec(inputs), COMMANDS["plan"].spec_fields)
    assert run("plan", flat)[1] == run("plan", inputs)[1]


def test_compare_view_marks_the_rows_that_differ():
    """Rows whose A and B differ are listed in each table's "marked"; equal ones are not."""
    b = {**atlas_defaults(), "tensor_parallel": "4", "pipeline_parallel": "16"}
    _, result = run("compare", {"a": plan_spec(atlas_defaults()), "b": plan_spec(b)})
    tables = compare_view(result)["tables"]
    step = tables["compare-step"]
    assert step["marked"] == [i for i, r in enumerate(result["step_time"]) if r["a_s"] != r["b_s"]]
    assert len(step["rows"]) == len(result["step_time"])
    memory = tables["compare-memory"]
    capacity = [i for i, r in enumerate(result["memory"]) if r["term"] == "GPU memory"]
    assert capacity and capacity[0] not in memory["marked"]  # the same GPUs: not a difference
    assert [r[0] for r in tables["compare-settings"]["rows"]] == ["parallel.tensor", "parallel.pipeline"]
    assert tables["compare-settings"]["marked"] == [0, 1]


def test_the_atlas_plans_once_per_input():
    """The atlas's answer and its launch settings come from one plan (calc.commands.plan.planned keeps the
    last): each new input plans once, its launch settings reuse that plan and follow the inputs."""
    _planned.cache_clear()  # another test may have planned these inputs last
    for n, interleave in enumerate(("1", "2", "1"), start=1):
        answer = ask(op="evaluate", command="plan", inputs={**atlas_defaults(), "interleave": interleave})
        info = _planned.cache_info()
        assert answer["ok"] and (info.misses, info.hits) == (n, n), interleave  # planned, then reused
        launch = answer["view"]["launch"]["megatron"]
        assert launch["ok"] and ("--num-virtual-stages-per-pipeline-rank 2" in launch["text"]) == (interleave != "1")


def _plan_with(monkeypatch, **changed):
    """``plan``'s command with its result changed as given (today's inputs all give finite results)."""
    from dataclasses import replace

    cmd = COMMANDS["plan"]
    compute, page_compute = cmd.compute, cmd.page_compute
    monkeypatch.setitem(COMMANDS, "plan", replace(cmd, compute=lambda v: {**compute(v), **changed},
                                                  page_compute=lambda v: {**page_compute(v), **changed}))


def test_the_page_checks_what_it_sends_and_refuses_a_non_finite_value_by_name(monkeypatch):
    """The page skips run's check of the whole result (a plan lists every rank, which it never shows) and checks
    what it sends: a NaN or an infinity among the values shown, or in a view, is one error naming it."""
    inputs = atlas_defaults()
    _plan_with(monkeypatch, step_time_s=math.inf)
    answer = ask(op="evaluate", command="plan", inputs=inputs)
    assert not answer["ok"] and answer["param"] == "inputs" and "step_time_s = inf" in answer["message"]
    monkeypatch.undo()
    _plan_with(monkeypatch, ranks=[[0, math.nan]])  # in the result, not in what the page is sent
    assert ask(op="evaluate", command="plan", inputs=inputs)["ok"]
    with pytest.raises(CalcError, match=r"ranks\[0\]\[1\] = nan"):  # as the CLI runs it, the whole result
        run("plan", inputs)
    monkeypatch.undo()
    monkeypatch.setattr(page_views, "page_view", lambda *a: {"x": [1.0, math.nan]})
    answer = ask(op="evaluate", command="plan", inputs=inputs)
    assert not answer["ok"] and answer["param"] == "inputs" and "view.x[1] = nan" in answer["message"]


@pytest.mark.parametrize("command", ["plan", "infer"])
def test_the_page_asks_for_the_atlas_layout_it_shows(command):
    """"fit" draws the one atlas layout the page's view shows (the same drawing as in both); without it both;
    anything else is one error naming it."""
    inputs = atlas_defaults() if command == "plan" else dict(COMMANDS["infer"].example)
    both = ask(op="evaluate", command=command, inputs=inputs)["view"]["figures"]
    fits = [f["items"][0]["cls"] for f in both[:2]]
    assert fits == ["atlas-fit atlas-fit--wide", "atlas-fit atlas-fit--narrow"]
    for i, fit in enumerate(("wide", "narrow")):
        one = ask(op="evaluate", command=command, inputs=inputs, fit=fit)["view"]["figures"]
        assert one == [both[i]] + both[2:]  # the other drawings (the inference chart and bars) stay
    answer = ask(op="evaluate", command=command, inputs=inputs, fit="tall")
    assert answer == {"ok": False, "param": "fit",
                      "message": "fit must be wide or narrow (the atlas layout the page shows), got 'tall'"}


def test_the_timeline_names_the_figures_the_page_does_not_draw_now():
    """"drawn" lists the figures the page draws now: the timeline's others come named only, with the title,
    description and size of the whole drawing and no items; the table is whole either way. A view that cannot name
    its figures (the memory tool's) draws them all. Anything but a short list of small indices is one error."""
    inputs = {"pipeline_parallel": "4", "microbatches": "16", "interleave": "2"}
    whole = ask(op="evaluate", command="bubble", inputs=inputs)["view"]
    for drawn in ([0], [1, 2], []):
        view = ask(op="evaluate", command="bubble", inputs=inputs, drawn=drawn)["view"]
        assert view["tables"] == whole["tables"]
        for i, (d, w) in enumerate(zip(view["figures"], whole["figures"], strict=True)):
            assert d == (w if i in drawn else {**{k: w[k] for k in ("w", "h", "title", "desc")}, "items": [],
                                                "named_only": True}), (drawn, i)
    memory = dict(COMMANDS["device-memory"].example)
    assert (ask(op="evaluate", command="device-memory", inputs=memory, drawn=[])["view"]
            == ask(op="evaluate", command="device-memory", inputs=memory)["view"])
    for wrong in ([16], [-1], [0.5], ["0"], "0", list(range(17))):
        answer = ask(op="evaluate", command="bubble", inputs=inputs, drawn=wrong)
        assert not answer["ok"] and answer["param"] == "drawn" and "figure indices from 0 to 15" in answer["message"]


def test_the_atlas_is_planned_without_listing_every_rank():
    """The page's plan lists no ranks (the CLI's does: 1024 of them at the atlas's defaults), and everything the page
    shows or draws from it is the CLI's."""
    _planned.cache_clear()
    values, cli = run("plan", atlas_defaults())
    _, page = run("plan", atlas_defaults(), page=True)
    assert len(cli["ranks"]) == values["gpus"] == 1024 and page["ranks"] is None
    assert {k: v for k, v in cli.items() if k != "ranks"} == {k: v for k, v in page.items() if k != "ranks"}
    answer = ask(op="evaluate", command="plan", inputs=atlas_defaults())
    assert answer["values"]["step_time_s"] == json.dumps(cli["step_time_s"])
