"""Global batch accounting.

``B_global = B_micro × N_accumulation × N_dp`` examples per optimizer update.

Only data-parallel replicas multiply the batch: tensor-, pipeline- and
context-parallel workers cooperate on the *same* examples, so with ``G`` GPUs
``N_dp = G / (TP × PP × CP)``. The formula assumes every microbatch holds
``B_micro`` examples and every replica runs the same number of accumulation
steps; uneven microbatches and sequence packing need the explicit accounting of
:func:`uneven_batch` and :func:`packed_batch`.

Sources: Goyal et al. 2017, "Accurate, Large Minibatch SGD" (§2, minibatch =
per-worker batch × workers); Narayanan et al. 2021, "Efficient Large-Scale
Language Model Training on GPU Clusters Using Megatron-LM" (§2: ``B = b × m × d``
with ``n = p·t·d`` GPUs); Hugging Face, "The Ultra-Scale Playbook" (batch size
section: ``gbs = mbs × grad_acc × dp``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .check import MAX_COUNT, count, fraction, real
from .errors import CalcError

__all__ = [
    "GlobalBatch",
    "global_batch",
    "data_parallel_degree",
    "accumulation_for",
    "sequences_for_tokens",
    "UnevenBatch",
    "uneven_batch",
    "PackedBatch",
    "packed_batch",
]


@dataclass(frozen=True, slots=True)
class GlobalBatch:
    """The nominal batch of one optimizer update."""

    micro_batch: int  #: examples per microbatch, per replica
    accumulation: int  #: microbatches per update, per replica
    data_parallel: int  #: replicas
    global_batch: int  #: examples per update, all replicas
    tokens_per_update: int | None  #: token slots per update (examples × seq_len), or None


def global_batch(
    micro_batch: int, accumulation: int, data_parallel: int, seq_len: int | None = None
) -> GlobalBatch:
    """``B_global = B_micro × N_accumulation × N_dp`` (examples/update).

    With ``seq_len`` (tokens/example) also ``tokens = B_global × seq_len``.
    Source: Narayanan et al. 2021 §2; Ultra-Scale Playbook.

    >>> global_batch(8, 16, 64).global_batch
    8192
    >>> global_batch(1, 1536, 1, seq_len=2048).tokens_per_update
    3145728
    """
    b = count("micro_batch", micro_batch)
    m = count("accumulation", accumulation)
    d = count("data_parallel", data_parallel)
    total = b * m * d
    if total > MAX_COUNT:
        raise CalcError("micro_batch × accumulation × data_parallel", f"<= {MAX_COUNT}", total)
    tokens = None
    if seq_len is not None:
        tokens = total * count("seq_len", seq_len)
    return GlobalBatch(b, m, d, total, tokens)


def data_parallel_degree(
    gpus: int, tensor_parallel: int = 1, pipeline_parallel: int = 1, context_parallel: int = 1
) -> int:
    """``N_dp = G / (TP × PP × CP)``; the product must divide the GPU count.

    Source: Narayanan et al. 2021 §2 (``n = p·t·d``), extended by a context-parallel factor.

    >>> data_parallel_degree(16, tensor_parallel=2, pipeline_parallel=2)
    4
    >>> data_parallel_degree(16, tensor_parallel=3)
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: gpus must be divisible by tensor_parallel × pipeline_parallel × context_parallel = 3, got 16
    """
    g = count("gpus", gpus)
    t = count("tensor_parallel", tensor_parallel)
    p = count("pipeline_parallel", pipeline_parallel)
    c = count("context_parallel", context_parallel)
    model = t * p * c
    if g % model:
        raise CalcError(
            "gpus",
            f"divisible by tensor_parallel × pipeline_parallel × context_parallel = {model}",
            g,
        )
    return g // model


def accumulation_for(target_global_batch: int, micro_batch: int, data_parallel: int) -> int:
    """The inverse: ``N_accumulation = B_global / (B_micro × N_dp)``, which must be whole.

    >>> accumulation_for(1024, 2, 128), accumulation_for(1024, 2, 512)
    (4, 1)
    >>> accumulation_for(1000, 2, 128)
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: target_global_batch must be a multiple of micro_batch × data_parallel = 256, got 1000
    """
    target = count("target_global_batch", target_global_batch)
    per_step = count("micro_batch", micro_batch) * count("data_parallel", data_parallel)
    if target % per_step:
        raise CalcError(
            "target_global_batch", f"a multiple of micro_batch × data_parallel = {per_step}", target
        )
    return target // per_step


def sequences_for_tokens(target_tokens: float, seq_len: int, multiple_of: int = 1) -> int:
    """Sequences per update for a token budget: ``floor(T / (s · k)) · k`` (rounded down).

    ``multiple_of`` (``k``) is the granularity the batch must divide into, usually
    ``B_micro × N_dp``. GPT-3's 3.2M-token batch at s = 2048 is 1562.5 sequences;
    Narayanan et al. 2021 (§5.4.3) trained with 1536, a multiple of 512.

    >>> sequences_for_tokens(3.2e6, 2048, multiple_of=512)
    1536
    >>> sequences_for_tokens(4 * 2**20, 4096)
    1024
    """
    tokens = real("target_tokens", target_tokens, maximum=1e18, unit="tokens")
    s = count("seq_len", seq_len)
    k = count("multiple_of", multiple_of)
    n = int(tokens // (s * k)) * k
    if n < 1:
        raise CalcError("target_tokens", f">= seq_len × multiple_of = {s * k} tokens", target_tokens)
    if n > MAX_COUNT:  # a global batch holds at most MAX_COUNT sequences (:func:`global_batch`)
        raise CalcError("target_tokens", f"<= seq_len × {MAX_COUNT} sequences = {s * MAX_COUNT} tokens",
                        target_tokens)
    return n


@dataclass(frozen=True, slots=True)
class UnevenBatch:
    """Explicit accounting when microbatches differ in size."""

    data_parallel: int  #: replicas
    accumulation: int  #: microbatches per replica per update
    nominal_examples: int  #: B_micro × N_accumulation × N_dp
    effective_examples: int  #: the sum of the actual microbatch sizes
    per_replica_examples: tuple[int, ...]  #: examples each replica contributes
    effective_fraction: float  #: effective / nominal


def uneven_batch(micro_batch: int, microbatch_sizes: Sequence[Sequence[int]]) -> UnevenBatch:
    """``B_eff = Σ_r Σ_j b_rj`` examples/update, against the nominal ``B_micro × N_acc × N_dp``.

    ``microbatch_sizes[r][j]`` is the size of microbatch ``j`` on replica ``r``;
    each is in ``[0, micro_batch]`` and every replica runs the same number of steps
    (synchronous data parallelism). A loss averaged per microbatch then weights
    examples unequally; sum losses and divide by ``B_eff`` to keep them equal.

    >>> u = uneven_batch(8, [[8, 8, 5], [8, 8, 8]])
    >>> u.nominal_examples, u.effective_examples
    (48, 45)
    """
    b = count("micro_batch", micro_batch)
    if isinstance(microbatch_sizes, (str, bytes)) or not isinstance(microbatch_sizes, Sequence):
        raise CalcError("microbatch_sizes", "a list of per-replica lists of sizes", microbatch_sizes)
    if not microbatch_sizes:
        raise CalcError("microbatch_sizes", "at least one replica", microbatch_sizes)
    steps = None
    per_replica = []
    for r, row in enumerate(microbatch_sizes):
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence) or not row:
            raise CalcError(f"microbatch_sizes[{r}]", "a non-empty list of sizes", row)
        if steps is None:
            steps = len(row)
        elif len(row) != steps:
            raise CalcError(
                f"microbatch_sizes[{r}]", f"{steps} microbatches like replica 0", len(row)
            )
        sizes = [count(f"microbatch_sizes[{r}][{j}]", x, minimum=0, maximum=b) for j, x in enumerate(row)]
        per_replica.append(sum(sizes))
    d = count("data_parallel", len(microbatch_sizes))
    m = count("accumulation", steps)
    nominal = b * m * d
    effective = sum(per_replica)
    return UnevenBatch(d, m, nominal, effective, tuple(per_replica), effective / nominal)


@dataclass(frozen=True, slots=True)
class PackedBatch:
    """Explicit accounting when several examples are packed into each sequence."""

    sequences: int  #: packed sequences per update (0 allowed: an empty update)
    effective_examples: float  #: sequences × examples_per_sequence
    token_slots: int  #: sequences × seq_len, padding included
    real_tokens: float  #: token_slots × (1 − padding_fraction)


def packed_batch(
    sequences: int, seq_len: int, examples_per_sequence: float = 1.0, padding_fraction: float = 0.0
) -> PackedBatch:
    """``examples = sequences × e``; ``real tokens = sequences × s × (1 − f_pad)``.

    ``e`` is the mean number of examples packed into one sequence (>= 1);
    ``f_pad`` the share of token slots that are padding. Source: Krell et al. 2021,
    "Efficient Sequence Packing without Cross-contamination".

    >>> p = packed_batch(1024, 4096, examples_per_sequence=3.5, padding_fraction=0.02)
    >>> p.effective_examples, p.token_slots
    (3584.0, 4194304)
    """
    n = count("sequences", sequences, minimum=0)
    s = count("seq_len", seq_len)
    e = real("examples_per_sequence", examples_per_sequence, minimum=1.0, allow_minimum=True, maximum=1e6)
    f = fraction("padding_fraction", padding_fraction)
    slots = n * s
    return PackedBatch(n, n * e, slots, slots * (1.0 - f))
