"""One description of every command, shared by the CLI, the build hooks and the page.

A :class:`Command` lists its parameters (name, kind, label, default) and its
results (JSON key, label, unit). :func:`evaluate` takes raw values, as typed in
a terminal, a form field or a URL, parses them by kind, computes, and returns
the JSON-able dict that ``python -m calc <command> --json`` prints. Because the
CLI, the hooks and the worker in the page all go through :func:`evaluate`, a
number on the page is the number the CLI prints.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field

from . import batch as _batch
from . import collectives as _coll
from . import scaling as _scaling
from . import units
from .check import count, fraction, real
from .errors import CalcError

__all__ = ["Param", "Result", "Command", "COMMANDS", "evaluate", "format_result", "evaluate_for_page"]

_NUMBER_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


@dataclass(frozen=True, slots=True)
class Param:
    """One input. ``default`` is raw text; ``None`` means optional and absent."""

    name: str  #: snake_case; the CLI option is ``--`` + name with ``-``
    kind: str  #: count | number | fraction | size | bandwidth | time | flop_rate | sizes | choice | flag
    label: str  #: what the field is, with its unit
    help: str = ""
    default: str | None = None
    group: str = ""  #: fields are grouped under this heading in the page
    choices: tuple[str, ...] = ()
    minimum: float = 1  #: for count (whole) and number (real, inclusive)
    required: bool = False  #: blank is an error rather than "absent"


@dataclass(frozen=True, slots=True)
class Result:
    """One output: its JSON key, a label, and the unit word used to format it."""

    key: str
    label: str
    unit: str  #: examples | sequences | tokens | count | bytes | seconds | bytes_per_s | ratio | text | flops


@dataclass(frozen=True, slots=True)
class Command:
    """A calculation the CLI, the hooks and the page all offer."""

    name: str
    title: str
    params: tuple[Param, ...]
    results: tuple[Result, ...]
    compute: Callable[[dict], dict] = field(repr=False)
    example: Mapping[str, str] = field(default_factory=dict)  #: the page's default inputs

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise CalcError("parameter", f"one of {', '.join(p.name for p in self.params)}", name)


def _parse_number_text(p: Param, raw: object, rule: str) -> object:
    if isinstance(raw, str):
        text = raw.strip()
        if len(text) > 64 or not _NUMBER_RE.fullmatch(text):
            raise CalcError(p.name, rule, raw)
        return int(text) if text.lstrip("+-").isdigit() else float(text)
    return raw


def parse_param(p: Param, raw: object) -> object:
    """Turn one raw value (text or number) into the value the calculation takes."""
    if p.kind == "count":
        rule = f"a whole number >= {int(p.minimum)}"
        return count(p.name, _parse_number_text(p, raw, rule), minimum=int(p.minimum))
    if p.kind == "number":
        rule = f"a number >= {p.minimum:g}"
        return real(p.name, _parse_number_text(p, raw, rule), minimum=p.minimum,
                    allow_minimum=True, maximum=1e18)
    if p.kind == "fraction":
        return fraction(p.name, _parse_number_text(p, raw, "a number >= 0 and < 1"))
    if p.kind == "size":
        return units.parse_size(raw, p.name)
    if p.kind == "bandwidth":
        return units.parse_bandwidth(raw, p.name)
    if p.kind == "time":
        return units.parse_time(raw, p.name)
    if p.kind == "flop_rate":
        return units.parse_flop_rate(raw, p.name)
    if p.kind == "choice":
        if raw not in p.choices:
            raise CalcError(p.name, "one of " + ", ".join(p.choices), raw)
        return raw
    if p.kind == "flag":
        if raw in (True, "true", "1", "on", "yes"):
            return True
        if raw in (False, "false", "0", "off", "no"):
            return False
        raise CalcError(p.name, "true or false", raw)
    if p.kind == "sizes":
        return _parse_sizes(p.name, raw)
    raise AssertionError(f"unknown parameter kind {p.kind!r}")  # a bug in COMMANDS, not input


def _parse_sizes(name: str, raw: object) -> list[list[int]]:
    """``"8,8,5; 8,8,8"``: replicas separated by ``;``, microbatch sizes by ``,``."""
    rule = "microbatch sizes per replica such as 8,8,5;8,8,8"
    if not isinstance(raw, str) or len(raw) > 100_000:
        raise CalcError(name, rule, raw)
    rows = []
    for part in raw.split(";"):
        cells = [c.strip() for c in part.split(",")]
        if not all(re.fullmatch(r"\d+", c) for c in cells):
            raise CalcError(name, rule, raw)
        rows.append([int(c) for c in cells])
    return rows


def _blank(raw: object) -> bool:
    return raw is None or (isinstance(raw, str) and raw.strip() == "")


def evaluate(command: str, raw: Mapping[str, object]) -> dict:
    """Parse ``raw`` by the command's parameters, compute, return the JSON-able result.

    Blank or missing optional values take their defaults; unknown names are errors.

    >>> evaluate("batch", {"micro_batch": "8", "accumulation": "16", "data_parallel": "64"})["global_batch"]
    8192
    """
    cmd = COMMANDS.get(command)
    if cmd is None:
        raise CalcError("command", "one of " + ", ".join(COMMANDS), command)
    known = {p.name for p in cmd.params}
    for key in raw:
        if key not in known:
            raise CalcError(str(key), f"a parameter of {command} ({', '.join(sorted(known))})", raw[key])
    values: dict[str, object] = {}
    for p in cmd.params:
        text = raw.get(p.name)
        if _blank(text):
            text = p.default
        if _blank(text) and p.required:
            raise CalcError(p.name, "given (it is required)", "" if text is None else text)
        values[p.name] = None if _blank(text) else parse_param(p, text)
    return cmd.compute(values)


def format_result(unit: str, value: object) -> str:
    """The text shown beside a raw value: always with its unit.

    >>> format_result("bytes", 1073741824.0), format_result("seconds", 0.01757)
    ('1.074 GB (1 GiB)', '17.57 ms')
    """
    if value is None:
        return "n/a"
    if unit in ("examples", "sequences", "tokens", "steps", "replicas", "GPUs", "microbatches"):
        return units.format_count(value, unit)
    if unit == "count":
        return units.format_count(value)
    if unit == "bytes":
        return f"{units.format_bytes(value)} ({units.format_bytes(value, 'iec')})"
    if unit == "seconds":
        return units.format_time(value)
    if unit == "bytes_per_s":
        return units.format_rate(value)
    if unit == "ratio":
        return f"{value:.4g}"
    if unit == "percent":
        return f"{100 * value:.3g} %"
    if unit == "flops":
        return units.format_flops(value)
    return str(value)


def evaluate_for_page(command: str, raw_json: str) -> str:
    """What the page's worker calls: JSON in, JSON out, never an exception.

    Success: ``{"ok": true, "values": {key: <json text of the value>}, "text": {key: formatted}}``;
    the JSON text is exactly what the CLI prints for that key. Failure:
    ``{"ok": false, "param": name, "message": text}``.
    """
    try:
        raw = json.loads(raw_json)
        if not isinstance(raw, dict):
            raise CalcError("inputs", "a JSON object", raw_json)
        result = evaluate(command, raw)
    except CalcError as e:
        return json.dumps({"ok": False, "param": e.param, "message": str(e)})
    except ValueError as e:  # malformed JSON from the page
        return json.dumps({"ok": False, "param": "inputs", "message": f"inputs must be JSON: {e}"})
    cmd = COMMANDS[command]
    return json.dumps(
        {
            "ok": True,
            "values": {r.key: json.dumps(result[r.key]) for r in cmd.results},
            "text": {r.key: format_result(r.unit, result[r.key]) for r in cmd.results},
        }
    )


# ---------------------------------------------------------------------------- batch


def _compute_batch(v: dict) -> dict:
    tp, pp, cp = v["tensor_parallel"], v["pipeline_parallel"], v["context_parallel"]
    dp = v["data_parallel"]
    if v["gpus"] is not None:
        derived = _batch.data_parallel_degree(v["gpus"], tp, pp, cp)
        if dp is not None and dp != derived:
            raise CalcError(
                "data_parallel",
                f"blank or gpus / (tensor_parallel × pipeline_parallel × context_parallel) = {derived}",
                dp,
            )
        dp = derived
    elif dp is None:
        raise CalcError("data_parallel", "given, or derived from gpus", "")
    micro, acc = v["micro_batch"], v["accumulation"]
    if v["target_global_batch"] is not None:
        derived = _batch.accumulation_for(v["target_global_batch"], micro, dp)
        if acc is not None and acc != derived:
            raise CalcError("accumulation", f"blank or target_global_batch / (micro_batch × data_parallel) = {derived}", acc)
        acc = derived
    elif acc is None:
        acc = 1
    nominal = _batch.global_batch(micro, acc, dp, v["seq_len"])
    sequences = nominal.global_batch
    if v["microbatch_sizes"] is not None:
        uneven = _batch.uneven_batch(micro, v["microbatch_sizes"])
        if uneven.data_parallel != dp:
            raise CalcError("microbatch_sizes", f"one list per replica ({dp} replicas)", uneven.data_parallel)
        if uneven.accumulation != acc:
            raise CalcError("microbatch_sizes", f"{acc} sizes per replica (the accumulation steps)", uneven.accumulation)
        sequences = uneven.effective_examples
    per_seq = v["examples_per_sequence"] if v["examples_per_sequence"] is not None else 1.0
    padding = v["padding_fraction"] if v["padding_fraction"] is not None else 0.0
    packed = _batch.packed_batch(sequences, v["seq_len"] or 1, per_seq, padding)
    real_tokens = packed.real_tokens if v["seq_len"] is not None else None
    return {
        "global_batch": nominal.global_batch,
        "micro_batch": micro,
        "accumulation": acc,
        "data_parallel": dp,
        "model_parallel": tp * pp * cp,
        "gpus": dp * tp * pp * cp,
        "tokens_per_update": nominal.tokens_per_update,
        "effective_sequences": sequences,
        "effective_examples": packed.effective_examples,
        "real_tokens_per_update": real_tokens,
    }


BATCH = Command(
    name="batch",
    title="Global batch",
    params=(
        Param("micro_batch", "count", "Microbatch size B_micro (examples per replica per microbatch)",
              required=True, group="Batch"),
        Param("accumulation", "count", "Accumulation steps N_accumulation (microbatches per update)",
              help="Blank: derived from the target global batch, or 1.", group="Batch"),
        Param("data_parallel", "count", "Data-parallel replicas N_dp",
              help="Leave blank to derive it from the GPU count.", group="Batch"),
        Param("gpus", "count", "GPUs in total", help="Optional: N_dp = GPUs / (TP × PP × CP).",
              group="Derive replicas from GPUs"),
        Param("tensor_parallel", "count", "Tensor-parallel degree TP", default="1", group="Derive replicas from GPUs"),
        Param("pipeline_parallel", "count", "Pipeline-parallel degree PP", default="1", group="Derive replicas from GPUs"),
        Param("context_parallel", "count", "Context-parallel degree CP", default="1", group="Derive replicas from GPUs"),
        Param("seq_len", "count", "Sequence length (tokens per example)", help="Optional: gives tokens per update.",
              group="Tokens"),
        Param("target_global_batch", "count", "Target global batch (examples per update)",
              help="Optional: derives the accumulation steps.", group="Inverse"),
        Param("examples_per_sequence", "number", "Examples packed per sequence (mean)",
              help="Optional, >= 1: sequence packing.", group="Packing and uneven batches"),
        Param("padding_fraction", "fraction", "Padding share of token slots (0 to < 1)",
              help="Optional.", group="Packing and uneven batches"),
        Param("microbatch_sizes", "sizes", "Actual microbatch sizes per replica",
              help="Optional, e.g. 8,8,5;8,8,8 (replicas separated by ;).", group="Packing and uneven batches"),
    ),
    results=(
        Result("global_batch", "Nominal global batch B_global", "examples"),
        Result("data_parallel", "Data-parallel replicas N_dp", "replicas"),
        Result("accumulation", "Accumulation steps", "microbatches"),
        Result("model_parallel", "Workers per replica (TP × PP × CP)", "GPUs"),
        Result("gpus", "GPUs", "GPUs"),
        Result("tokens_per_update", "Token slots per update", "tokens"),
        Result("effective_sequences", "Sequences actually in the update", "sequences"),
        Result("effective_examples", "Effective examples per update", "examples"),
        Result("real_tokens_per_update", "Non-padding tokens per update", "tokens"),
        Result("micro_batch", "Microbatch size", "examples"),
    ),
    compute=_compute_batch,
    example={"micro_batch": "8", "accumulation": "16", "data_parallel": "64"},
)

# ---------------------------------------------------------------------------- allreduce


def _compute_allreduce(v: dict) -> dict:
    r = _coll.ring_allreduce(v["ranks"], v["payload"], v["bandwidth"], v["startup"])
    return {
        "time_s": r.time_s,
        "latency_s": r.latency_s,
        "bandwidth_s": r.bandwidth_s,
        "steps": r.steps,
        "bytes_sent_per_rank": r.bytes_sent_per_rank,
        "algbw_bytes_per_s": r.algbw_bytes_per_s,
        "busbw_bytes_per_s": r.busbw_bytes_per_s,
        "crossover_payload_bytes": r.crossover_payload_bytes,
        "regime": r.regime,
        "ranks": r.ranks,
        "payload_bytes": r.payload_bytes,
    }


ALLREDUCE = Command(
    name="allreduce",
    title="Ideal ring all-reduce",
    params=(
        Param("ranks", "count", "Ranks p", default="64"),
        Param("payload", "size", "Payload n per rank (e.g. 1GiB, 512MB; bare = bytes)", default="1GiB"),
        Param("bandwidth", "bandwidth", "Effective per-rank bandwidth β (e.g. 100GB/s, 400Gbit/s)", default="100GB/s"),
        Param("startup", "time", "Per-step startup α (e.g. 5us; bare = seconds)", default="5us"),
    ),
    results=(
        Result("time_s", "Time", "seconds"),
        Result("latency_s", "Startup term 2(p−1)α", "seconds"),
        Result("bandwidth_s", "Bandwidth term 2(p−1)/p · n/β", "seconds"),
        Result("regime", "Regime", "text"),
        Result("steps", "Steps 2(p−1)", "steps"),
        Result("bytes_sent_per_rank", "Bytes sent per rank", "bytes"),
        Result("algbw_bytes_per_s", "Algorithm bandwidth n/T", "bytes_per_s"),
        Result("busbw_bytes_per_s", "Bus bandwidth (nccl-tests)", "bytes_per_s"),
        Result("crossover_payload_bytes", "Crossover payload p·α·β", "bytes"),
    ),
    compute=_compute_allreduce,
    example={"ranks": "64", "payload": "1GiB", "bandwidth": "100GB/s", "startup": "5us"},
)

# ---------------------------------------------------------------------------- scaling


def _compute_scaling(v: dict) -> dict:
    # The result's fields are the JSON keys, so the CLI and the page print them as named.
    return asdict(
        _scaling.data_parallel_scaling(
            v["gpus"], v["compute"], v["params"], v["bytes_per_gradient"], v["bandwidth"], v["startup"], v["serial"]
        )
    )


SCALING = Command(
    name="scaling",
    title="Data-parallel strong scaling",
    params=(
        Param("gpus", "count", "GPUs N (data-parallel replicas)", default="64"),
        Param("compute", "time", "Compute for the whole global batch on one GPU C (e.g. 60s)", default="60s"),
        Param("params", "number", "Parameters Ψ (e.g. 1.5e9)", default="1.5e9", minimum=0),
        Param("bytes_per_gradient", "number", "Bytes per gradient element (2 bf16, 4 fp32)", default="2",
              minimum=0),
        Param("bandwidth", "bandwidth", "Effective per-rank bandwidth β (e.g. 25GB/s, 200Gbit/s)", default="25GB/s"),
        Param("startup", "time", "Per-step startup α (e.g. 10us)", default="10us"),
        Param("serial", "time", "Per-step time that does not shrink with N, S (e.g. optimizer update)",
              default="0s"),
    ),
    results=(
        Result("step_s", "Step time T(N)", "seconds"),
        Result("compute_s", "Compute per replica C/N", "seconds"),
        Result("allreduce_s", "Gradient all-reduce", "seconds"),
        Result("serial_s", "Serial part S", "seconds"),
        Result("speedup", "Speed-up T(1)/T(N)", "ratio"),
        Result("efficiency", "Scaling efficiency", "percent"),
        Result("doubling_speedup", "Speed-up from doubling N", "ratio"),
        Result("communication_share", "Share of the step in all-reduce", "percent"),
        Result("gradient_bytes", "Gradient bytes G", "bytes"),
        Result("single_gpu_step_s", "Step time on one GPU T(1)", "seconds"),
        Result("gpus", "GPUs", "GPUs"),
    ),
    compute=_compute_scaling,
    example={"gpus": "64", "compute": "60s", "params": "1.5e9", "bytes_per_gradient": "2",
             "bandwidth": "25GB/s", "startup": "10us", "serial": "0s"},
)


def _compute_capacity(v: dict) -> dict:
    return asdict(_scaling.model_state_capacity(v["params"], v["bytes_per_param"], v["device_memory"], v["devices"]))


CAPACITY = Command(
    name="capacity",
    title="Model state against device memory",
    params=(
        Param("params", "number", "Parameters Ψ (e.g. 175e9)", default="7.5e9", minimum=0),
        Param("bytes_per_param", "number", "Bytes of state per parameter k (16 mixed-precision Adam)",
              default="16", minimum=0),
        Param("device_memory", "size", "Memory per device M (e.g. 80GB, 80GiB)", default="80GB"),
        Param("devices", "count", "Devices the state is partitioned over N", default="1"),
    ),
    results=(
        Result("state_bytes", "Model state Ψ·k", "bytes"),
        Result("per_device_bytes", "Per device Ψ·k/N", "bytes"),
        Result("fits", "Fits in M?", "text"),
        Result("min_devices", "Fewest devices that can hold it", "count"),
        Result("state_to_memory", "State / device memory", "ratio"),
        Result("device_memory_bytes", "Device memory M", "bytes"),
        Result("devices", "Devices N", "count"),
    ),
    compute=_compute_capacity,
    example={"params": "7.5e9", "bytes_per_param": "16", "device_memory": "80GB", "devices": "1"},
)

#: Every command, by its CLI name.
COMMANDS: dict[str, Command] = {c.name: c for c in (BATCH, ALLREDUCE, SCALING, CAPACITY)}



