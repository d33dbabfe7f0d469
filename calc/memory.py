"""Memory per device: model states under ZeRO, and activations.

**Model states** of ``Ψ`` parameters with a precision recipe of ``k_p``, ``k_g``,
``k_o`` bytes per parameter (weights, gradients, optimizer state; 2, 2, 12 for
the 16-byte ZeRO recipe), on a data-parallel group of ``N_d``::

    stage 0   (k_p + k_g + k_o)·Ψ
    stage 1   (k_p + k_g)·Ψ + k_o·Ψ/N_d          P_os  (= Megatron's distributed optimizer)
    stage 2   k_p·Ψ + (k_g + k_o)·Ψ/N_d          P_os+g
    stage 3   (k_p + k_g + k_o)·Ψ/N_d            P_os+g+p

Source: Rajbhandari et al. 2020, §5 and Table 1.

**Activations** per transformer layer after Korthikanti et al. 2022 (§4, Table 2),
in 16-bit elements of ``s·b·h`` (``s`` tokens per sequence on this device,
``b`` microbatch, ``h`` hidden), ``t`` = TP degree, ``a`` heads::

    no parallelism    s·b·h·(34 + 5·a·s/h)
    TP                s·b·h·(10 + 24/t + 5·a·s/(h·t))
    TP + SP           s·b·h·(34/t + 5·a·s/(h·t))
    selective         drops the 5·a·s/h term (attention scores, softmax, dropout)
    full recompute    2·s·b·h per layer (its input; /t with SP)

The general form used here keeps the paper's accounting (each operator keeps
its input; dropout masks take one byte) for any MLP width ``f``, a gated MLP
and grouped-query attention (``r = h_kv/h``; when ``t`` exceeds the KV heads each rank holds
one replicated KV head, so ``r = t/a``)::

    replicated (÷t only with SP)   10    two norm inputs 4, QKV input 2, MLP input 2, two dropout masks 2
    split by TP                    4 + 4r  Q 2, K 2r, V 2r, output projection input 2
                                   + 4f/h  activation input and output (GeLU), or
                                   + 6f/h  gate and up (the SwiGLU input) 4f/h, its output 2f/h
    scores (÷t)                    5·a·s_q·s_k/h: softmax output 2, dropout mask 1, dropout output 2

For ``f = 4h``, ``r = 1`` these are the paper's 10 and 24. In an MoE layer the MLP
term is multiplied by ``top_k`` (each token visits ``k`` experts; capacity factor
1; dispatch buffers not counted). With context parallelism ``c`` each device
holds ``s/c`` tokens and its queries' scores against all ``s`` keys.
Dropout masks are counted as in the paper; a model trained without dropout
(``dropout=False``, as Llama is) keeps neither the two ``s·b·h`` masks (the replicated
10 becomes 8) nor, with standard attention, the probabilities' mask and dropped output
(the scores' 5 becomes 2: the softmax output alone).

Dropout probability 0 is a model without dropout: Megatron-Core's bias-dropout-add calls
``torch.nn.functional.dropout`` (``megatron/core/fusions/fused_bias_dropout.py``,
``_bias_dropout_add_func``; its embedding dropout is a ``torch.nn.Dropout``), and PyTorch's dropout at
``p == 0`` returns its input, making no mask and saving nothing for the backward pass: in eager mode ATen's
``dropout`` takes the fused kernel only when ``0 < p < 1`` (``is_fused_kernel_acceptable``) and
``_dropout_impl`` returns the input when ``p == 0`` (``aten/src/ATen/native/Dropout.cpp``); under
``torch.compile``, which Megatron-Core's ``jit_fuser`` is from PyTorch 2.2 (``megatron/core/jit.py``), the
decomposition returns ``input.clone()`` unless ``train and p != 0`` (``torch/_decomp/decompositions.py``,
``dropout``). FlashAttention keeps no dropout mask at any ``p``: its forward saves ``q``, ``k``, ``v``, the
output, the log-sum-exp and the random state, from which the backward regenerates the mask
(Dao-AILab/flash-attention ``flash_attn/flash_attn_interface.py``, ``FlashAttnFunc.forward``), so with
``attention`` flash the flag changes only the ``s·b·h`` masks.

FP8 training (``fp8``: Transformer Engine's FP8 linear layers) keeps each linear GEMM's input in fp8, one byte
per element: of the replicated term, the QKV and MLP-up inputs (10 becomes 8), of the split one the output
projection's input and the MLP-down input (``1 + f/h`` less, times ``top_k`` in an MoE layer). NVIDIA/
TransformerEngine ``pytorch/module/layernorm_linear.py``, ``linear.py`` and ``layernorm_mlp.py`` (TE 1.x) save
the fp8 copies (``ln_out``, the cast input or its transpose, ``gelu_out``) for the weight gradients.
"""

from __future__ import annotations

from dataclasses import dataclass

from .check import count
from .errors import CalcError
from .model import ATTENTION, FLASH, MAX_HIDDEN, MAX_LAYERS, MAX_SEQ_LEN, precision as _precision
from .pipeline import MAX_INTERLEAVE, check_interleave, in_flight_chunks, stage_layers
from .split import check_split

__all__ = [
    "ModelStates",
    "shard_states",
    "model_states",
    "RECOMPUTE",
    "layer_activation_bytes",
    "Activations",
    "activations",
    "check_recompute_layers",
    "check_recompute_fits",
    "MAX_PARAMS",
    "MAX_DEGREE",
    "ATTENTION",
]

#: Largest parameter count accepted: 10^15 (a thousand times GPT-3).
MAX_PARAMS = 10**15
#: Largest degree of any one kind of parallelism: 10^7.
MAX_DEGREE = 10**7
#: Activation recomputation choices (Korthikanti et al. 2022 §5).
RECOMPUTE = ("none", "selective", "full")



@dataclass(frozen=True, slots=True)
class ModelStates:
    """Bytes of model states on one device."""

    params_bytes: float
    grads_bytes: float
    optimizer_bytes: float
    model_states_bytes: float  #: the sum


def _zero_stage(zero: object) -> int:
    return count("zero", zero, minimum=0, maximum=3)


def shard_states(params: float, precision: str, zero: int, data_parallel: int) -> ModelStates:
    """``k_p·Ψ/(N_d if ZeRO-3)``, ``k_g·Ψ/(N_d if >= 2)``, ``k_o·Ψ/(N_d if >= 1)`` bytes.

    ``params`` is what the device holds before ZeRO (after TP, PP and EP).
    Source: Rajbhandari et al. 2020 §5.

    >>> shard_states(7.5e9, "bf16-adam", 1, 4).model_states_bytes / 1e9
    52.5
    """
    rec = _precision(precision)
    z = _zero_stage(zero)
    n = data_parallel
    p = rec.param_bytes * params / (n if z >= 3 else 1)
    g = rec.grad_bytes * params / (n if z >= 2 else 1)
    o = rec.optimizer_bytes * params / (n if z >= 1 else 1)
    return ModelStates(p, g, o, p + g + o)


def model_states(
    params: float,
    data_parallel: int = 1,
    zero: int = 0,
    precision: str = "bf16-adam",
    tensor_parallel: int = 1,
    pipeline_parallel: int = 1,
) -> ModelStates:
    """Per-device model states of ``Ψ/(t·p)`` parameters sharded by ZeRO over ``N_d``.

    Assumes the parameters split evenly over TP × PP, so ``t·p`` must divide ``Ψ``
    (:func:`calc.split.check_split`; ``calc.plan`` places the embeddings and the
    replicated norms exactly). The ZeRO paper's Table 1
    (7.5B, N_d = 64, in GB = 1e9 B):

    >>> [round(model_states(7.5e9, 64, z).model_states_bytes / 1e9, 2) for z in (1, 2, 3)]
    [31.41, 16.64, 1.88]
    """
    psi = count("params", params, maximum=MAX_PARAMS)
    d = count("data_parallel", data_parallel, maximum=MAX_DEGREE)
    t = count("tensor_parallel", tensor_parallel, maximum=MAX_DEGREE)
    pp = count("pipeline_parallel", pipeline_parallel, maximum=MAX_DEGREE)
    check_split(tensor=t, pipeline=pp, params=psi)
    return shard_states(psi // (t * pp), precision, _zero_stage(zero), d)


def _recompute(recompute: object) -> str:
    if recompute not in RECOMPUTE:
        raise CalcError("recompute", "one of " + ", ".join(RECOMPUTE), recompute)
    return recompute  # type: ignore[return-value]


def check_recompute_layers(recompute_layers: object, recompute: str, maximum: int = MAX_LAYERS) -> int | None:
    """``recompute_layers`` checked: blank, or a count from 0 with ``recompute`` full.

    Megatron-LM's block method (``--recompute-method block --recompute-num-layers N``) recomputes the first
    N layers of every model chunk; it applies only to full recomputation.

    >>> check_recompute_layers(None, "selective"), check_recompute_layers(3, "full")
    (None, 3)
    >>> check_recompute_layers(3, "selective")
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: recompute_layers must be blank unless recompute is full (recompute is selective: it applies to every layer), got 3
    """
    if recompute_layers is None:
        return None
    n = count("recompute_layers", recompute_layers, minimum=0, maximum=maximum)
    if recompute != "full":
        raise CalcError("recompute_layers", f"blank unless recompute is full (recompute is {recompute}: it "
                        "applies to every layer)", n)
    return n


def check_recompute_fits(recompute_layers: int, largest_chunk: int) -> None:
    """``recompute_layers`` at most ``largest_chunk``, the layers of the largest model chunk (``plan`` and
    :func:`activations` alike).

    >>> check_recompute_fits(4, 3)
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: recompute_layers must be at most 3, the layers of the largest model chunk (layers per stage / interleave), got 4
    """
    if recompute_layers > largest_chunk:
        raise CalcError("recompute_layers", f"at most {largest_chunk}, the layers of the largest model chunk (layers "
                        "per stage / interleave)", recompute_layers)


def layer_activation_bytes(
    seq_len: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    *,
    tensor_parallel: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    kv_heads: int | None = None,
    ffn_hidden: int | None = None,
    gated_mlp: bool = False,
    context_parallel: int = 1,
    moe_top_k: int = 0,
    activation_bytes: int = 2,
    attention: str = "standard",
    dropout: bool = True,
    fp8: bool = False,
) -> float:
    """Bytes one layer keeps for its backward: ``s·b·h·(34 + 5·a·s/h)`` without parallelism.

    The general form is in the module docstring; ``moe_top_k > 0`` marks an MoE
    layer (MLP term × k). ``activation_bytes`` scales the paper's 16-bit figures.
    ``attention="flash"`` (or ``"flash3"``) keeps no scores (as selective recomputation) but FlashAttention's
    fp32 log-sum-exp, ``4·a·s·b/t`` bytes (Dao 2023, Algorithm 1). ``dropout=False`` keeps no dropout masks.
    ``fp8`` keeps the linear GEMMs' inputs in fp8 (the module docstring).
    Source: Korthikanti et al. 2022, §4.1-4.2 and Table 2.

    The GPT-3 layer of the paper (``s`` 2048, ``b`` 1, ``h`` 12288, ``a`` 96, ``t`` 8):

    >>> layer_activation_bytes(2048, 1, 12288, 96)
    2868903936.0
    >>> layer_activation_bytes(2048, 1, 12288, 96, tensor_parallel=8, sequence_parallel=True, recompute="selective")
    106954752.0
    """
    s = count("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    b = count("micro_batch", micro_batch)
    h = count("hidden", hidden, maximum=MAX_HIDDEN)
    a = count("heads", heads, maximum=MAX_HIDDEN)
    t = count("tensor_parallel", tensor_parallel, maximum=MAX_DEGREE)
    c = count("context_parallel", context_parallel, maximum=MAX_DEGREE)
    kv = a if kv_heads is None else count("kv_heads", kv_heads, maximum=MAX_HIDDEN)
    f = 4 * h if ffn_hidden is None else count("ffn_hidden", ffn_hidden, maximum=16 * MAX_HIDDEN)
    mode = _recompute(recompute)
    if attention not in ATTENTION:
        raise CalcError("attention", "one of " + ", ".join(ATTENTION), attention)
    sp = 1 if not sequence_parallel else t
    s_local = s / c
    sbh = s_local * b * h
    scale = activation_bytes / 2
    if mode == "full":
        return scale * 2 * sbh / sp
    r = max(kv / a, t / a)  # K and V width per rank is max(h_kv/t, d): replicated when t > kv_heads
    mlp = (6 if gated_mlp else 4) * f / h * (moe_top_k or 1)
    sharded = 4 + 4 * r + mlp - (1 + f / h * (moe_top_k or 1) if fp8 else 0)  # fp8: the module docstring
    replicated = (10 if dropout else 8) - (2 if fp8 else 0)
    if attention in FLASH:
        return scale * sbh * (replicated / sp + sharded / t) + 4 * a * s_local * b / t
    scores = 0.0 if mode == "selective" else (5 if dropout else 2) * a * s_local * s * b / t
    return scale * (sbh * (replicated / sp + sharded / t) + scores)


def _first_chunk(l: int, p: int, v: int, recompute_layers: int | None) -> tuple[int, int]:
    """(layers of a model chunk of the first stage, how many of them recompute): ``l/(p·v)`` with interleaving
    (which must divide), else the first stage's layers; ``recompute_layers`` blank recomputes all of them, else at
    most the largest chunk's layers, as ``plan`` requires (:func:`calc.plan.check_combination`)."""
    if v > 1:
        if l % (p * v):
            raise CalcError("layers", f"a multiple of pipeline_parallel × interleave = {p * v}", l)
        chunk = largest = l // (p * v)
    else:
        chunk, largest = stage_layers(l, p)[0], max(stage_layers(l, p))
    if recompute_layers is None:
        return chunk, chunk
    check_recompute_fits(recompute_layers, largest)
    return chunk, min(recompute_layers, chunk)


@dataclass(frozen=True, slots=True)
class Activations:
    """Activation memory of the first pipeline stage under 1F1B."""

    per_layer_bytes: float  #: one layer, one microbatch (Korthikanti et al. 2022)
    layers_in_flight: float  #: layer-microbatches the first stage keeps at its peak
    in_flight_factor: float  #: layers_in_flight / l (1 + (p−1)/(p·v) with interleaving)
    stored_bytes: float  #: per_layer_bytes × layers_in_flight
    recompute_working_bytes: float  #: full recompute: one layer's activations live while it is recomputed
    total_bytes: float  #: stored + working
    #: layers of each of the first stage's model chunks that recompute: all with selective or full recomputation,
    #: ``recompute_layers`` when it is given, none without recomputation
    recomputed_layers: int


def activations(seq_len: int, micro_batch: int, hidden: int, heads: int, layers: int, *, tensor_parallel: int = 1,
                sequence_parallel: bool = False, recompute: str = "none", pipeline_parallel: int = 1,
                interleave: int = 1, microbatches: int | None = None, kv_heads: int | None = None,
                ffn_hidden: int | None = None, gated_mlp: bool = False, context_parallel: int = 1,
                recompute_layers: int | None = None, attention: str = "standard",
                dropout: bool = True) -> Activations:
    """First stage under 1F1B: ``per_layer × (l/p) × min(p, m)`` = ``l`` layers' worth when ``m >= p``.

    Interleaved: ``× (1 + (p−1)/(p·v))`` (``l`` must split into ``p·v`` chunks). The split must
    divide the model as :func:`calc.split.check_split` says (as ``plan`` requires).
    ``microbatches`` blank means enough to fill the warm-up (``m >= 2p``). With full recomputation one layer's
    full activations also live during its recomputation (counted once).
    ``recompute_layers`` N (with ``recompute`` full; at most the layers of the largest model chunk, as
    ``plan`` requires) is Megatron-LM's block method: the first N layers of each model chunk keep only their
    input, the other ``chunk − N`` keep everything (``recompute`` none), so ``per_layer_bytes`` is the chunk's
    average, ``(N·full + (chunk − N)·none) / chunk``; the working set is counted when N > 0.
    ``attention`` and ``dropout`` are :func:`layer_activation_bytes`'s: the default, standard attention
    with dropout masks, is the paper's accounting; ``attention="flash"`` keeps no s² scores (nor does the
    layer being recomputed under full recomputation).
    Source: Korthikanti et al. 2022, §4.2.2 (pipeline parallelism) and §5.

    >>> a = activations(2048, 1, 12288, 96, 96, tensor_parallel=8, sequence_parallel=True,
    ...                 recompute="selective", pipeline_parallel=8)
    >>> a.per_layer_bytes, a.layers_in_flight, a.total_bytes / 2**30
    (106954752.0, 96, 9.5625)
    """
    common = dict(tensor_parallel=tensor_parallel, kv_heads=kv_heads, ffn_hidden=ffn_hidden,
                  gated_mlp=gated_mlp, context_parallel=context_parallel, attention=attention,
                  dropout=dropout)
    per_layer = layer_activation_bytes(seq_len, micro_batch, hidden, heads, sequence_parallel=sequence_parallel,
                                       recompute=recompute, **common)
    n_block = check_recompute_layers(recompute_layers, recompute)
    l = count("layers", layers, maximum=MAX_LAYERS)
    p = count("pipeline_parallel", pipeline_parallel, maximum=MAX_DEGREE)
    a = count("heads", heads, maximum=MAX_HIDDEN)  # checked by layer_activation_bytes; whole numbers here
    check_split(tensor=count("tensor_parallel", tensor_parallel, maximum=MAX_DEGREE), pipeline=p,
                context=count("context_parallel", context_parallel, maximum=MAX_DEGREE),
                sequence_parallel=bool(sequence_parallel), heads=a,
                kv_heads=None if kv_heads is None else count("kv_heads", kv_heads, maximum=MAX_HIDDEN),
                ffn_hidden=None if ffn_hidden is None else count("ffn_hidden", ffn_hidden, maximum=16 * MAX_HIDDEN),
                hidden=count("hidden", hidden, maximum=MAX_HIDDEN), seq_len=count("seq_len", seq_len, maximum=MAX_SEQ_LEN),
                layers=l)
    v = count("interleave", interleave, maximum=MAX_INTERLEAVE)
    m = 2 * p * v if microbatches is None else count("microbatches", microbatches)
    check_interleave(p, m, v)
    chunk_layers, n_rec = _first_chunk(l, p, v, n_block)
    in_flight = in_flight_chunks(0, p, m, v) * chunk_layers
    working = 0.0
    if recompute == "full":
        everything = layer_activation_bytes(seq_len, micro_batch, hidden, heads,
                                            sequence_parallel=sequence_parallel, recompute="none", **common)
        working = everything if n_rec else 0.0
        if n_rec == 0:
            per_layer = everything
        elif n_rec < chunk_layers:
            per_layer = (n_rec * per_layer + (chunk_layers - n_rec) * everything) / chunk_layers
    stored = per_layer * in_flight
    return Activations(per_layer, in_flight, in_flight / l, stored, working, stored + working,
                       0 if recompute == "none" else n_rec)
