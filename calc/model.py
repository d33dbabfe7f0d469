"""Transformer architecture, parameter counts and precision recipes.

A decoder-only transformer of ``l`` layers, hidden size ``h``, ``a`` query heads
and ``a_kv`` key/value heads (grouped-query attention: ``a_kv`` divides ``a``),
an MLP of width ``f`` (two matrices, or three when gated as in SwiGLU), a
vocabulary ``V`` and a sequence length ``s``. A mixture of experts replaces the
MLP of every ``moe_layer_freq``-th layer (layers 0, k, 2k, ...; Megatron-Core's
``--moe-layer-freq``) by ``experts`` copies, of which each token uses ``top_k``.

Parameters per layer (``d = h/a`` the head size, ``h_kv = a_kv·d``)::

    attention  2h² + 2h·h_kv                 (Q and O are h×h; K and V are h×h_kv)
    MLP        2h·f, or 3h·f when gated      (per expert in an MoE layer)
    router     h·experts                     (MoE layers only)
    norms      2h (+2h of biases)            (two per layer; LayerNorm has biases, RMSNorm none)
    biases     h + 2h_kv + h + f + h, or with a gated MLP 2f instead of f (only when ``biases``)

plus the word embedding ``V·h``, an output head ``V·h`` unless tied, learned
position embeddings ``s·h`` when ``learned_positions`` (GPT-2/3; rotary
embeddings have none) and a final norm ``h`` (+``h``).

With ``biases``, ``learned_positions``, tied embeddings and ``f = 4h`` this is
Megatron's Eq. 2, ``12lh²(1 + 13/(12h) + (V+s)/(12lh))``, plus the final norm's
``2h`` that Eq. 2 leaves out. Sources: Narayanan et al. 2021, SC'21, Eq. 2;
Touvron et al. 2023 (Llama 2); Llama 3 model card; Jiang et al. 2024 (Mixtral).
"""

from __future__ import annotations

from dataclasses import dataclass

from .check import count
from .errors import CalcError

#: Attention kernels: FlashAttention-2 ("flash"), FlashAttention-3 or cuDNN's fused attention on Hopper and
#: Blackwell ("flash3"), FlashAttention in Triton ("triton", llm-foundry's ``attn_impl: triton``), none keeping the s²
#: scores; or the standard kernels that do (Korthikanti's accounting).
ATTENTION = ("flash", "flash3", "triton", "standard")
#: The attention kernels that keep no s² scores.
FLASH = ("flash", "flash3", "triton")
#: How the element-wise work (norms, activations, rotary embeddings, residual adds) runs: "fused" kernels
#: (Megatron-LM's and Transformer Engine's, or ``torch.compile``) read their inputs and write their outputs once;
#: "eager" PyTorch runs each operation of the model's code as its own kernel (:mod:`calc.work`).
KERNELS = ("fused", "eager")
#: The layer norms: LayerNorm (one kernel even in eager PyTorch) or RMSNorm (in eager PyTorch, the Llama
#: reference code's composition of casts, ``pow``, ``mean``, ``rsqrt`` and products in fp32).
NORMS = ("layernorm", "rmsnorm")

__all__ = [
    "Model",
    "model",
    "LayerParams",
    "layer_params",
    "ParamCount",
    "param_count",
    "megatron_params",
    "Precision",
    "PRECISIONS",
    "precision",
    "MAX_LAYERS",
    "MAX_HIDDEN",
    "MAX_VOCAB",
    "MAX_SEQ_LEN",
    "MAX_EXPERTS",
    "ATTENTION",
    "FLASH",
    "KERNELS",
    "NORMS",
]

#: Documented limits of the model description (beyond any published model by 10-100x).
MAX_LAYERS = 10_000
MAX_HIDDEN = 1_000_000
MAX_VOCAB = 10_000_000
MAX_SEQ_LEN = 100_000_000
MAX_EXPERTS = 100_000


@dataclass(frozen=True, slots=True)
class Model:
    """A validated architecture. Build it with :func:`model`."""

    layers: int  #: l, transformer layers
    hidden: int  #: h
    heads: int  #: a, query heads
    kv_heads: int  #: a_kv, key/value heads (a_kv = a: multi-head; 1: multi-query)
    ffn_hidden: int  #: f, MLP width (per expert)
    gated_mlp: bool  #: SwiGLU-style MLP with three matrices
    vocab: int  #: V
    seq_len: int  #: s, tokens per sequence
    tied_embeddings: bool  #: output head shares the word embedding
    biases: bool  #: linear layers and norms carry biases (GPT-2/3, Megatron GPT); False: Llama
    learned_positions: bool  #: learned position embeddings s·h (GPT-2/3); False: rotary
    experts: int  #: experts per MoE layer (1: dense)
    top_k: int  #: experts per token
    moe_layer_freq: int  #: every k-th layer (0, k, 2k, ...) is an MoE layer
    #: the attention kernel: flash (FlashAttention-2), flash3 (FlashAttention-3 class), triton (FlashAttention in
    #: Triton), standard
    attention: str = "flash"
    #: dropout after attention, MLP and the attention probabilities (GPT-3); False: Llama, or dropout probability 0,
    #: at which PyTorch's dropout returns its input and keeps no mask (:mod:`calc.memory`)
    dropout: bool = True
    kernels: str = "fused"  #: element-wise kernels: fused, or eager PyTorch (one kernel per operation)
    norm: str = "layernorm"  #: layernorm or rmsnorm (the same work when fused; not in eager PyTorch)

    @property
    def head_dim(self) -> int:
        """d = h / a."""
        return self.hidden // self.heads

    @property
    def kv_hidden(self) -> int:
        """h_kv = a_kv · d, the width of K (and of V)."""
        return self.kv_heads * self.head_dim

    def moe_layers_in(self, start: int, stop: int) -> int:
        """How many of layers ``start .. stop-1`` are MoE layers (0 for a dense model).

        >>> model(4, 64, 4, 100, 16, experts=8, top_k=2, moe_layer_freq=2).moe_layers_in(0, 4)
        2
        """
        if self.experts == 1:
            return 0
        k = self.moe_layer_freq
        return -(-stop // k) - (-(-start // k))


def model(
    layers: int, hidden: int, heads: int, vocab: int, seq_len: int, *, kv_heads: int | None = None,
    ffn_hidden: int | None = None, gated_mlp: bool = False, tied_embeddings: bool = False, biases: bool = False,
    learned_positions: bool = False, experts: int = 1, top_k: int = 1, moe_layer_freq: int = 1,
    attention: str = "flash", dropout: bool = True, kernels: str = "fused", norm: str = "layernorm",
) -> Model:
    """Check an architecture: ``a`` divides ``h``, ``a_kv`` divides ``a``, ``k <= experts``.

    Defaults: ``kv_heads = heads``, ``ffn_hidden = 4·hidden``, no gating, untied,
    no biases, rotary positions, dense, FlashAttention, dropout (as Korthikanti et al. count it; a model
    trained without dropout, as Llama is, keeps no dropout masks), fused element-wise kernels, LayerNorm.

    >>> m = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
    >>> m.head_dim, m.kv_hidden
    (128, 1024)
    >>> model(2, 100, 3, 10, 8)
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: heads must be a divisor of hidden (100), got 3
    """
    l = count("layers", layers, maximum=MAX_LAYERS)
    h = count("hidden", hidden, maximum=MAX_HIDDEN)
    a = count("heads", heads, maximum=MAX_HIDDEN)
    v = count("vocab", vocab, maximum=MAX_VOCAB)
    s = count("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    if h % a:
        raise CalcError("heads", f"a divisor of hidden ({h})", a)
    kv = a if kv_heads is None else count("kv_heads", kv_heads, maximum=MAX_HIDDEN)
    if a % kv:
        raise CalcError("kv_heads", f"a divisor of heads ({a})", kv)
    f = 4 * h if ffn_hidden is None else count("ffn_hidden", ffn_hidden, maximum=16 * MAX_HIDDEN)
    e = count("experts", experts, maximum=MAX_EXPERTS)
    k = count("top_k", top_k, maximum=MAX_EXPERTS)
    if k > e:
        raise CalcError("top_k", f"<= experts ({e})", k)
    freq = count("moe_layer_freq", moe_layer_freq, maximum=MAX_LAYERS)
    flags = {"gated_mlp": gated_mlp, "tied_embeddings": tied_embeddings, "biases": biases,
             "learned_positions": learned_positions, "dropout": dropout}
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise CalcError(name, "true or false", value)
    for name, value, allowed in (("attention", attention, ATTENTION), ("kernels", kernels, KERNELS),
                                 ("norm", norm, NORMS)):
        if value not in allowed:
            raise CalcError(name, "one of " + ", ".join(allowed), value)
    return Model(l, h, a, kv, f, gated_mlp, v, s, tied_embeddings, biases, learned_positions, e, k, freq,
                 attention, dropout, kernels, norm)


@dataclass(frozen=True, slots=True)
class LayerParams:
    """Parameters of one layer, split by how tensor parallelism treats them.

    Column-parallel weights and biases (QKV, MLP up/gate) and row-parallel
    weights (O, MLP down) are split ``t`` ways; row-parallel biases, norms and
    the router are replicated on every TP rank (Shoeybi et al. 2019, §3).
    """

    attention_sharded: int  #: QKV and O matrices, QKV biases
    mlp_sharded: int  #: one MLP's matrices and column-parallel biases (one expert's, in an MoE layer)
    replicated: int  #: norms, row-parallel biases, router (per layer)
    mlp_replicated: int  #: one MLP's row-parallel bias (per expert)


def layer_params(m: Model, moe: bool = False) -> LayerParams:
    """Split one layer's parameters into TP-sharded and replicated parts.

    ``attention = 2h² + 2h·h_kv (+h + 2h_kv)``, ``MLP = (2 or 3)·h·f (+f or 2f)``,
    ``replicated = 2h (+2h) (+h +h) (+h·experts)``. Source: Shoeybi et al. 2019 §3.

    >>> lp = layer_params(model(24, 2304, 24, 51200, 2048, biases=True, learned_positions=True))
    >>> lp.attention_sharded + lp.mlp_sharded + lp.replicated + lp.mlp_replicated == 12 * 2304**2 + 13 * 2304
    True
    """
    h, kv, f = m.hidden, m.kv_hidden, m.ffn_hidden
    b = 1 if m.biases else 0
    attention = 2 * h * h + 2 * h * kv + b * (h + 2 * kv)
    mlp = (3 if m.gated_mlp else 2) * h * f + b * (2 * f if m.gated_mlp else f)
    replicated = 2 * h * (1 + b) + b * h  # two norms (weights, biases) and O's bias
    router = h * m.experts if moe else 0
    return LayerParams(attention, mlp, replicated + router, b * h)


@dataclass(frozen=True, slots=True)
class ParamCount:
    """Parameter counts of a whole model (parameters, not bytes)."""

    total: int  #: every parameter
    active_per_token: int  #: parameters a token passes through (top_k experts of each MoE layer)
    embedding: int  #: word embedding V·h (+ learned positions s·h)
    output_head: int  #: V·h, or 0 when tied
    per_dense_layer: int  #: one dense layer
    per_moe_layer: int  #: one MoE layer (all experts), 0 for a dense model
    moe_layers: int  #: how many layers are MoE


def param_count(m: Model) -> ParamCount:
    """``P = Σ layers + V·h (+ V·h untied) (+ s·h learned positions) + final norm``.

    Llama 2 7B and Llama 3 8B (published 6,738,415,616 and 8,030,261,248):

    >>> param_count(model(32, 4096, 32, 32000, 4096, ffn_hidden=11008, gated_mlp=True)).total
    6738415616
    >>> param_count(model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)).total
    8030261248
    """
    lp = layer_params(m)
    dense = lp.attention_sharded + lp.mlp_sharded + lp.replicated + lp.mlp_replicated
    n_moe = m.moe_layers_in(0, m.layers)
    if n_moe:
        mp = layer_params(m, moe=True)
        per_expert = mp.mlp_sharded + mp.mlp_replicated
        moe = mp.attention_sharded + mp.replicated + m.experts * per_expert
        moe_active = mp.attention_sharded + mp.replicated + m.top_k * per_expert
    else:
        moe = moe_active = 0
    embedding = m.vocab * m.hidden + (m.seq_len * m.hidden if m.learned_positions else 0)
    head = 0 if m.tied_embeddings else m.vocab * m.hidden
    final_norm = m.hidden * (2 if m.biases else 1)
    outside = embedding + head + final_norm
    n_dense = m.layers - n_moe
    total = n_dense * dense + n_moe * moe + outside
    active = n_dense * dense + n_moe * moe_active + outside
    return ParamCount(total, active, embedding, head, dense, moe, n_moe)


def megatron_params(layers: int, hidden: int, vocab: int = 51200, seq_len: int = 2048) -> float:
    """Megatron's Eq. 2: ``P = 12·l·h²·(1 + 13/(12h) + (V+s)/(12·l·h))`` parameters.

    GPT layers with biases, LayerNorm, learned positions, tied embeddings, f = 4h;
    the final LayerNorm is not counted. Source: Narayanan et al. 2021, Eq. 2, Table 1.

    >>> round(megatron_params(24, 2304) / 1e9, 3), round(megatron_params(128, 25600) / 1e9, 2)
    (1.652, 1008.04)
    """
    l = count("layers", layers, maximum=MAX_LAYERS)
    h = count("hidden", hidden, maximum=MAX_HIDDEN)
    v = count("vocab", vocab, maximum=MAX_VOCAB)
    s = count("seq_len", seq_len, maximum=MAX_SEQ_LEN)
    return 12 * l * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * l * h))


@dataclass(frozen=True, slots=True)
class Precision:
    """Bytes per parameter of a mixed-precision training recipe."""

    name: str
    param_bytes: int  #: the weights the forward pass reads
    grad_bytes: int  #: the gradients the backward pass writes and data parallelism reduces
    optimizer_bytes: int  #: everything the optimizer keeps (fp32 master copy, Adam m and v, ...)
    activation_bytes: int  #: one activation element
    description: str

    @property
    def total_bytes(self) -> int:
        """Bytes per parameter at ZeRO stage 0."""
        return self.param_bytes + self.grad_bytes + self.optimizer_bytes


#: The recipes. ZeRO's K = 12 (fp32 master, momentum, variance); Megatron's
#: distributed-optimizer table gives 20, 18 and 16 bytes (ZeRO stage 1 here is
#: Megatron's distributed optimizer: 4 + 16/d, 6 + 12/d, 8 + 8/d).
#: Apex's DistributedFusedAdam keeps its parameter copy, m and v in its ``dtype`` (``StateBucket``:
#: ``params_shard``, ``exp_avg_shard``, ``exp_avg_sq_shard``) and its gradient buffer in ``grad_sync_dtype``:
#: with both bf16 (NeMo's Nemotron-4 340B recipe) that is ``bf16-states``.
#: Sources: Rajbhandari et al. 2020 §3.1; Megatron-LM docs, "Distributed Optimizer";
#: NVIDIA/apex ``apex/contrib/optimizers/distributed_fused_adam.py``.
PRECISIONS: dict[str, Precision] = {
    p.name: p
    for p in (
        Precision("bf16-adam", 2, 2, 12, 2, "bf16 weights and gradients; fp32 master, Adam m and v (16 B)"),
        Precision("fp16-adam", 2, 2, 12, 2, "fp16 weights and gradients; fp32 master, Adam m and v (16 B)"),
        Precision("megatron-bf16", 2, 4, 12, 2,
                  "Megatron bf16: fp32 gradient accumulation (main_grad); fp32 master, Adam (18 B)"),
        Precision("megatron-fp16", 2, 2, 16, 2,
                  "Megatron fp16: fp16 gradients; fp32 main gradients, master, Adam (20 B)"),
        Precision("fp32-adam", 4, 4, 8, 4, "fp32 weights, gradients, Adam m and v; fp32 activations (16 B)"),
        Precision("bf16-states", 2, 2, 6, 2,
                  "bf16 weights and gradients; bf16 master, Adam m and v (10 B): Apex DistributedFusedAdam with "
                  "dtype bf16, as NeMo's distributed_fused_adam takes it"),
    )
}


def precision(name: str) -> Precision:
    """The recipe called ``name``.

    >>> precision("bf16-adam").total_bytes, precision("megatron-bf16").total_bytes
    (16, 18)
    """
    if name not in PRECISIONS:
        raise CalcError("precision", "one of " + ", ".join(PRECISIONS), name)
    return PRECISIONS[name]
