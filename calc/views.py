"""What the tool pages draw beside their results: drawings (:mod:`calc.diagram`) and tables.

:func:`page_view` is called by the build hook and by the page's worker (through
:func:`calc.page.page_request`) with the same three things: the inputs as given
(text, for links that carry them), their parsed values (:meth:`calc.command.Command.parse`)
and the result, so the picture and the tables are the same on both sides. A view is ``{"figures": [drawing, ...], "tables": {name: table}}``;
a table is ``{"caption", "head": [...], "rows": [[cell, ...]], "align": "lrr…"}``,
a cell either text or ``{"text", "href"}`` (a link the page builds as an
``<a>`` whose ``href`` is set as an attribute, never as markup), and ``"marked"``
lists the rows the page highlights (:func:`compare_view`: where two plans differ).
The atlas's view also has ``"launch"`` (each framework's export of the plan:
:func:`calc.commands.export.launches`), the planner's ``"inputs"`` and ``"rows"`` (the first ranked
plan's ``plan`` inputs, and each ranked plan's rank and the inputs where it differs from those, for its
launch panel: :func:`row_inputs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qsl, urlencode

from . import diagram, jsontext, series, units
from .api import COMMANDS, format_result
from .commands.export import launches
from .commands.inference import decode_points
from .errors import CalcError
from .inference import DecodePoint
from .pipeline import schedule
from .presets import ATLAS_DEFAULT, PRESETS
from .plan import MEMORY_TERMS, term_title
from .spec import spec_key

__all__ = ["page_view", "allreduce_chart_view", "PAGE_VIEWS", "ATLAS_FITS", "atlas_figures", "atlas_query", "plan_inputs", "row_inputs", "ATLAS_HREF", "pinned_inputs", "plan_spec",
           "compare_view", "MAX_PIN_CHARS"]

#: Where the planner's links point, relative to the planner page (``tools/planner/``).
ATLAS_HREF = "../atlas/"


def _b(n: float) -> str:
    return format_result("bytes", n)


def _table(caption: str, head: list[str], rows: list[list], align: str = "") -> dict:
    return {"caption": caption, "head": head, "rows": rows, "align": align or "l" + "r" * (len(head) - 1)}


# ---------------------------------------------------------------------------- the all-reduce calculator


def allreduce_chart_view(values: Mapping, result: dict) -> dict:
    """What the all-reduce calculator draws for parsed ``values`` and their ``result``: ``"ranks"`` (the ring
    step-through follows it) and ``"figures"``, the chart's two panels (:func:`calc.diagram.allreduce_panels` of
    :func:`calc.series.chart_json`'s curves; the curves themselves are not sent, the page only draws). The build
    hook draws the default inputs' with it and the page's worker every other input's, so the chart is there
    before Python is, and the same.

    >>> from calc.api import run
    >>> chart = allreduce_chart_view(*run("allreduce", {"ranks": "8", "payload": "1GB", "bandwidth": "100GB/s",
    ...                                                   "startup": "5us"}))
    >>> chart["ranks"], [d["title"][:24] for d in chart["figures"]]
    (8, ['Time against ranks for t', 'Time against payload for'])
    """
    chart = series.chart_json(series.allreduce_chart(values["ranks"], values["payload"], values["bandwidth"],
                                                     values["startup"]))
    return {"ranks": chart["ranks"],
            "figures": diagram.allreduce_panels(chart, format_result("seconds", result["time_s"]), result["regime"])}


# ---------------------------------------------------------------------------- plan (the atlas)


_CROSSINGS_CAPTION = ("Every tensor that crosses a device boundary, per GPU per optimizer step (the numbers on the "
                      "diagram)")


def crossings_table(comms: list[dict], caption: str = _CROSSINGS_CAPTION) -> dict:
    rows = [[str(n), diagram.STRATEGY_NAMES.get(c["strategy"], c["strategy"]), c["collective"], c["what"],
             str(c["group_size"]), _b(c["bytes_per_call"]), units.format_count(c["calls_per_step"]),
             _b(c["bytes_per_step"]), "inside a node" if c["intra_node"] else "across nodes",
             units.format_time(c["time_s"]), units.format_time(c["exposed_time_s"])]
            for n, c in enumerate(comms, start=1)]
    return _table(caption, ["#", "Strategy", "Collective", "What", "Group (GPUs)", "Bytes per call",
                               "Calls per step", "Bytes per GPU per step", "Where", "Time per step", "Exposed"],
                  rows, "llllrrrrlrr")


_MEMORY_ROWS = tuple((f"{key}_bytes", term_title(name)) for key, name in MEMORY_TERMS) + (
    ("total_bytes", "Total"), ("capacity_bytes", "GPU memory"), ("headroom_bytes", "Headroom"))


def memory_table(mem: dict) -> dict:
    rows = [[label, units.format_bytes(mem[key]), units.format_bytes(mem[key], "iec")] for key, label in _MEMORY_ROWS]
    return _table(f"Memory of one GPU of the most loaded stage (stage {mem['stage']}); "
                  f"largest term: {mem['binding_term']}; {'fits' if mem['fits'] else 'does not fit'}",
                  ["Component", "GB (10^9 B)", "GiB (2^30 B)"], rows)


def step_table(plan: dict) -> dict:
    rows = [["Compute", units.format_time(plan["compute_time_s"])],
            ["Pipeline bubble", units.format_time(plan["bubble_time_s"])],
            ["Exposed communication", units.format_time(plan["exposed_communication_s"])],
            ["Optimizer step", units.format_time(plan["optimizer_time_s"])],
            ["Step time", units.format_time(plan["step_time_s"])],
            ["Microbatches per step", str(plan["microbatches_per_step"])],
            ["Throughput", format_result("tokens_per_s", plan["tokens_per_s"])],
            ["MFU", format_result("percent", plan["mfu"])],
            ["Model FLOP/s per GPU", format_result("flop_rate", plan["achieved_flops_per_gpu"])]]
    return _table("Step time", ["Part", "Time"], rows)


def stages_table(plan: dict) -> dict:
    v = plan["parallel"]["interleave"]
    rows = []
    for s in plan["stages"]:
        extra = ", ".join(x for x, on in (("embedding", s["embedding"]), ("output head", s["output_head"])) if on)
        rows.append([str(s["stage"]), diagram._layers_text(s["layers"], v) + (f" + {extra}" if extra else ""),
                     units.format_count(round(s["params_per_device"])), _b(s["memory_total_bytes"]),
                     units.format_time(s["time_per_microbatch_s"])])
    return _table("What each pipeline stage holds (per GPU)",
                  ["Stage", "Layers", "Parameters per GPU", "Memory per GPU", "Time per microbatch"], rows, "llrrr")


#: The atlas's two layouts (:func:`calc.diagram.atlas_layout`): wide, and narrow for a phone.
ATLAS_FITS = ("wide", "narrow")


def atlas_figures(result: dict, fit: str | None = None) -> list[dict]:
    """The atlas of ``result`` (a plan, or a serving plan) in both layouts, or in the one named ``fit``.

    The build's page holds both and its style shows the one that fits the view; the live page asks for
    the one its view shows, so the other is neither computed, sent nor drawn at each input (issue 15).
    """
    return [diagram.atlas_layout(result, narrow=f == "narrow") for f in ATLAS_FITS if fit in (None, f)]


def plan_view(inputs: Mapping, values: Mapping, result: dict, fit: str | None = None) -> dict:
    """The atlas: its drawing (:func:`atlas_figures`), its tables and its launch settings
    (:func:`calc.commands.export.launches`)."""
    return {"figures": atlas_figures(result, fit),
            "tables": {"crossings": crossings_table(result["communications"]),
                       "memory": memory_table(result["memory_per_device"]),
                       "step": step_table(result), "stages": stages_table(result)},
            "launch": launches(dict(values))}


# ---------------------------------------------------------------------------- device-memory


def device_memory_view(inputs: Mapping, values: Mapping, result: dict) -> dict:
    return {"figures": [diagram.memory_bars(result)], "tables": {"memory": memory_table(result)}}


# ---------------------------------------------------------------------------- bubble (timelines)


def bubble_view(inputs: Mapping, values: Mapping, result: dict, drawn: frozenset[int] | None = None) -> dict:
    """The three schedules drawn, and their measured fractions; ``drawn``: the figures to draw (the others named
    only: :func:`calc.diagram.timeline_layout`), all without it."""
    p, m, v = (values[k] for k in ("pipeline_parallel", "microbatches", "interleave"))
    tb = COMMANDS["schedule"].parse({})["backward_slots"]  # the schedule command's default
    figures, rows = [], []
    for kind, vk in (("gpipe", 1), ("1f1b", 1), ("interleaved", v)):
        name = {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved": "Interleaved 1F1B"}[kind]
        if kind == "interleaved" and v == 1:
            figures.append(_note(f"{name}: set the model chunks per stage v to 2 or more to see it."))
            continue
        try:  # what evaluate("schedule", ...) computes, without its parsing or its JSON form
            s = schedule(kind, p, m, vk, tb)
        except CalcError as e:
            figures.append(_note(f"{name}: not drawn ({e})."))
            continue
        figures.append(diagram.timeline_layout(s, drawn is None or len(figures) in drawn))
        rows.append([name, str(vk), str(s.makespan_slots), str(s.ideal_slots), f"{s.bubble_fraction:.4g}",
                     f"{s.bubble_share:.4g}", str(max(s.peak_in_flight))])
    table = _table("Measured on the generated schedules (a backward takes two slots)",
                   ["Schedule", "v", "Makespan (slots)", "Ideal (slots)", "Bubble / ideal", "Bubble / total",
                    "Peak chunks in flight"], rows)
    return {"figures": figures, "tables": {"schedules": table}}


def _note(text: str) -> dict:
    return {"w": 720.0, "h": 30.0, "title": text, "desc": text,
            "items": [{"t": "text", "x": 8.0, "y": 20.0, "s": text, "cls": "tl-sub", "anchor": "start"}]}


# ---------------------------------------------------------------------------- search (the planner)

_PLAN_PARAMS = tuple(p.name for p in COMMANDS["plan"].params)


def atlas_defaults() -> dict[str, str]:
    """The atlas's default inputs: its preset, blank where the preset says nothing."""
    return COMMANDS["plan"].fields(PRESETS[ATLAS_DEFAULT].inputs)


def plan_inputs(inputs: Mapping, parallel: Mapping) -> dict[str, str]:
    """Every ``plan`` field's text for the search ``inputs`` and one plan's ``parallel`` dict (a planner row).

    >>> plan_inputs({"layers": "96"}, {"tensor": 8, "sequence_parallel": False})["tensor_parallel"]
    '8'
    """
    wanted: dict[str, str] = {}
    for name in _PLAN_PARAMS:
        key = spec_key(name, "parallel")
        if key in parallel:
            value = parallel[key]
            if isinstance(value, bool):
                wanted[name] = "true" if value else "false"
            elif isinstance(value, (list, tuple)):
                wanted[name] = ",".join(str(x) for x in value)
            else:
                wanted[name] = "" if value is None else str(value)
        else:
            text = inputs.get(name)
            param = COMMANDS["plan"].param(name)
            wanted[name] = param.default or "" if text is None or str(text).strip() == "" else str(text).strip()
    return wanted


def atlas_query(inputs: Mapping, parallel: Mapping) -> str:
    """The atlas's query string for the search ``inputs`` and one plan's ``parallel`` dict.

    Only values that differ from the atlas's defaults are named (blank ones too, as ``name=``).

    >>> atlas_query({"layers": "96"}, {"tensor": 8, "sequence_parallel": False, "micro_batch": 1})[:20]
    'hidden=&heads=&vocab'
    """
    defaults = atlas_defaults()
    return urlencode([(k, x) for k, x in plan_inputs(inputs, parallel).items() if x != defaults[k]])


def _recompute_cell(par: Mapping) -> str:
    """``full``, or ``full, 4/chunk`` when only the first 4 layers of each model chunk are recomputed."""
    n = par.get("recompute_layers")
    return par["recompute"] if n is None else f"{par['recompute']}, {n}/chunk"


def _zero_cell(par: Mapping) -> str:
    """The ZeRO stage, and with hybrid sharding the replicas each shard group spans: ``3, groups of 8``.

    >>> _zero_cell({"zero": 3, "zero_group": 8}), _zero_cell({"zero": 1, "zero_group": None})
    ('3, groups of 8', '1')
    """
    g = par.get("zero_group")
    return str(par["zero"]) if g is None else f"{par['zero']}, groups of {g}"


def search_view(inputs: Mapping, values: Mapping, result: dict) -> dict:
    rows = []
    for pl in result["plans"]:
        par = pl["parallel"]
        mem = pl["memory_per_device"]
        rows.append([str(pl["rank"]), str(par["data"]), str(par["tensor"]), str(par["pipeline"]), str(par["context"]),
                     str(par["expert"]), _zero_cell(par), "on" if par["sequence_parallel"] else "off",
                     _recompute_cell(par), str(par["interleave"]), str(par["micro_batch"]),
                     units.format_time(pl["step_time_s"]), format_result("percent", pl["mfu"]),
                     units.format_bytes(mem["total_bytes"], "iec"), pl["why"],
                     {"text": f"Open #{pl['rank']} in the atlas", "href": ATLAS_HREF + "?" + atlas_query(inputs, par)}])
    plans = _table("Configurations that fit, fastest first, with why each ranks where it does",
                   ["#", "DP", "TP", "PP", "CP", "EP", "ZeRO", "SP", "Recompute", "v", "Micro", "Step", "MFU",
                    "Memory/GPU", "Why", "Atlas"], rows, "rrrrrrrllrrrrrll")
    refusals = []
    for g in result["refused_summary"]:
        ex = g["example"]
        conf = ", ".join(f"{k} {x}" for k, x in ex["parallel"].items())
        refusals.append([_REFUSAL_KIND.get(g["kind"], g["kind"]), g["rule"], units.format_count(g["count"]),
                         ex["reason"], conf])
    refused = _table(f"Why {units.format_count(result['refused_count'])} configurations were refused, by rule "
                     "(one example each)", ["Kind", "Rule", "Configurations", "Example", "Example configuration"],
                     refusals, "llrll")
    every = [plan_inputs(inputs, pl["parallel"]) for pl in result["plans"]]
    first = every[0] if every else {}
    # each row's plan inputs for the launch panel: the first row's in full, the others only where they differ (most
    # fields are the search's own, the same in every row: written once, the answer stays well under 64 kB)
    return {"figures": [], "tables": {"plans": plans, "refusals": refused}, "inputs": first,
            "rows": [{"rank": pl["rank"], "inputs": {k: x for k, x in row.items() if first[k] != x}}
                     for pl, row in zip(result["plans"], every)]}


def row_inputs(view: Mapping, i: int) -> dict[str, str]:
    """Every ``plan`` field of row ``i`` of :func:`search_view`'s view (the page's launch panel does the same).

    >>> row_inputs({"inputs": {"zero": "1", "layers": "96"}, "rows": [{"rank": 1, "inputs": {"zero": "3"}}]}, 0)
    {'zero': '3', 'layers': '96'}
    """
    return {**view["inputs"], **view["rows"][i]["inputs"]}


_REFUSAL_KIND = {"memory": "memory", "combination": "divisibility or an impossible combination"}


# ---------------------------------------------------------------------------- pin and compare (the atlas)

#: Longest pin accepted (characters of the atlas's query string it holds).
MAX_PIN_CHARS = 4000


def pinned_inputs(text: object) -> dict[str, str]:
    """The atlas's inputs a pin holds: ``text`` is the atlas's own query string (its non-default fields).

    Bounded before it is read; every name must be a field of the atlas (a name given twice keeps its last
    value, as in a link). The values are the reader's text, checked by ``plan`` like any input.

    >>> pinned_inputs("tensor_parallel=4&zero=1")["tensor_parallel"]
    '4'
    >>> pinned_inputs("evil=<script>")
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: pin must be the atlas's query string (names of its fields), got 'evil'
    """
    if not isinstance(text, str) or len(text) > MAX_PIN_CHARS:
        raise CalcError("pin", f"the atlas's query string, at most {MAX_PIN_CHARS} characters", text)
    inputs = atlas_defaults()
    try:
        pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=2 * len(inputs))
    except ValueError:
        raise CalcError("pin", f"the atlas's query string, at most {2 * len(inputs)} fields", text) from None
    for name, value in pairs:
        if name not in inputs:
            raise CalcError("pin", "the atlas's query string (names of its fields)", name)
        inputs[name] = value
    return inputs


def plan_spec(inputs: Mapping) -> dict:
    """The SPEC (``{"model": {...}, "parallel": {"tensor": ...}, ...}``) of ``plan``'s flat ``inputs``; blanks left out.

    >>> plan_spec({"tensor_parallel": "8", "layers": "32", "stage_layers": ""})
    {'model': {'layers': '32'}, 'parallel': {'tensor': '8'}}
    """
    spec: dict[str, dict] = {}
    for name, section in COMMANDS["plan"].spec_fields.items():
        text = inputs.get(name)
        if text is not None and str(text).strip() != "":
            spec.setdefault(section, {})[spec_key(name, section)] = text
    return spec


def compare_view(result: dict) -> dict:
    """The atlas's pinned plan (A) beside the current one (B): ``calc compare``'s result as tables.

    A table's ``marked`` lists the rows where A and B differ (the page highlights them).
    """
    t, b_, pct = units.format_time, (lambda n: units.format_bytes(n, "iec")), (lambda x: format_result("percent", x))
    r = result
    summary_pairs = [(r["a_step_time_s"], r["b_step_time_s"]), (r["a_tokens_per_s"], r["b_tokens_per_s"]),
                     (r["a_mfu"], r["b_mfu"]), (r["a_fits"], r["b_fits"])]
    summary = [["Step time", t(r["a_step_time_s"]), t(r["b_step_time_s"]), t(r["b_step_time_s"] - r["a_step_time_s"])],
               ["Throughput", format_result("tokens_per_s", r["a_tokens_per_s"]),
                format_result("tokens_per_s", r["b_tokens_per_s"]),
                format_result("tokens_per_s", r["b_tokens_per_s"] - r["a_tokens_per_s"])],
               ["MFU", pct(r["a_mfu"]), pct(r["b_mfu"]), pct(r["b_mfu"] - r["a_mfu"])],
               ["Fits in memory", *(format_result("fits", x) for x in (r["a_fits"], r["b_fits"])),
                "" if r["a_fits"] == r["b_fits"] else "changed"]]
    settings = [[x["setting"], str(x["a"]), str(x["b"])] for x in r["settings"]]
    step = [[x["part"][0].upper() + x["part"][1:], t(x["a_s"]), t(x["b_s"]), t(x["change_s"])] for x in r["step_time"]]
    memory = [[x["term"][0].upper() + x["term"][1:], b_(x["a_bytes"]), b_(x["b_bytes"]), b_(x["change_bytes"])]
              for x in r["memory"]]
    comms = [[diagram.STRATEGY_NAMES.get(c["strategy"], c["strategy"]), c["collective"], c["what"],
              _b(c["a_step_bytes"]), _b(c["b_step_bytes"]), t(c["a_time_s"]), t(c["b_time_s"]),
              t(c["a_exposed_s"]), t(c["b_exposed_s"])] for c in r["communications"]]
    tables = {
        "compare-summary": _table("Pinned plan (A) and the current plan (B); change = B − A",
                                  ["", "A (pinned)", "B (current)", "Change"], summary, "lrrr"),
        "compare-settings": _table("Inputs that differ", ["Input", "A (pinned)", "B (current)"], settings, "lll"),
        "compare-step": _table("Step time by part, per optimizer step", ["Part", "A", "B", "Change"], step),
        "compare-memory": _table("Memory of one GPU of the most loaded stage, GiB (2^30 B)",
                                 ["Component", "A", "B", "Change"], memory),
        "compare-communications": _table(
            "Communication per GPU per optimizer step (GB = 10^9 B)",
            ["Strategy", "Collective", "What", "Bytes A", "Bytes B", "Time A", "Time B", "Exposed A", "Exposed B"],
            comms, "lllrrrrrr"),
    }
    marks = {"compare-summary": summary_pairs,
             "compare-settings": [(x["a"], x["b"]) for x in r["settings"]],
             "compare-step": [(x["a_s"], x["b_s"]) for x in r["step_time"]],
             "compare-memory": [(x["a_bytes"], x["b_bytes"]) for x in r["memory"]],
             "compare-communications": [((c["a_step_bytes"], c["a_time_s"], c["a_exposed_s"]),
                                         (c["b_step_bytes"], c["b_time_s"], c["b_exposed_s"]))
                                        for c in r["communications"]]}
    for name, pairs in marks.items():
        tables[name]["marked"] = [i for i, (a, b) in enumerate(pairs) if a != b]
    return {"figures": [], "tables": tables}


# ---------------------------------------------------------------------------- infer (the inference calculator)


#: The sweep's points of recent inputs, by the parsed inputs but the batch, and the point's batch: the points for the
#: other batch sizes do not depend on the batch asked for, and a reader who changes it (the calculator's first field)
#: had them all computed again, about 40 % of the calculator's Python per input (issue 15). The oldest go first.
_SWEEP_POINTS: dict[tuple, DecodePoint] = {}
_SWEEP_POINTS_KEPT = 256


def serving_sweep(values: Mapping, result: dict) -> list[dict]:
    """``infer`` at batch sizes e, 2e, 4e, ... up to the most that fit, and the current batch (what the chart draws).

    Each point is ``infer``'s answer on the same parsed values with another ``batch``
    (:func:`calc.commands.inference.decode_points`: its decode figures only), kept for the next inputs that differ
    only in the batch (:data:`_SWEEP_POINTS`).
    """
    e, batch, most = result["parallel"]["expert"], result["batch"], result["max_concurrent_sequences"]
    sizes = {batch, most}
    k = e
    while k < most:
        sizes.add(k)
        k *= 2
    current = DecodePoint(batch, result["decode_time_per_token_s"], result["decode_floor_s"],
                          result["tokens_per_s_per_replica"], result["memory_per_device"]["total_bytes"])
    inputs = tuple(sorted((k, v) for k, v in values.items() if k != "batch"))
    missing = [b for b in sorted(sizes - {batch}) if (inputs, b) not in _SWEEP_POINTS]
    for d in decode_points(dict(values), missing) if missing else ():
        _SWEEP_POINTS[inputs, d.batch] = d
    points = {b: _SWEEP_POINTS[inputs, b] for b in sizes - {batch}} | {batch: current}
    while len(_SWEEP_POINTS) > _SWEEP_POINTS_KEPT:
        del _SWEEP_POINTS[next(iter(_SWEEP_POINTS))]
    return [jsontext.plain(points[b]) for b in sorted(sizes)]


def _serving_memory_table(mem: dict, most: int) -> dict:
    rows = [[label[0].upper() + label[1:], units.format_bytes(mem[f"{key}_bytes"]),
             units.format_bytes(mem[f"{key}_bytes"], "iec")] for key, label in diagram.SERVING_TERMS]
    rows += [[label, units.format_bytes(mem[key]), units.format_bytes(mem[key], "iec")]
             for key, label in (("total_bytes", "Total"), ("capacity_bytes", "GPU memory"),
                                ("headroom_bytes", "Headroom"))]
    return _table(f"Memory of one GPU of the most loaded stage (stage {mem['stage']}) with {mem['sequences']} "
                  f"sequences on it; largest term: {mem['binding_term'].replace('_', ' ')}; at most {most} sequences "
                  "per replica fit", ["Component", "GB (10^9 B)", "GiB (2^30 B)"], rows)


def _serving_time_table(r: dict) -> dict:
    t, pct = units.format_time, (lambda x: format_result("percent", x))
    rows = [["Time to first token (prefill of the batch's prompts)", t(r["time_to_first_token_s"])],
            ["Inter-token latency, mean over the output", t(r["decode_time_per_token_s"])],
            ["Inter-token latency at full context", t(r["decode_time_last_token_s"])],
            ["Roofline floor of a step (every byte read once at peak bandwidth)", t(r["decode_floor_s"])],
            ["Collectives and pipeline hand-offs in a step", t(r["decode_communication_s"])],
            ["A step is bound by", r["decode_bound"]],
            ["Request latency (first token, then the rest)", t(r["request_latency_s"])],
            ["Generated tokens/s, all replicas", format_result("tokens_per_s", r["tokens_per_s"])],
            ["Generated tokens/s per replica", format_result("tokens_per_s", r["tokens_per_s_per_replica"])],
            ["Generated tokens/s per GPU", format_result("tokens_per_s", r["tokens_per_s_per_device"])],
            ["Memory-bandwidth utilisation (decode)", pct(r["mbu"])],
            ["Model FLOPs utilisation (decode; prefill)", f"{pct(r['mfu'])}; {pct(r['prefill_mfu'])}"]]
    if r["max_latency_s"] is not None:
        met = "yes" if r["latency_bound_met"] else "no"
        rows.append([f"Within the latency bound of {t(r['max_latency_s'])}", met])
    replicas = r["parallel"]["data"]
    return _table(f"Latency and throughput of batch {r['batch']} per replica ({replicas} replica"
                  f"{'s' if replicas > 1 else ''})", ["Quantity", "Value"], rows)


def _sweep_table(points: list[dict]) -> dict:
    rows = [[str(p["batch"]), units.format_time(p["decode_time_per_token_s"]), units.format_time(p["decode_floor_s"]),
             format_result("tokens_per_s", p["tokens_per_s_per_replica"]), units.format_bytes(p["memory_bytes"], "iec")]
            for p in points]
    return _table("The chart's points: the same plan at other batch sizes", ["Batch (sequences per replica)",
                  "Inter-token latency", "Roofline floor", "Tokens/s per replica", "Memory per GPU"], rows)


def infer_view(inputs: Mapping, values: Mapping, result: dict, fit: str | None = None) -> dict:
    points = serving_sweep(values, result)
    return {"figures": [*atlas_figures(result, fit),
                        diagram.serving_chart(points, result["batch"], result["max_concurrent_sequences"]),
                        diagram.memory_bars(result["memory_per_device"], diagram.SERVING_TERMS)],
            "tables": {"time": _serving_time_table(result), "sweep": _sweep_table(points),
                       "memory": _serving_memory_table(result["memory_per_device"], result["max_concurrent_sequences"]),
                       "crossings": crossings_table(result["communications"], "Every tensor that crosses a device "
                                                    "boundary per generated token (one decode step of the batch), "
                                                    "per GPU"),
                       "prefill": crossings_table(result["prefill_communications"], "The same for the prefill of the "
                                                  "batch's prompts"),
                       "stages": stages_table(result)}}


#: Commands whose page shows a view, and the function that makes it.
PAGE_VIEWS = {"plan": plan_view, "device-memory": device_memory_view, "bubble": bubble_view, "search": search_view,
              "infer": infer_view}
#: The views that draw the atlas, and so take the layout to draw (:func:`atlas_figures`).
ATLAS_VIEWS = frozenset({"plan", "infer"})
#: The views that can leave figures named only (``named_only``: :mod:`calc.diagram`), and so take the ones to draw:
#: the timeline's three schedules were most of its Python per input, and the page shows one or two at a time.
NAMING_VIEWS = frozenset({"bubble"})
#: Figures in a view at most (the indices a page may ask to draw are below it).
MAX_FIGURES = 16


def page_view(command: str, inputs: Mapping, values: Mapping, result: dict, fit: str | None = None,
              drawn: frozenset[int] | None = None) -> dict:
    """The view of ``command``'s ``result`` for ``inputs`` parsed as ``values`` (see the module docstring);
    ``fit``: the one atlas layout to draw (:func:`atlas_figures`), for the views that draw one; ``drawn``: the indices
    of the figures to draw, the others named only, for :data:`NAMING_VIEWS` (all, without it)."""
    if command in ATLAS_VIEWS:
        return PAGE_VIEWS[command](inputs, values, result, fit)
    if command in NAMING_VIEWS:
        return PAGE_VIEWS[command](inputs, values, result, drawn)
    return PAGE_VIEWS[command](inputs, values, result)
