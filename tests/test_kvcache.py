"""calc.kvcache: KV-cache bytes per token, per sequence and per device, with GQA/MQA and the splits."""

import pytest

from calc.errors import CalcError
from calc.kvcache import KV_PRECISIONS, kv_bytes_per_token, kv_cache, kv_element_bytes, kv_heads_per_rank
from calc.model import model

LLAMA3_8B = model(32, 4096, 32, 128256, 8192, kv_heads=8, ffn_hidden=14336, gated_mlp=True)
MHA = model(32, 4096, 32, 32000, 4096)
MQA = model(32, 4096, 32, 32000, 4096, kv_heads=1)


def test_bytes_per_token_is_two_layers_heads_dim_bytes():
    """2 · l · a_kv · d · e: K and V of every layer and KV head."""
    assert kv_bytes_per_token(LLAMA3_8B) == 2 * 32 * 8 * 128 * 2
    assert kv_bytes_per_token(LLAMA3_8B, 1.0) == 2 * 32 * 8 * 128


def test_grouped_and_multi_query_attention_shrink_the_cache_by_the_head_ratio():
    """MQA keeps 1/a of multi-head attention's cache, GQA a_kv/a."""
    assert kv_bytes_per_token(MHA) / kv_bytes_per_token(MQA) == 32
    assert kv_bytes_per_token(MHA) / kv_bytes_per_token(model(32, 4096, 32, 32000, 4096, kv_heads=8)) == 4


@pytest.mark.parametrize("t,heads,replicated", [(1, 8, False), (2, 4, False), (8, 1, False), (16, 1, True),
                                                 (32, 1, True)])
def test_tensor_parallelism_splits_kv_heads_until_one_is_left(t, heads, replicated):
    """a_kv/t heads per rank; beyond a_kv ranks each keeps one head, replicated."""
    c = kv_cache(LLAMA3_8B, 1000, tensor=t)
    assert (c.heads_per_device, c.replicated) == (heads, replicated)
    assert c.bytes_per_token_per_device == 2 * 32 * heads * 128 * 2


def test_pipeline_and_context_parallelism_split_layers_and_tokens():
    """A stage keeps its layers; context parallelism keeps ⌈L/c⌉ tokens of each sequence."""
    whole = kv_cache(LLAMA3_8B, 8192)
    part = kv_cache(LLAMA3_8B, 8192, layers=8, context_parallel=4, sequences=3)
    assert part.bytes_per_sequence_per_device == whole.bytes_per_sequence / 4 / 4
    assert part.bytes_per_device == 3 * part.bytes_per_sequence_per_device
    assert kv_cache(LLAMA3_8B, 10, context_parallel=4).bytes_per_sequence_per_device == 3 * 2 * 32 * 8 * 128 * 2


def test_precisions_and_their_bytes():
    """bf16 and fp16 keep 2 bytes per element, fp8 and int8 one; others are refused by name."""
    assert {k: kv_element_bytes(k) for k in KV_PRECISIONS} == {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}
    with pytest.raises(CalcError, match=r"^kv_precision must be one of bf16, fp16, fp8, int8, got 'int4'$"):
        kv_element_bytes("int4")


@pytest.mark.parametrize("kwargs,message", [
    ({"context": 0}, "context must be a whole number >= 1, got 0"),
    ({"context": 10, "layers": 33}, "layers must be a whole number <= 32, got 33"),
    ({"context": 10, "context_parallel": 0}, "context_parallel must be a whole number >= 1, got 0"),
    ({"context": 10, "sequences": -1}, "sequences must be a whole number >= 0, got -1"),
])
def test_bad_arguments_name_the_parameter(kwargs, message):
    """Each bound is checked with the parameter's name, the rule and the value."""
    with pytest.raises(CalcError) as info:
        kv_cache(LLAMA3_8B, **kwargs)
    assert str(info.value) == message


def test_heads_per_rank_refuses_a_zero_split():
    """tensor = 0 is an error, not a division by zero."""
    with pytest.raises(CalcError, match="^tensor_parallel must be"):
        kv_heads_per_rank(LLAMA3_8B, 0)
