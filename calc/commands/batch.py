"""The ``batch`` command: global batch accounting (:mod:`calc.batch`)."""

from __future__ import annotations


from .. import batch as _batch
from ..command import Command, Param, Result
from ..errors import CalcError

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


# ---------------------------------------------------------------------------- sequences


def _compute_sequences(v: dict) -> dict:
    n = _batch.sequences_for_tokens(v["target_tokens"], v["seq_len"], multiple_of=v["multiple_of"])
    return {"sequences": n, "tokens_per_update": _batch.global_batch(n, 1, 1, seq_len=v["seq_len"]).tokens_per_update}


SEQUENCES = Command(
    name="sequences",
    title="Sequences for a token budget",
    params=(
        Param("target_tokens", "number", "Token budget per update", required=True, maximum=1e18),
        Param("seq_len", "count", "Sequence length (tokens per example)", required=True),
        Param("multiple_of", "count", "Round down to a multiple of (usually B_micro × N_dp)", default="1"),
    ),
    results=(
        Result("sequences", "Sequences per update (rounded down)", "sequences"),
        Result("tokens_per_update", "Token slots those sequences hold", "tokens"),
    ),
    compute=_compute_sequences,
    example={"target_tokens": "3.2e6", "seq_len": "2048", "multiple_of": "512"},
)
