"""Named inputs for ``plan`` that the atlas, the memory calculator and the planner offer as presets,
and for ``infer``, that the inference calculator offers.

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

__all__ = ["Preset", "PRESETS", "ATLAS_DEFAULT", "preset", "INFERENCE_PRESETS", "INFERENCE_DEFAULT", "presets_for"]


@dataclass(frozen=True, slots=True)
class Preset:
    """A model, batch, cluster and split, as ``plan`` inputs (text)."""

    name: str
    title: str
    source: str  #: where the configuration comes from, and what is our own choice
    inputs: MappingProxyType


_A100_CLUSTER = {"profile": "a100-sxm4-80gb"}
_H100_CLUSTER = {"profile": "h100-sxm5-80gb"}
#: Llama-3 8B's shape (Meta 2024), and Mixtral 8x7B's layers, which are the same but for the experts.
_LLAMA3_8B = dict(layers="32", hidden="4096", heads="32", kv_heads="8", ffn_hidden="14336", gated_mlp="true",
                  vocab="128256")
_MIXTRAL_LAYERS = {**_LLAMA3_8B, "vocab": "32000", "experts": "8", "top_k": "2"}


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
        **_A100_CLUSTER, data_parallel="16", tensor_parallel="8", pipeline_parallel="8", context_parallel="1",
        expert_parallel="1", zero="0",
        sequence_parallel="false", recompute="full", interleave="1", precision="megatron-fp16",
    ),
    _preset(
        "llama3-8b", "Llama-3 8B on one 8-GPU H100 node",
        "Llama-3 8B's published shape (32 layers, h = 4096, 32 heads, 8 KV heads, SwiGLU MLP of 14336, "
        "V = 128256, s = 8192; Meta 2024), without dropout as Meta's reference code has none (meta-llama/llama3 "
        "llama/model.py). The split (TP 2 with sequence parallelism, 4 data-parallel "
        "replicas with ZeRO-1, selective recomputation) and the batch of 64 sequences are our choices for "
        "one node.",
        **_LLAMA3_8B, dropout="false", norm="rmsnorm", seq_len="8192", micro_batch="1", global_batch="64", gpus="8",
        **_H100_CLUSTER,
        data_parallel="4", tensor_parallel="2", pipeline_parallel="1", context_parallel="1", expert_parallel="1",
        zero="1", sequence_parallel="true",
        recompute="selective", interleave="1", precision="bf16-adam",
    ),
    _preset(
        "mixtral-8x7b", "Mixtral-8x7B-like MoE on 64 H100s (EP 4)",
        "A mixture of experts shaped like Mixtral 8x7B (Jiang et al. 2024: 32 layers, h = 4096, 32 heads, "
        "8 KV heads, 8 SwiGLU experts of 14336 per layer, top-2 routing, V = 32000); sequence length 4096; "
        "without dropout, as Mistral's reference code has none (mistralai/mistral-inference moe_one_file_ref.py). "
        "The split (expert-parallel 4, TP 2, 4 pipeline stages, 2 data-parallel replicas, ZeRO-1) and the "
        "batch of 512 sequences are our choices.",
        **_MIXTRAL_LAYERS, dropout="false", norm="rmsnorm", seq_len="4096", micro_batch="1", global_batch="512",
        gpus="64",
        **_H100_CLUSTER, data_parallel="2", tensor_parallel="2", pipeline_parallel="4", context_parallel="1",
        expert_parallel="4", zero="1",
        sequence_parallel="true", recompute="selective", interleave="1", precision="bf16-adam",
    ),
)

#: Every preset, by name.
PRESETS: MappingProxyType = MappingProxyType({p.name: p for p in _ALL})

_LLAMA3_70B = dict(layers="80", hidden="8192", heads="64", kv_heads="8", ffn_hidden="28672", gated_mlp="true",
                   vocab="128256", max_context="8192")
_SERVING = (
    _preset(
        "llama3-8b-serve", "Llama-3 8B, 4 replicas of TP 2 on one H100 node",
        "Llama-3 8B's published shape (Meta 2024: 32 layers, h = 4096, 32 heads, 8 KV heads, SwiGLU MLP of 14336, "
        "V = 128256, 8192-token context). The split, the batch of 16 and the 1024-token prompts with 256-token "
        "outputs are our choices.",
        **_LLAMA3_8B, max_context="8192", batch="16", prompt_tokens="1024", output_tokens="256", weight_precision="bf16",
        kv_precision="bf16", profile="h100-sxm5-80gb", gpus="8", data_parallel="4", tensor_parallel="2",
        pipeline_parallel="1", context_parallel="1",
        expert_parallel="1",
    ),
    _preset(
        "llama3-70b-serve", "Llama-3 70B in bf16, TP 8 on one H100 node",
        "Llama-3 70B's published shape (Meta 2024: 80 layers, h = 8192, 64 heads, 8 KV heads, SwiGLU MLP of "
        "28672, V = 128256, 8192-token context). One replica over the node's 8 GPUs, batch 32, 2048-token prompts "
        "and 512-token outputs: our choices.",
        **_LLAMA3_70B, batch="32", prompt_tokens="2048", output_tokens="512", weight_precision="bf16",
        kv_precision="bf16", profile="h100-sxm5-80gb", gpus="8", data_parallel="1", tensor_parallel="8",
        pipeline_parallel="1", context_parallel="1",
        expert_parallel="1",
    ),
    _preset(
        "llama3-70b-fp8", "Llama-3 70B in fp8, 2 replicas of TP 4 on one H100 node",
        "The same model with fp8 weights and an fp8 KV cache (as vLLM serves NVIDIA's and Meta's fp8 checkpoints): "
        "the weights take half the memory, so four GPUs hold a replica. The split and the workload are our "
        "choices.",
        **_LLAMA3_70B, batch="32", prompt_tokens="2048", output_tokens="512", weight_precision="fp8",
        kv_precision="fp8", profile="h100-sxm5-80gb", gpus="8", data_parallel="2", tensor_parallel="4",
        pipeline_parallel="1", context_parallel="1",
        expert_parallel="1",
    ),
    _preset(
        "mixtral-8x7b-serve", "Mixtral 8x7B, TP 2 × EP 4 on one H100 node",
        "Mixtral 8x7B's published shape (Jiang et al. 2024: 32 layers, h = 4096, 32 heads, 8 KV heads, 8 SwiGLU "
        "experts of 14336, top-2, V = 32000, 32768-token context). Experts spread over 4 expert-parallel ranks, "
        "each also splitting its layers 2 ways; the batch of 32 is split over the expert ranks for attention. The "
        "split and workload are our choices.",
        **_MIXTRAL_LAYERS, max_context="32768", batch="32", prompt_tokens="2048", output_tokens="512",
        weight_precision="bf16", kv_precision="bf16", profile="h100-sxm5-80gb", gpus="8", data_parallel="1",
        tensor_parallel="2",
        pipeline_parallel="1", context_parallel="1", expert_parallel="4",
    ),
    _preset(
        "llama2-13b-int4", "Llama 2 13B in int4 (weight-only) on one A100 40GB",
        "Llama 2 13B's published shape (Touvron et al. 2023: 40 layers, h = 5120, 40 heads, MLP of 13824, "
        "V = 32000, 4096-token context) with 4-bit weights as GPTQ and AWQ store them, on a single A100 40GB. The "
        "batch and lengths are our choices.",
        layers="40", hidden="5120", heads="40", ffn_hidden="13824", gated_mlp="true", vocab="32000",
        max_context="4096", batch="16", prompt_tokens="1024", output_tokens="256", weight_precision="int4",
        kv_precision="bf16", profile="a100-sxm4-40gb", gpus="1", data_parallel="1", tensor_parallel="1",
        pipeline_parallel="1", context_parallel="1",
        expert_parallel="1",
    ),
    _preset(
        "gpt3-175b-serve", "GPT-3 175B in fp16, TP 8 on 8 A100 80GB (FasterTransformer's benchmark)",
        "GPT-3 175B's shape (Brown et al. 2020: 96 layers, h = 12288, 96 heads, V = 51200, 2048-token context) "
        "served as FasterTransformer's README benchmarks it: fp16, tensor-parallel 8 on 8 A100 80GB, 512-token "
        "inputs and 32-token outputs. The batch of 8 is our choice.",
        layers="96", hidden="12288", heads="96", vocab="51200", tied_embeddings="true", biases="true",
        learned_positions="true", max_context="2048", batch="8", prompt_tokens="512", output_tokens="32",
        weight_precision="fp16", kv_precision="fp16", profile="a100-sxm4-80gb", gpus="8", data_parallel="1",
        tensor_parallel="8",
        pipeline_parallel="1", context_parallel="1", expert_parallel="1",
    ),
)
#: The inference calculator's presets, by name (inputs of ``infer``).
INFERENCE_PRESETS: MappingProxyType = MappingProxyType({p.name: p for p in _SERVING})
#: The preset the inference calculator opens on.
INFERENCE_DEFAULT = "llama3-8b-serve"


def presets_for(command: str) -> MappingProxyType:
    """The presets a command's page offers: the serving ones for ``infer``, else the training ones.

    >>> list(presets_for("infer"))[0], list(presets_for("plan"))[0]
    ('llama3-8b-serve', 'gpt3-175b')
    """
    return INFERENCE_PRESETS if command in ("infer", "infer-search") else PRESETS
#: The preset the atlas opens on.
ATLAS_DEFAULT = "gpt3-175b"


def preset(name: str) -> Preset:
    """The preset called ``name``.

    >>> preset("gpt3-175b").inputs["tensor_parallel"], preset("gpt3-175b").inputs["pipeline_parallel"]
    ('8', '8')
    """
    from .errors import CalcError

    if name not in PRESETS:
        raise CalcError("preset", "one of " + ", ".join(PRESETS), name)
    return PRESETS[name]
