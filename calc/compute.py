"""Compute: FLOPs per iteration, training time, MFU and HFU.

A forward pass of one sequence of ``s`` tokens costs two FLOPs per multiply-add::

    per layer   2·s·(2h² + 2h·h_kv + (2 or 3)·h·f·k + h·E) + 4·s²·h
    logits      2·s·h·V

(QKV and output projections, the MLP of the ``k`` experts a token visits, the
router, then ``QKᵀ`` and attention over ``V``: ``2·s²·h`` each, counted in full
as Megatron and PaLM do, not halved for the causal mask). The backward pass costs
twice the forward. Training therefore costs 3 forward passes; with full
recomputation the layers run forward a second time (4 passes, the logits still
3); with selective recomputation only ``QKᵀ`` and attention over ``V`` are redone.

For ``f = 4h``, ``h_kv = h``, dense: ``72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h))``
without recomputation and Narayanan et al.'s Eq. 3,
``96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h))``, with it.

*Model* FLOPs (for MFU) exclude recomputation; *hardware* FLOPs (for HFU)
include it (Chowdhery et al. 2022, PaLM, Appendix B; Korthikanti et al. 2022 §6).
"""

from __future__ import annotations

from dataclasses import dataclass

from .check import MAX_RATE, MAX_SECONDS, count, real
from .errors import CalcError
from .memory import MAX_DEGREE, MAX_PARAMS, RECOMPUTE
from .model import Model

__all__ = [
    "Flops",
    "layer_forward_flops",
    "training_flops",
    "megatron_flops",
    "TrainTime",
    "train_time",
    "percent_of_peak",
    "utilization",
    "MAX_TOKENS",
]

#: Largest token count accepted: 10^16.
MAX_TOKENS = 10**16


@dataclass(frozen=True, slots=True)
class Flops:
    """FLOPs of one iteration (one optimizer step over the global batch)."""

    forward_flops: float  #: one forward pass over the batch
    model_flops: float  #: 3 passes: forward + backward (2×); the MFU numerator
    hardware_flops: float  #: model_flops + recomputation; the HFU numerator
    flops_per_token: float  #: model_flops / tokens
    recompute_flops: float  #: what recomputation adds


def layer_forward_flops(m: Model, moe: bool = False) -> tuple[float, float]:
    """Forward FLOPs of one layer for one sequence: (matrix multiplies, attention core ``4·s²·h``).

    >>> from calc.model import model
    >>> layer_forward_flops(model(1, 4, 1, 8, 2))
    (768, 64)
    """
    h, s = m.hidden, m.seq_len
    mlp = (3 if m.gated_mlp else 2) * h * m.ffn_hidden
    matmul = 2 * h * h + 2 * h * m.kv_hidden + (mlp * m.top_k + h * m.experts if moe else mlp)
    return 2 * s * matmul, 4 * s * s * h


def training_flops(m: Model, sequences: int, recompute: str = "none") -> Flops:
    """``F = 3·(Σ layers + 2·s·h·V)·B`` model FLOPs; recomputation adds a forward of the layers (full).

    ``sequences`` is the global batch ``B``. Source: Narayanan et al. 2021 §5.1 and
    Appendix (Eq. 3); Korthikanti et al. 2022 §6 (selective recomputation's cost).

    >>> from calc.model import model
    >>> gpt3 = model(96, 12288, 96, 51200, 2048)
    >>> f"{training_flops(gpt3, 1536, 'full').hardware_flops:.4e}"
    '4.5110e+18'
    """
    b = count("global_batch", sequences, maximum=10**12)
    if recompute not in RECOMPUTE:
        raise CalcError("recompute", "one of " + ", ".join(RECOMPUTE), recompute)
    n_moe = m.moe_layers_in(0, m.layers)
    dense_mm, core = layer_forward_flops(m)
    moe_mm, _ = layer_forward_flops(m, moe=True)
    layers = (m.layers - n_moe) * (dense_mm + core) + n_moe * (moe_mm + core)
    logits = 2 * m.seq_len * m.hidden * m.vocab
    forward = b * (layers + logits)
    model_flops = 3 * forward
    if recompute == "full":
        extra = b * layers
    elif recompute == "selective":
        extra = b * m.layers * core
    else:
        extra = 0
    return Flops(forward, model_flops, model_flops + extra, model_flops / (b * m.seq_len), extra)


def megatron_flops(global_batch: int, seq_len: int, layers: int, hidden: int, vocab: int,
                   recompute: str = "full") -> float:
    """Eq. 3: ``96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h))`` FLOPs per iteration with full recomputation.

    Without: ``72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h))``. Source: Narayanan et al. 2021, Eq. 3.

    >>> f"{megatron_flops(1536, 2048, 96, 12288, 51200):.4e}", f"{megatron_flops(512, 2048, 24, 2304, 51200):.4e}"
    ('4.5110e+18', '1.5467e+16')
    """
    B = count("global_batch", global_batch, maximum=10**12)
    s, l, h, V = (count(n, x, maximum=10**8) for n, x in
                  (("seq_len", seq_len), ("layers", layers), ("hidden", hidden), ("vocab", vocab)))
    if recompute == "full":
        return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
    if recompute == "none":
        return 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))
    raise CalcError("recompute", "full or none (Eq. 3 has no selective form)", recompute)


@dataclass(frozen=True, slots=True)
class TrainTime:
    """End-to-end training time of Eq. 4."""

    seconds: float
    days: float
    total_flops: float  #: 8·T·P (recomputation) or 6·T·P


def train_time(params: float, tokens: float, gpus: int, flops_per_gpu: float,
               recompute: str = "full") -> TrainTime:
    """Eq. 4: ``≈ 8·T·P/(n·X)`` seconds with recomputation, ``6·T·P/(n·X)`` without.

    ``T`` tokens, ``P`` parameters, ``n`` GPUs, ``X`` *achieved* FLOP/s per GPU.
    Source: Narayanan et al. 2021, Eq. 4 (6ND: Kaplan et al. 2020 §2.1).

    >>> round(train_time(175e9, 300e9, 1024, 140e12).days, 2)
    33.91
    """
    p = count("params", params, maximum=MAX_PARAMS)
    t = count("tokens", tokens, maximum=MAX_TOKENS)
    n = count("gpus", gpus, maximum=MAX_DEGREE)
    x = real("flops_per_gpu", flops_per_gpu, maximum=MAX_RATE, unit="FLOP/s")
    if recompute not in ("full", "none"):
        raise CalcError("recompute", "full or none (Eq. 4 has no selective form)", recompute)
    total = (8 if recompute == "full" else 6) * t * p
    seconds = total / (n * x)
    return TrainTime(seconds, seconds / 86400, total)


def percent_of_peak(achieved: float, peak: float) -> float:
    """``100·X/X_peak`` (%).

    >>> round(percent_of_peak(137e12, 312e12), 1)
    43.9
    """
    x = real("achieved", achieved, maximum=MAX_RATE, allow_minimum=True, unit="FLOP/s")
    return 100 * x / real("peak", peak, maximum=MAX_RATE, unit="FLOP/s")


def utilization(flops_per_step: float, step_time_s: float, gpus: int, peak_flops_per_gpu: float) -> float:
    """``F/(T·n·X_peak)``: MFU with model FLOPs, HFU with hardware FLOPs (a fraction).

    Source: Chowdhery et al. 2022 (PaLM), Appendix B.

    >>> round(utilization(4.5110e18, 30.0, 1024, 312e12), 3)
    0.471
    """
    f = real("flops_per_step", flops_per_step, maximum=1e30, allow_minimum=True, unit="FLOP")
    t = real("step_time_s", step_time_s, maximum=MAX_SECONDS, unit="s")
    n = count("gpus", gpus, maximum=MAX_DEGREE)
    return f / (t * n * real("peak", peak_flops_per_gpu, maximum=MAX_RATE, unit="FLOP/s"))
