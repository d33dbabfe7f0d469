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
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field

from . import batch as _batch
from . import collectives as _coll
from . import compute as _compute
from . import memory as _memory
from . import model as _model
from . import pipeline as _pipeline
from . import plan as _plan
from . import scaling as _scaling
from . import search as _search
from . import traffic as _traffic
from . import units
from .check import MAX_COUNT, count, fraction, real
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
    maximum: float | None = None  #: for count and number; None: check.MAX_COUNT (count) or 1e18 (number)
    section: str = ""  #: the SPEC.json section holding it (plan and search only)


@dataclass(frozen=True, slots=True)
class Result:
    """One output: its JSON key, a label, and the unit word used to format it."""

    key: str
    label: str
    unit: str  #: examples | sequences | tokens | count | bytes | seconds | bytes_per_s | ratio | percent | text | flops | days | tokens_per_s | json


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
        top = MAX_COUNT if p.maximum is None else int(p.maximum)
        return count(p.name, _parse_number_text(p, raw, rule), minimum=int(p.minimum), maximum=top)
    if p.kind == "number":
        rule = f"a number >= {p.minimum:g}"
        return real(p.name, _parse_number_text(p, raw, rule), minimum=p.minimum,
                    allow_minimum=True, maximum=1e18 if p.maximum is None else p.maximum)
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
    if unit == "days":
        return f"{value:.4g} days"
    if unit == "tokens_per_s":
        return units.format_count(round(value), "tokens/s")
    if unit == "json":
        return json.dumps(value)
    return str(value)


#: A nested field's unit follows from its name's suffix (the project's naming rule).
_SUFFIX_UNITS = (("_bytes_per_s", "bytes_per_s"), ("_bytes", "bytes"), ("_s", "seconds"), ("_gb", "ratio"),
                 ("_gib", "ratio"))


_NAMED_UNITS = {"mfu": "percent", "hfu": "percent", "tokens_per_s": "tokens_per_s", "training_days": "days"}


def unit_of_field(name: str) -> str:
    """The unit of a nested result field, from its name: ``total_bytes`` -> bytes, ``time_s`` -> seconds.

    >>> unit_of_field("bytes_per_call"), unit_of_field("time_s"), unit_of_field("group_size")
    ('bytes', 'seconds', 'text')
    >>> unit_of_field("tokens_per_s"), unit_of_field("mfu")
    ('tokens_per_s', 'percent')
    """
    if name in _NAMED_UNITS:
        return _NAMED_UNITS[name]
    if name.startswith("bytes_"):
        return "bytes"
    if name.endswith("_per_s") and not name.endswith("_bytes_per_s"):
        return "text"
    return next((u for suffix, u in _SUFFIX_UNITS if name.endswith(suffix)), "text")


def format_field(name: str, value: object) -> str:
    """A nested field formatted by :func:`unit_of_field` (numbers without a unit suffix stay plain)."""
    if isinstance(value, (dict, list, tuple, bool)) or value is None:
        return json.dumps(value)
    unit = unit_of_field(name)
    if unit == "text" and isinstance(value, (int, float)):
        return units.format_count(value)
    return format_result(unit, value)


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

# ---------------------------------------------------------------------------- memory, compute, pipeline

_PRECISION = Param("precision", "choice", "Precision recipe (bytes per parameter: weights, grads, optimizer)",
                   help="bf16-adam = 2 + 2 + 12 = 16 B (ZeRO); megatron-bf16 = 18 B; megatron-fp16 = 20 B.",
                   default="bf16-adam", choices=tuple(_model.PRECISIONS))
_RECOMPUTE = Param("recompute", "choice", "Activation recomputation", default="none",
                   choices=_memory.RECOMPUTE)
_MAX_PARAMS = float(_memory.MAX_PARAMS)
_MAX_DEGREE = float(_memory.MAX_DEGREE)


def _compute_memory(v: dict) -> dict:
    s = _memory.model_states(v["params"], v["data_parallel"], v["zero"], v["precision"], v["tensor_parallel"],
                             v["pipeline_parallel"])
    return {
        "params_bytes": s.params_bytes,
        "grads_bytes": s.grads_bytes,
        "optimizer_bytes": s.optimizer_bytes,
        "model_states_bytes": s.model_states_bytes,
        "model_states_gb": s.model_states_bytes / 1e9,
        "model_states_gib": s.model_states_bytes / 2**30,
        "bytes_per_param": s.model_states_bytes / (v["params"] / (v["tensor_parallel"] * v["pipeline_parallel"])),
    }


MEMORY = Command(
    name="memory",
    title="Model states per device (ZeRO)",
    params=(
        Param("params", "count", "Parameters Ψ", required=True, maximum=_MAX_PARAMS,
              help=f"Whole model, up to {_memory.MAX_PARAMS:.0e}; e.g. 7.5e9."),
        Param("data_parallel", "count", "Data-parallel degree N_d (ZeRO shards over it)", default="1",
              maximum=_MAX_DEGREE),
        Param("zero", "count", "ZeRO stage (0-3; 1 = Megatron's distributed optimizer)", default="0", minimum=0,
              maximum=3),
        Param("tensor_parallel", "count", "Tensor-parallel degree TP", default="1", maximum=_MAX_DEGREE),
        Param("pipeline_parallel", "count", "Pipeline-parallel degree PP", default="1", maximum=_MAX_DEGREE),
        _PRECISION,
    ),
    results=(
        Result("params_bytes", "Weights per device", "bytes"),
        Result("grads_bytes", "Gradients per device", "bytes"),
        Result("optimizer_bytes", "Optimizer states per device", "bytes"),
        Result("model_states_bytes", "Model states per device", "bytes"),
        Result("bytes_per_param", "Bytes per local parameter", "ratio"),
    ),
    compute=_compute_memory,
    example={"params": "7.5e9", "data_parallel": "64", "zero": "1"},
)

_MODEL_SHAPE = (
    Param("seq_len", "count", "Sequence length s (tokens)", required=True, maximum=_model.MAX_SEQ_LEN),
    Param("micro_batch", "count", "Microbatch size b (sequences)", default="1"),
    Param("hidden", "count", "Hidden size h", required=True, maximum=_model.MAX_HIDDEN),
    Param("heads", "count", "Attention heads a", required=True, maximum=_model.MAX_HIDDEN),
    Param("layers", "count", "Layers l", required=True, maximum=_model.MAX_LAYERS),
)


def _compute_activations(v: dict) -> dict:
    a = _memory.activations(
        v["seq_len"], v["micro_batch"], v["hidden"], v["heads"], v["layers"],
        tensor_parallel=v["tensor_parallel"], sequence_parallel=v["sequence_parallel"], recompute=v["recompute"],
        pipeline_parallel=v["pipeline_parallel"], interleave=v["interleave"], microbatches=v["microbatches"],
        kv_heads=v["kv_heads"], ffn_hidden=v["ffn_hidden"], gated_mlp=v["gated_mlp"],
        context_parallel=v["context_parallel"],
    )
    return {
        "per_layer_bytes": a.per_layer_bytes,
        "total_bytes": a.total_bytes,
        "layers_in_flight": a.layers_in_flight,
        "in_flight_factor": a.in_flight_factor,
        "stored_bytes": a.stored_bytes,
        "recompute_working_bytes": a.recompute_working_bytes,
    }


ACTIVATIONS = Command(
    name="activations",
    title="Activation memory per device (Korthikanti et al. 2022)",
    params=_MODEL_SHAPE + (
        Param("tensor_parallel", "count", "Tensor-parallel degree t", default="1", maximum=_MAX_DEGREE),
        Param("sequence_parallel", "flag", "Sequence parallelism", default="false"),
        _RECOMPUTE,
        Param("pipeline_parallel", "count", "Pipeline stages p", default="1", maximum=_MAX_DEGREE),
        Param("interleave", "count", "Model chunks per stage v", default="1", maximum=1024),
        Param("microbatches", "count", "Microbatches per step m", help="Blank: enough to fill the warm-up (2p)."),
        Param("context_parallel", "count", "Context-parallel degree c", default="1", maximum=_MAX_DEGREE),
        Param("kv_heads", "count", "Key/value heads", help="Blank: = heads.", maximum=_model.MAX_HIDDEN),
        Param("ffn_hidden", "count", "MLP width f", help="Blank: 4h.", maximum=16 * _model.MAX_HIDDEN),
        Param("gated_mlp", "flag", "Gated MLP (SwiGLU)", default="false"),
    ),
    results=(
        Result("per_layer_bytes", "Per layer, per microbatch", "bytes"),
        Result("total_bytes", "First pipeline stage under 1F1B", "bytes"),
        Result("layers_in_flight", "Layer-microbatches held", "count"),
        Result("in_flight_factor", "Held / l (1 + (p−1)/(p·v))", "ratio"),
        Result("recompute_working_bytes", "Recomputation working set", "bytes"),
    ),
    compute=_compute_activations,
    example={"seq_len": "2048", "micro_batch": "1", "hidden": "12288", "heads": "96", "layers": "96",
             "tensor_parallel": "8", "sequence_parallel": "true", "recompute": "selective",
             "pipeline_parallel": "8"},
)


def _compute_flops(v: dict) -> dict:
    heads = v["heads"] if v["heads"] is not None else 1
    if v["kv_heads"] is not None and v["heads"] is None:
        raise CalcError("heads", "given when kv_heads is given", "")
    m = _model.model(v["layers"], v["hidden"], heads, v["vocab"], v["seq_len"], kv_heads=v["kv_heads"],
                     ffn_hidden=v["ffn_hidden"], gated_mlp=v["gated_mlp"])
    f = _compute.training_flops(m, v["global_batch"], v["recompute"])
    return {
        "flops_per_iteration": f.hardware_flops,
        "model_flops_per_iteration": f.model_flops,
        "forward_flops": f.forward_flops,
        "recompute_flops": f.recompute_flops,
        "flops_per_token": f.flops_per_token,
    }


FLOPS = Command(
    name="flops",
    title="FLOPs per iteration (Narayanan et al. 2021, Eq. 3)",
    params=(
        Param("layers", "count", "Layers l", required=True, maximum=_model.MAX_LAYERS),
        Param("hidden", "count", "Hidden size h", required=True, maximum=_model.MAX_HIDDEN),
        Param("seq_len", "count", "Sequence length s", required=True, maximum=_model.MAX_SEQ_LEN),
        Param("vocab", "count", "Vocabulary V", required=True, maximum=_model.MAX_VOCAB),
        Param("global_batch", "count", "Global batch B (sequences)", required=True),
        Param("recompute", "choice", "Recomputation (full: Eq. 3's 4 passes)", default="full",
              choices=_memory.RECOMPUTE),
        Param("heads", "count", "Heads (only with kv_heads)", maximum=_model.MAX_HIDDEN),
        Param("kv_heads", "count", "Key/value heads", help="Blank: = heads.", maximum=_model.MAX_HIDDEN),
        Param("ffn_hidden", "count", "MLP width f", help="Blank: 4h.", maximum=16 * _model.MAX_HIDDEN),
        Param("gated_mlp", "flag", "Gated MLP (SwiGLU)", default="false"),
    ),
    results=(
        Result("flops_per_iteration", "Hardware FLOPs per iteration", "flops"),
        Result("model_flops_per_iteration", "Model FLOPs per iteration (3 passes)", "flops"),
        Result("flops_per_token", "Model FLOPs per token", "flops"),
    ),
    compute=_compute_flops,
    example={"layers": "96", "hidden": "12288", "seq_len": "2048", "vocab": "51200", "global_batch": "1536"},
)


def _compute_train_time(v: dict) -> dict:
    r = _compute.train_time(v["params"], v["tokens"], v["gpus"], v["flops_per_gpu"], v["recompute"])
    return {"seconds": r.seconds, "days": r.days, "total_flops": r.total_flops}


TRAIN_TIME = Command(
    name="train-time",
    title="End-to-end training time (Narayanan et al. 2021, Eq. 4)",
    params=(
        Param("params", "count", "Parameters P", required=True, maximum=_MAX_PARAMS),
        Param("tokens", "count", "Training tokens T", required=True, maximum=float(_compute.MAX_TOKENS)),
        Param("gpus", "count", "GPUs n", required=True, maximum=_MAX_DEGREE),
        Param("flops_per_gpu", "flop_rate", "Achieved FLOP/s per GPU X (e.g. 140TFLOP/s)", required=True),
        Param("recompute", "choice", "Recomputation (full: 8TP/(nX); none: 6TP/(nX))", default="full",
              choices=("full", "none")),
    ),
    results=(
        Result("days", "Training time", "days"),
        Result("seconds", "Training time", "seconds"),
        Result("total_flops", "Total FLOPs", "flops"),
    ),
    compute=_compute_train_time,
    example={"params": "175e9", "tokens": "300e9", "gpus": "1024", "flops_per_gpu": "140TFLOP/s"},
)


def _compute_bubble(v: dict) -> dict:
    b = _pipeline.bubble(v["stages"], v["microbatches"], v["interleave"])
    return {"bubble_fraction": b.bubble_fraction, "bubble_share": b.bubble_share}


_STAGES = (
    Param("stages", "count", "Pipeline stages p", default="8", maximum=_MAX_DEGREE),
    Param("microbatches", "count", "Microbatches per step m", default="32"),
    Param("interleave", "count", "Model chunks per stage v", default="1", maximum=1024),
)

BUBBLE = Command(
    name="bubble",
    title="Pipeline bubble",
    params=_STAGES,
    results=(
        Result("bubble_fraction", "Bubble / ideal compute time (p−1)/(v·m) (Megatron)", "ratio"),
        Result("bubble_share", "Bubble / total time (p−1)/(v·m + p−1) (GPipe)", "ratio"),
    ),
    compute=_compute_bubble,
    example={"stages": "8", "microbatches": "32"},
)


def _compute_schedule(v: dict) -> dict:
    s = _pipeline.schedule(v["kind"], v["stages"], v["microbatches"], v["interleave"], v["backward_slots"])
    return {
        "ops": [{"stage": o.stage, "chunk": o.chunk, "microbatch": o.microbatch, "kind": o.kind,
                 "start": o.start, "duration": o.duration} for o in s.ops],
        "makespan_slots": s.makespan_slots,
        "ideal_slots": s.ideal_slots,
        "bubble_fraction": s.bubble_fraction,
        "peak_in_flight": list(s.peak_in_flight),
    }


SCHEDULE = Command(
    name="schedule",
    title="Pipeline schedule (GPipe, 1F1B, interleaved 1F1B)",
    params=(Param("kind", "choice", "Schedule", default="1f1b", choices=_pipeline.SCHEDULES),) + (
        Param("stages", "count", "Pipeline stages p", default="4", maximum=_MAX_DEGREE),
        Param("microbatches", "count", "Microbatches per step m", default="8"),
        Param("interleave", "count", "Model chunks per stage v", default="1", maximum=1024),
        Param("backward_slots", "count", "Slots per backward (a forward is 1)", default="2", maximum=16),
    ),
    results=(
        Result("makespan_slots", "Makespan (slots)", "count"),
        Result("bubble_fraction", "Measured bubble / ideal", "ratio"),
        Result("peak_in_flight", "Peak chunks in flight per stage", "json"),
        Result("ops", "Operations", "json"),
    ),
    compute=_compute_schedule,
    example={"kind": "1f1b", "stages": "4", "microbatches": "8"},
)

# ---------------------------------------------------------------------------- collectives


def _collective_dict(r: _coll.Collective) -> dict:
    return {
        "time_s": r.time_s,
        "latency_s": r.latency_s,
        "bandwidth_s": r.bandwidth_s,
        "steps": r.steps,
        "bytes_sent_per_rank": r.bytes_sent_per_rank,
        "algbw_bytes_per_s": r.algbw_bytes_per_s,
        "busbw_bytes_per_s": r.busbw_bytes_per_s,
        "operation": r.operation,
        "algorithm": r.algorithm,
        "ranks": r.ranks,
        "payload_bytes": r.payload_bytes,
    }


_LINK = (
    Param("ranks", "count", "Ranks p", default="8"),
    Param("payload", "size", "Payload S (nccl-tests size: the full array; e.g. 512MiB)", default="512MiB"),
    Param("bandwidth", "bandwidth", "Effective per-rank bandwidth β (e.g. 450GB/s)", default="450GB/s"),
    Param("startup", "time", "Per-step startup α (e.g. 1us)", default="1us"),
)
_COLLECTIVE_RESULTS = (
    Result("time_s", "Time", "seconds"),
    Result("latency_s", "Startup term", "seconds"),
    Result("bandwidth_s", "Bandwidth term", "seconds"),
    Result("bytes_sent_per_rank", "Bytes sent per rank", "bytes"),
    Result("algbw_bytes_per_s", "Algorithm bandwidth S/T", "bytes_per_s"),
    Result("busbw_bytes_per_s", "Bus bandwidth (nccl-tests)", "bytes_per_s"),
    Result("algorithm", "Algorithm", "text"),
)


def _gather_like_command(name: str, title: str, fn: Callable) -> Command:
    def compute(v: dict) -> dict:
        return _collective_dict(fn(v["ranks"], v["payload"], v["bandwidth"], v["startup"]))

    return Command(name=name, title=title, params=_LINK, results=_COLLECTIVE_RESULTS, compute=compute,
                   example={"ranks": "8", "payload": "512MiB", "bandwidth": "450GB/s", "startup": "1us"})


GATHER_LIKE = (
    _gather_like_command("allgather", "Ring all-gather", _coll.allgather),
    _gather_like_command("reducescatter", "Ring reduce-scatter", _coll.reducescatter),
    _gather_like_command("alltoall", "Pairwise all-to-all", _coll.alltoall),
    _gather_like_command("broadcast", "Pipelined-ring broadcast", _coll.broadcast),
)


def _compute_allreduce_algorithms(v: dict) -> dict:
    args = (v["ranks"], v["payload"], v["bandwidth"], v["startup"])
    ring = _coll.ring_allreduce(*args).time_s
    pow2 = v["ranks"] & (v["ranks"] - 1) == 0
    rab = _coll.rabenseifner_allreduce(*args).time_s if pow2 else None
    rd = _coll.recursive_doubling_allreduce(*args).time_s if pow2 else None
    times = {"ring": ring, "Rabenseifner": rab, "recursive doubling": rd}
    return {"ring_time_s": ring, "rabenseifner_time_s": rab, "recursive_doubling_time_s": rd,
            "fastest": min((t, k) for k, t in times.items() if t is not None)[1]}


ALLREDUCE_ALGORITHMS = Command(
    name="allreduce-algorithms",
    title="All-reduce algorithms compared (ring, Rabenseifner, recursive doubling)",
    params=_LINK,
    results=(
        Result("ring_time_s", "Ring", "seconds"),
        Result("rabenseifner_time_s", "Rabenseifner (p a power of two)", "seconds"),
        Result("recursive_doubling_time_s", "Recursive doubling (p a power of two)", "seconds"),
        Result("fastest", "Fastest", "text"),
    ),
    compute=_compute_allreduce_algorithms,
    example={"ranks": "8", "payload": "1GB", "bandwidth": "100GB/s", "startup": "5us"},
)


def _compute_two_level(v: dict) -> dict:
    r = _coll.two_level_allreduce(v["ranks"], v["gpus_per_node"], v["payload"], v["intra_node_bandwidth"],
                                  v["inter_node_bandwidth"], v["intra_node_startup"], v["inter_node_startup"])
    flat = _coll.ring_allreduce(v["ranks"], v["payload"], v["inter_node_bandwidth"], v["inter_node_startup"])
    return {"time_s": r.time_s, "intra_node_s": r.intra_node_s, "inter_node_s": r.inter_node_s,
            "flat_ring_time_s": flat.time_s, "nodes": r.nodes,
            "bytes_sent_intra_per_rank": r.bytes_sent_intra_per_rank,
            "bytes_sent_inter_per_rank": r.bytes_sent_inter_per_rank,
            "algbw_bytes_per_s": r.algbw_bytes_per_s, "busbw_bytes_per_s": r.busbw_bytes_per_s}


TWO_LEVEL = Command(
    name="allreduce-two-level",
    title="Two-level all-reduce (inside nodes, then across)",
    params=(
        Param("ranks", "count", "Ranks p", default="64"),
        Param("gpus_per_node", "count", "GPUs per node g", default="8", maximum=1024),
        Param("payload", "size", "Payload n per rank", default="1GB"),
        Param("intra_node_bandwidth", "bandwidth", "Bandwidth inside a node", default="450GB/s"),
        Param("inter_node_bandwidth", "bandwidth", "Bandwidth across nodes (per GPU)", default="50GB/s"),
        Param("intra_node_startup", "time", "Startup inside a node", default="1us"),
        Param("inter_node_startup", "time", "Startup across nodes", default="5us"),
    ),
    results=(
        Result("time_s", "Two-level time", "seconds"),
        Result("intra_node_s", "Inside nodes (reduce-scatter + all-gather)", "seconds"),
        Result("inter_node_s", "Across nodes (ring of n/g)", "seconds"),
        Result("flat_ring_time_s", "Flat ring at the inter-node bandwidth", "seconds"),
    ),
    compute=_compute_two_level,
    example={"ranks": "64", "gpus_per_node": "8", "payload": "1GB"},
)

# ---------------------------------------------------------------------------- plan and search

_SPEC_MODEL = (
    Param("layers", "count", "Layers l", required=True, maximum=_model.MAX_LAYERS, section="model"),
    Param("hidden", "count", "Hidden size h", required=True, maximum=_model.MAX_HIDDEN, section="model"),
    Param("heads", "count", "Attention heads a", required=True, maximum=_model.MAX_HIDDEN, section="model"),
    Param("kv_heads", "count", "Key/value heads (grouped-query attention)", help="Blank: = heads.",
          maximum=_model.MAX_HIDDEN, section="model"),
    Param("ffn_hidden", "count", "MLP width f (per expert)", help="Blank: 4 × hidden.",
          maximum=16 * _model.MAX_HIDDEN, section="model"),
    Param("gated_mlp", "flag", "Gated MLP (SwiGLU: three matrices)", default="false", section="model"),
    Param("vocab", "count", "Vocabulary V", required=True, maximum=_model.MAX_VOCAB, section="model"),
    Param("seq_len", "count", "Sequence length s (tokens)", required=True, maximum=_model.MAX_SEQ_LEN,
          section="model"),
    Param("tied_embeddings", "flag", "Output head tied to the embedding", default="false", section="model"),
    Param("biases", "flag", "Biases in linear layers and norms (GPT-3 style)", default="false", section="model"),
    Param("learned_positions", "flag", "Learned position embeddings (GPT-3 style; else rotary)", default="false",
          section="model"),
    Param("experts", "count", "Experts per MoE layer (1: dense)", default="1", maximum=_model.MAX_EXPERTS,
          section="model"),
    Param("top_k", "count", "Experts per token", default="1", maximum=_model.MAX_EXPERTS, section="model"),
    Param("moe_layer_freq", "count", "Every k-th layer is MoE (1: all)", default="1", maximum=_model.MAX_LAYERS,
          section="model"),
)
_SPEC_BATCH = (
    Param("micro_batch", "count", "Microbatch size b (sequences)", default="1", section="batch"),
    Param("global_batch", "count", "Global batch (sequences per step)", required=True, section="batch"),
)
_SPEC_HARDWARE = (
    Param("gpus", "count", "GPUs", required=True, maximum=float(_plan.MAX_GPUS), section="hardware"),
    Param("gpus_per_node", "count", "GPUs per node", default="8", maximum=1024, section="hardware"),
    Param("memory", "size", "Memory per GPU (e.g. 80GB)", required=True, section="hardware"),
    Param("flops_per_gpu", "flop_rate", "Peak FLOP/s per GPU (e.g. 989TFLOP/s)", required=True,
          section="hardware"),
    Param("compute_efficiency", "number", "Achieved / peak FLOP/s of the compute (0 < x <= 1)", default="1",
          minimum=0, maximum=1.0, section="hardware"),
    Param("intra_node_bandwidth", "bandwidth", "Per-GPU bandwidth inside a node (e.g. 450GB/s)", required=True,
          section="hardware"),
    Param("inter_node_bandwidth", "bandwidth", "Per-GPU bandwidth across nodes (e.g. 50GB/s)", required=True,
          section="hardware"),
    Param("startup", "time", "Per-message startup α (e.g. 5us)", default="5us", section="hardware"),
)
_SPEC_PARALLEL = tuple(
    Param(name, "count", label, default="1", maximum=_MAX_DEGREE, section="parallel")
    for name, label in (("data", "Data-parallel degree"), ("tensor", "Tensor-parallel degree"),
                        ("pipeline", "Pipeline stages"), ("context", "Context-parallel degree"),
                        ("expert", "Expert-parallel degree"))
) + (
    Param("zero", "count", "ZeRO stage (0-3)", default="0", minimum=0, maximum=3, section="parallel"),
    Param("sequence_parallel", "flag", "Sequence parallelism", default="false", section="parallel"),
    Param("recompute", "choice", "Activation recomputation", default="none", choices=_memory.RECOMPUTE,
          section="parallel"),
    Param("interleave", "count", "Model chunks per stage v", default="1", maximum=1024, section="parallel"),
)
_SPEC_TRAINING = (
    Param("precision", "choice", "Precision recipe", default="bf16-adam", choices=tuple(_model.PRECISIONS),
          section="training"),
    Param("tokens", "count", "Training tokens (for the training time)", maximum=1e16, section="training"),
)


def _spec_model(v: dict) -> _model.Model:
    return _model.model(
        v["layers"], v["hidden"], v["heads"], v["vocab"], v["seq_len"], kv_heads=v["kv_heads"],
        ffn_hidden=v["ffn_hidden"], gated_mlp=v["gated_mlp"], tied_embeddings=v["tied_embeddings"],
        biases=v["biases"], learned_positions=v["learned_positions"], experts=v["experts"], top_k=v["top_k"],
        moe_layer_freq=v["moe_layer_freq"],
    )


def _spec_hardware(v: dict) -> _plan.Hardware:
    if v["compute_efficiency"] == 0:
        raise CalcError("compute_efficiency", "a number > 0 and <= 1", 0)
    return _plan.hardware(v["gpus"], v["memory"], v["flops_per_gpu"], v["intra_node_bandwidth"],
                          v["inter_node_bandwidth"], v["startup"], v["gpus_per_node"], v["compute_efficiency"])


def _compute_plan(v: dict) -> dict:
    par = _plan.parallel(v["data"], v["tensor"], v["pipeline"], v["context"], v["expert"], v["zero"],
                         v["sequence_parallel"], v["recompute"], v["interleave"])
    p = _plan.plan(_spec_model(v), v["micro_batch"], v["global_batch"], _spec_hardware(v), par, v["precision"],
                   v["tokens"])
    return p.as_dict()


_LLAMA3_8B = {
    "layers": "32", "hidden": "4096", "heads": "32", "kv_heads": "8", "ffn_hidden": "14336", "gated_mlp": "true",
    "vocab": "128256", "seq_len": "8192", "micro_batch": "1", "global_batch": "512", "gpus": "64",
    "gpus_per_node": "8", "memory": "80GB", "flops_per_gpu": "989TFLOP/s", "intra_node_bandwidth": "450GB/s",
    "inter_node_bandwidth": "50GB/s", "startup": "5us",
}

PLAN = Command(
    name="plan",
    title="Execution plan",
    params=_SPEC_MODEL + _SPEC_BATCH + _SPEC_HARDWARE + _SPEC_PARALLEL + _SPEC_TRAINING,
    results=(
        Result("step_time_s", "Step time", "seconds"),
        Result("compute_time_s", "Compute", "seconds"),
        Result("bubble_time_s", "Pipeline bubble", "seconds"),
        Result("exposed_communication_s", "Exposed communication", "seconds"),
        Result("bubble_fraction", "Bubble / ideal compute (p−1)/(v·m)", "ratio"),
        Result("microbatches_per_step", "Microbatches per step m", "microbatches"),
        Result("tokens_per_s", "Throughput", "tokens_per_s"),
        Result("mfu", "MFU", "percent"),
        Result("hfu", "HFU", "percent"),
        Result("memory_per_device", "Memory per device (most loaded stage)", "json"),
        Result("communications", "Communication per step", "json"),
        Result("stages", "What each stage holds", "json"),
        Result("uneven_split", "Uneven layer split", "text"),
        Result("parallel", "Split", "json"),
        Result("gpus", "GPUs", "GPUs"),
        Result("nodes", "Nodes", "count"),
        Result("rank_strides", "Rank strides (rank = Σ coordinate × stride)", "json"),
    ),
    compute=_compute_plan,
    example={**_LLAMA3_8B, "data": "8", "tensor": "8", "pipeline": "1", "context": "1", "expert": "1", "zero": "1",
             "sequence_parallel": "true", "recompute": "selective", "interleave": "1"},
)


def _compute_search(v: dict) -> dict:
    r = _search.search(_spec_model(v), v["global_batch"], _spec_hardware(v), v["precision"], top=v["top"],
                       max_micro_batch=v["max_micro_batch"], micro_batch=v["micro_batch"], tokens=v["tokens"])
    out = r.as_dict()
    out["refused_summary"] = _search.refusal_summary(r.refused)
    return out


SEARCH = Command(
    name="search",
    title="Configuration search",
    params=_SPEC_MODEL + (
        Param("micro_batch", "count", "Microbatch size (blank: searched)", section="batch"),
    ) + _SPEC_BATCH[1:] + _SPEC_HARDWARE + _SPEC_TRAINING + (
        Param("top", "count", "Plans to return (fastest first)", default="10", maximum=_search.MAX_TOP),
        Param("max_micro_batch", "count", "Largest microbatch tried", default="16", maximum=1024),
    ),
    results=(
        Result("plans", "Plans that fit, fastest first", "json"),
        Result("feasible", "Configurations that fit", "count"),
        Result("refused_count", "Configurations refused", "count"),
        Result("refused_by_reason", "Refused, by reason", "json"),
        Result("refused_summary", "Refused, by rule (with examples)", "json"),
    ),
    compute=_compute_search,
    example={k: x for k, x in _LLAMA3_8B.items() if k != "micro_batch"},
)

# ---------------------------------------------------------------------------- traffic


def _compute_traffic(v: dict) -> dict:
    return asdict(_traffic.layer_traffic(v["micro_batch"], v["seq_len"], v["hidden"], v["tensor_parallel"],
                                         v["bytes_per_element"]))


TRAFFIC = Command(
    name="traffic",
    title="Tensor- and pipeline-parallel traffic per layer and microbatch",
    params=(
        Param("micro_batch", "count", "Microbatch b (sequences)", default="1"),
        Param("seq_len", "count", "Sequence length s (tokens)", default="2048"),
        Param("hidden", "count", "Hidden size h", default="12288"),
        Param("tensor_parallel", "count", "Tensor-parallel degree t", default="8"),
        Param("bytes_per_element", "count", "Bytes per activation element (2 = bf16)", default="2"),
    ),
    results=(
        Result("activation_elements", "Activations b·s·h", "count"),
        Result("tp_elements_per_layer", "TP elements sent per device per layer, 8bsh(t−1)/t", "count"),
        Result("tp_bytes_per_layer", "TP bytes sent per device per layer", "bytes"),
        Result("pp_elements_per_boundary", "PP elements per stage boundary, each direction", "count"),
        Result("pp_bytes_per_boundary", "PP bytes per stage boundary, each direction", "bytes"),
    ),
    compute=_compute_traffic,
    example={"micro_batch": "1", "seq_len": "2048", "hidden": "12288", "tensor_parallel": "8"},
)


def _compute_device_memory(v: dict) -> dict:
    """Memory of the most loaded GPU from :func:`calc.plan.plan` with a cluster of exactly the split's GPUs."""
    d, t, p, c, e = v["data"], v["tensor"], v["pipeline"], v["context"], v["expert"]
    gpus = d * t * p * c * e
    if gpus > _plan.MAX_GPUS:
        raise CalcError("data", f"such that data × tensor × pipeline × context × expert <= {_plan.MAX_GPUS}", d)
    mbs = v["microbatches"] if v["microbatches"] is not None else p
    # Only memory is reported: FLOP/s and bandwidths do not change it (placeholders); nodes of up to 8.
    hw = _plan.hardware(gpus, v["memory"], 1e15, 1e11, 1e11, 0.0, math.gcd(gpus, 8))
    par = _plan.parallel(d, t, p, c, e, v["zero"], v["sequence_parallel"], v["recompute"], v["interleave"])
    pl = _plan.plan(_spec_model(v), v["micro_batch"], v["micro_batch"] * d * e * mbs, hw, par, v["precision"])
    mem = asdict(pl.memory_per_device)
    stage = next(s for s in pl.stages if s.stage == mem["stage"])
    return {**mem, "gpus": gpus, "microbatches": mbs, "params_per_device": stage.params_per_device,
            "layers_on_stage": len(stage.layers)}


DEVICE_MEMORY = Command(
    name="device-memory",
    title="Memory per GPU (model states and activations)",
    params=_SPEC_MODEL + (
        Param("micro_batch", "count", "Microbatch size b (sequences)", default="1", section="batch"),
        Param("microbatches", "count", "Microbatches per step m", help="Blank: = pipeline (enough to fill 1F1B).",
              section="batch"),
        Param("memory", "size", "Memory per GPU (e.g. 80GB)", default="80GB", section="hardware"),
    ) + _SPEC_PARALLEL + _SPEC_TRAINING[:1],
    results=(
        Result("total_bytes", "Total per GPU", "bytes"),
        Result("fits", "Fits in the GPU's memory", "text"),
        Result("binding_term", "Largest term", "text"),
        Result("params_bytes", "Weights", "bytes"),
        Result("grads_bytes", "Gradients", "bytes"),
        Result("optimizer_bytes", "Optimizer states", "bytes"),
        Result("activations_bytes", "Activations", "bytes"),
        Result("buffers_bytes", "ZeRO-3 gathered layers", "bytes"),
        Result("headroom_bytes", "Headroom (negative: over)", "bytes"),
        Result("capacity_bytes", "GPU memory", "bytes"),
        Result("total_gb", "Total per GPU in GB (10^9 B)", "ratio"),
        Result("total_gib", "Total per GPU in GiB (2^30 B)", "ratio"),
        Result("stage", "Most loaded pipeline stage", "count"),
        Result("layers_on_stage", "Layers on that stage", "count"),
        Result("params_per_device", "Parameters per GPU before ZeRO", "count"),
        Result("gpus", "GPUs (data × tensor × pipeline × context × expert)", "GPUs"),
        Result("microbatches", "Microbatches per step m", "microbatches"),
    ),
    compute=_compute_device_memory,
    example={k: x for k, x in _LLAMA3_8B.items() if k in {p.name for p in _SPEC_MODEL} | {"micro_batch", "memory"}}
    | {"data": "8", "zero": "1", "recompute": "selective"},
)

#: Every command, by its CLI name.
COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (BATCH, ALLREDUCE, MEMORY, ACTIVATIONS, FLOPS, TRAIN_TIME, BUBBLE, SCHEDULE, *GATHER_LIKE,
              ALLREDUCE_ALGORITHMS, TWO_LEVEL, PLAN, SEARCH, SCALING, CAPACITY, TRAFFIC, DEVICE_MEMORY)
}



