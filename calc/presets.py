"""Named inputs for ``plan`` that the atlas, the memory calculator and the planner offer as presets.

Each preset is a complete set of ``plan`` inputs as text (what a reader would
type), with a title and its source. The atlas page opens on :data:`ATLAS_DEFAULT`;
the planner's links into the atlas name only the inputs that differ from it.

Hardware comes from the GPU profiles of :mod:`calc.hardware` (``a100-sxm4-80gb``:
80 GiB, 312 TFLOP/s dense fp16/bf16, NVLink 3 at 300 GB/s per direction, 25 GB/s of
InfiniBand per GPU; ``h100-sxm5-80gb``: 79.6 GiB usable, 989 TFLOP/s dense bf16, NVLink 4
at 450 GB/s per direction, 50 GB/s per GPU), with their sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["Preset", "PRESETS", "ATLAS_DEFAULT", "preset"]


@dataclass(frozen=True, slots=True)
class Preset:
    """A model, batch, cluster and split, as ``plan`` inputs (text)."""

    name: str
    title: str
    source: str  #: where the configuration comes from, and what is our own choice
    inputs: MappingProxyType


_A100_CLUSTER = {"profile": "a100-sxm4-80gb"}
_H100_CLUSTER = {"profile": "h100-sxm5-80gb"}


def _preset(name: str, title: str, source: str, **inputs: str) -> Preset:
    return Preset(name, title, source, MappingProxyType(inputs))


_ALL = (
    _preset(
        "gpt3-175b", "GPT-3 175B on 1024 A100 80GB (t = 8, p = 8)",
        "GPT-3 175B's shape (96 layers, h = 12288, 96 heads, s = 2048, V = 51200; Brown et al. 2020) with the "
        "1024 GPUs and 1536-sequence batch of Narayanan et al. 2021's end-to-end estimate (§5.1, which gives only "
        "n = 1024, B = 1536 and X = 140 TFLOP/s, not a split; its measured 175B runs use a model-parallel size "
        "of 96, Table 2). The split is this site's choice: tensor-parallel 8 inside a node and pipeline-parallel "
        "8, as Korthikanti et al. 2022 (Table 3) use for GPT-3 on 64 GPUs, so 16 data-parallel replicas; fp16 "
        "with full activation recomputation, no ZeRO, microbatch 1, no interleaving (set interleave to 2, 3, 4, "
        "6 or 12 to see the interleaved schedule).",
        layers="96", hidden="12288", heads="96", vocab="51200", seq_len="2048", tied_embeddings="true",
        biases="true", learned_positions="true", micro_batch="1", global_batch="1536", gpus="1024",
        **_A100_CLUSTER, data="16", tensor="8", pipeline="8", context="1", expert="1", zero="0",
        sequence_parallel="false", recompute="full", interleave="1", precision="megatron-fp16",
    ),
    _preset(
        "llama3-8b", "Llama-3 8B on one 8-GPU H100 node",
        "Llama-3 8B's published shape (32 layers, h = 4096, 32 heads, 8 KV heads, SwiGLU MLP of 14336, "
        "V = 128256, s = 8192; Meta 2024). The split (TP 2 with sequence parallelism, 4 data-parallel "
        "replicas with ZeRO-1, selective recomputation) and the batch of 64 sequences are our choices for "
        "one node.",
        layers="32", hidden="4096", heads="32", kv_heads="8", ffn_hidden="14336", gated_mlp="true",
        vocab="128256", seq_len="8192", micro_batch="1", global_batch="64", gpus="8", **_H100_CLUSTER,
        data="4", tensor="2", pipeline="1", context="1", expert="1", zero="1", sequence_parallel="true",
        recompute="selective", interleave="1", precision="bf16-adam",
    ),
    _preset(
        "mixtral-8x7b", "Mixtral-8x7B-like MoE on 64 H100s (EP 4)",
        "A mixture of experts shaped like Mixtral 8x7B (Jiang et al. 2024: 32 layers, h = 4096, 32 heads, "
        "8 KV heads, 8 SwiGLU experts of 14336 per layer, top-2 routing, V = 32000); sequence length 4096. "
        "The split (expert-parallel 4, TP 2, 4 pipeline stages, 2 data-parallel replicas, ZeRO-1) and the "
        "batch of 512 sequences are our choices.",
        layers="32", hidden="4096", heads="32", kv_heads="8", ffn_hidden="14336", gated_mlp="true",
        vocab="32000", seq_len="4096", experts="8", top_k="2", micro_batch="1", global_batch="512", gpus="64",
        **_H100_CLUSTER, data="2", tensor="2", pipeline="4", context="1", expert="4", zero="1",
        sequence_parallel="true", recompute="selective", interleave="1", precision="bf16-adam",
    ),
)

#: Every preset, by name.
PRESETS: MappingProxyType = MappingProxyType({p.name: p for p in _ALL})
#: The preset the atlas opens on.
ATLAS_DEFAULT = "gpt3-175b"


def preset(name: str) -> Preset:
    """The preset called ``name``.

    >>> preset("gpt3-175b").inputs["tensor"], preset("gpt3-175b").inputs["pipeline"]
    ('8', '8')
    """
    from .errors import CalcError

    if name not in PRESETS:
        raise CalcError("preset", "one of " + ", ".join(PRESETS), name)
    return PRESETS[name]
