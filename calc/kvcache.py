"""The key/value cache of autoregressive decoding: bytes per token, per sequence and per device.

Generating token ``i`` attends over the keys and values of every earlier token of its
sequence; a server keeps them (the KV cache) rather than recomputing them. Every layer
keeps one key and one value vector of ``d`` elements per KV head, so (``l`` layers,
``a_kv`` KV heads, ``e_kv`` bytes per element)::

    bytes per token     = 2 · l · a_kv · d · e_kv
    bytes per sequence  = bytes per token · L          (L tokens: prompt and output)

Multi-head attention has ``a_kv = a``; multi-query attention (Shazeer 2019) one KV head;
grouped-query attention (Ainslie et al. 2023) ``1 < a_kv < a``: the cache shrinks by
``a/a_kv``. With the model's ``d = h/a`` and ``a_kv = a`` the product is ``4·l·h`` bytes per
token in 16 bits, the vLLM paper's ``2 × h × l × 2`` (Kwon et al. 2023 §3).

On one device of a split:

- tensor parallelism ``t`` splits the KV heads, ``a_kv/t`` per rank; with ``t > a_kv`` each
  rank keeps one head, replicated ``t/a_kv`` times (as its K and V weights are, Megatron-LM);
- pipeline parallelism keeps each stage's layers only;
- context parallelism ``c`` splits each sequence, ``L/c`` tokens per rank (rounded up);
- expert parallelism: the ``e`` ranks of an expert group run attention data-parallel, so a
  device holds ``batch/e`` of the replica's sequences (:mod:`calc.inference`).

Sources: Shazeer 2019, "Fast Transformer Decoding: One Write-Head is All You Need",
arXiv:1911.02150; Ainslie et al. 2023, "GQA", arXiv:2305.13245; Kwon et al. 2023, "Efficient
Memory Management for Large Language Model Serving with PagedAttention" (vLLM), SOSP 2023, §3;
Pope et al. 2022, "Efficiently Scaling Transformer Inference", arXiv:2211.05102, §3.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from .check import count
from .errors import CalcError
from .model import Model

__all__ = ["KV_PRECISIONS", "kv_element_bytes", "kv_bytes_per_token", "kv_heads_per_rank", "KVCache", "kv_cache"]

#: Bytes per cached element by KV-cache precision. fp8 and int8 caches store one byte per element
#: (with a per-tensor scale, not counted) and are read back into 16-bit attention: vLLM's
#: ``--kv-cache-dtype fp8``, TensorRT-LLM's INT8/FP8 KV cache.
KV_PRECISIONS = MappingProxyType({"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0})


def kv_element_bytes(name: str) -> float:
    """Bytes per element of the KV-cache precision ``name``.

    >>> kv_element_bytes("bf16"), kv_element_bytes("fp8")
    (2.0, 1.0)
    """
    if name not in KV_PRECISIONS:
        raise CalcError("kv_precision", "one of " + ", ".join(KV_PRECISIONS), name)
    return KV_PRECISIONS[name]


def kv_bytes_per_token(m: Model, element_bytes: float = 2.0) -> float:
    """``2 · l · a_kv · d · e_kv``: the whole model's cache for one token, in bytes.

    OPT-13B (40 layers, h = 5120, multi-head) in fp16: 819,200 B = 800 KiB, the "800 KB" of
    Kwon et al. 2023 §3; Llama-3 8B (8 KV heads) in bf16: 131,072 B = 128 KiB.

    >>> from calc.model import model
    >>> kv_bytes_per_token(model(40, 5120, 40, 50272, 2048))
    819200.0
    >>> kv_bytes_per_token(model(32, 4096, 32, 128256, 8192, kv_heads=8))
    131072.0
    """
    return 2.0 * m.layers * m.kv_heads * m.head_dim * element_bytes


def kv_heads_per_rank(m: Model, tensor: int) -> int:
    """KV heads a tensor-parallel rank keeps: ``a_kv/t``, or one (replicated) when ``t > a_kv``.

    >>> from calc.model import model
    >>> m = model(32, 4096, 32, 128256, 8192, kv_heads=8)
    >>> kv_heads_per_rank(m, 4), kv_heads_per_rank(m, 16)
    (2, 1)
    """
    t = count("tensor_parallel", tensor)
    return m.kv_heads // t if t <= m.kv_heads else 1


@dataclass(frozen=True, slots=True)
class KVCache:
    """The KV cache of ``sequences`` sequences of ``context`` tokens (bytes)."""

    bytes_per_token: float  #: the whole model, one token
    bytes_per_sequence: float  #: the whole model, one sequence of ``context`` tokens
    bytes_per_token_per_device: float  #: one device's share of one token (its layers and KV heads)
    bytes_per_sequence_per_device: float  #: one device's share of one sequence (its tokens under CP)
    bytes_per_device: float  #: ``sequences`` sequences on one device
    heads_per_device: int  #: KV heads a device keeps per layer
    replicated: bool  #: ``t > a_kv``: every KV head is kept on ``t/a_kv`` ranks
    sequences: int
    context: int


def kv_cache(m: Model, context: int, element_bytes: float = 2.0, tensor: int = 1, layers: int | None = None,
             context_parallel: int = 1, sequences: int = 1) -> KVCache:
    """The cache of ``sequences`` sequences of ``context`` tokens, whole and on one device.

    ``layers`` is the number the device's pipeline stage holds (default: all). Per device:
    ``2 · l_s · heads_per_rank · d · e_kv · ⌈L/c⌉`` bytes per sequence.

    The JAX scaling book's LLaMA 2-13B example (40 layers, 40 KV heads of 128): one sequence
    of 8192 tokens in bf16 is 6.7 GB; Llama-3 8B on 16 tensor-parallel ranks keeps one of its
    8 KV heads per rank, twice:

    >>> from calc.model import model
    >>> round(kv_cache(model(40, 5120, 40, 32000, 4096), 8192).bytes_per_sequence / 1e9, 2)
    6.71
    >>> c = kv_cache(model(32, 4096, 32, 128256, 8192, kv_heads=8), 8192, tensor=16)
    >>> c.heads_per_device, c.replicated, c.bytes_per_token_per_device
    (1, True, 16384.0)
    """
    ctx = count("context", context)
    n = count("sequences", sequences, minimum=0)
    c = count("context_parallel", context_parallel)
    l_dev = m.layers if layers is None else count("layers", layers, maximum=m.layers)
    heads = kv_heads_per_rank(m, tensor)
    per_token = kv_bytes_per_token(m, element_bytes)
    per_token_dev = 2.0 * l_dev * heads * m.head_dim * element_bytes
    per_seq_dev = per_token_dev * -(-ctx // c)
    return KVCache(per_token, per_token * ctx, per_token_dev, per_seq_dev, per_seq_dev * n, heads,
                   tensor > m.kv_heads, n, ctx)
