"""Tests for calc.batch: global batch accounting, its inverse, uneven and packed batches."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calc.batch import (
    accumulation_for,
    data_parallel_degree,
    global_batch,
    packed_batch,
    sequences_for_tokens,
    uneven_batch,
)
from calc.api import COMMANDS, evaluate
from calc.errors import CalcError


def test_global_batch_is_micro_batch_times_accumulation_times_replicas():
    """The brief's example: microbatch 8 × 16 accumulation steps × 64 replicas = 8192 examples."""
    b = global_batch(8, 16, 64)
    assert b.global_batch == 8192
    assert b.tokens_per_update is None


def test_tokens_per_update():
    """With a sequence length the update also counts tokens."""
    assert global_batch(8, 16, 64, seq_len=2048).tokens_per_update == 8192 * 2048


@pytest.mark.parametrize("name, args", [("micro_batch", (0, 1, 1)), ("accumulation", (1, 0, 1)), ("data_parallel", (1, 1, 0))])
def test_counts_below_one_rejected(name, args):
    """Each factor must be a whole number >= 1; the message names it."""
    with pytest.raises(CalcError) as info:
        global_batch(*args)
    assert str(info.value) == f"{name} must be a whole number >= 1, got 0"


@pytest.mark.parametrize("bad", [True, 2.5, -1, float("nan"), float("inf"), "8", None])
def test_micro_batch_rejects_non_counts(bad):
    """Bools, fractions, negatives, NaN, inf, strings and None are not counts."""
    with pytest.raises(CalcError, match="^micro_batch must be a whole number >= 1, got "):
        global_batch(bad, 1, 1)


def test_integral_float_is_a_count():
    """8.0 is accepted as the count 8 (both sides of the integrality rule)."""
    assert global_batch(8.0, 1, 1).global_batch == 8


def test_count_upper_limit_both_sides():
    """Counts are limited to 10^9; the product of the factors too."""
    assert global_batch(10**9, 1, 1).global_batch == 10**9
    with pytest.raises(CalcError, match=r"^micro_batch must be a whole number <= 1000000000, got 1000000001$"):
        global_batch(10**9 + 1, 1, 1)
    with pytest.raises(CalcError, match="micro_batch × accumulation × data_parallel must be <= 1000000000"):
        global_batch(10**5, 10**5, 1)


def test_data_parallel_degree_from_gpus():
    """N_dp = GPUs / (TP × PP × CP)."""
    assert data_parallel_degree(16, 2, 2) == 4
    assert data_parallel_degree(1024, 8, 8) == 16
    assert data_parallel_degree(64, 2, 2, 2) == 8


def test_data_parallel_degree_must_divide():
    """A GPU count the model-parallel product does not divide is refused."""
    with pytest.raises(CalcError) as info:
        data_parallel_degree(16, tensor_parallel=3)
    assert str(info.value) == (
        "gpus must be divisible by tensor_parallel × pipeline_parallel × context_parallel = 3, got 16"
    )


@given(
    micro=st.integers(1, 64),
    acc=st.integers(1, 64),
    dp=st.integers(1, 64),
    tp=st.integers(1, 16),
    pp=st.integers(1, 16),
    cp=st.integers(1, 8),
)
def test_tensor_and_pipeline_do_not_multiply_the_batch(micro, acc, dp, tp, pp, cp):
    """At fixed DP the global batch does not change with TP, PP or CP; only the GPU count does."""
    gpus = dp * tp * pp * cp
    assert data_parallel_degree(gpus, tp, pp, cp) == dp
    assert global_batch(micro, acc, data_parallel_degree(gpus, tp, pp, cp)).global_batch == micro * acc * dp


def test_accumulation_inverse_both_sides():
    """The inverse gives whole accumulation steps or a CalcError naming the granularity."""
    assert accumulation_for(1024, 2, 128) == 4
    assert accumulation_for(256, 2, 128) == 1
    with pytest.raises(CalcError) as info:
        accumulation_for(1000, 2, 128)
    assert str(info.value) == "target_global_batch must be a multiple of micro_batch × data_parallel = 256, got 1000"
    with pytest.raises(CalcError, match="target_global_batch must be a multiple"):
        accumulation_for(128, 2, 128)


@given(micro=st.integers(1, 32), acc=st.integers(1, 32), dp=st.integers(1, 64))
def test_inverse_round_trip(micro, acc, dp):
    """accumulation_for undoes global_batch."""
    assert accumulation_for(global_batch(micro, acc, dp).global_batch, micro, dp) == acc


def test_a_token_budget_beyond_the_largest_batch_names_target_tokens():
    """More sequences than a global batch can hold is refused naming target_tokens, the command's input (found by
    test_properties_api: it named micro_batch, which the sequences command does not have)."""
    assert sequences_for_tokens(2048 * 10**9, 2048) == 10**9
    with pytest.raises(CalcError) as e:
        evaluate("sequences", {"target_tokens": 2048001048576.0, "seq_len": "2048", "multiple_of": "512"})
    assert str(e.value) == ("target_tokens must be <= seq_len × 1000000000 sequences = 2048000000000 tokens, "
                            "got 2048001048576.0") and e.value.param == "target_tokens"


def test_sequences_for_tokens_rounds_down_to_granularity():
    """GPT-3's 3.2M tokens at s=2048 are 1562.5 sequences; at granularity 512 that is 1536."""
    assert sequences_for_tokens(3.2e6, 2048) == 1562
    assert sequences_for_tokens(3.2e6, 2048, multiple_of=512) == 1536
    with pytest.raises(CalcError, match="target_tokens must be >= seq_len × multiple_of = 2048 tokens"):
        sequences_for_tokens(2047, 2048)


def test_uneven_batch_effective_count():
    """Uneven microbatches: effective examples are the sum, beside the nominal count."""
    u = uneven_batch(8, [[8, 8, 5], [8, 8, 8]])
    assert (u.data_parallel, u.accumulation) == (2, 3)
    assert (u.nominal_examples, u.effective_examples) == (48, 45)
    assert u.per_replica_examples == (21, 24)
    assert u.effective_fraction == 45 / 48


@pytest.mark.parametrize(
    "sizes, message",
    [
        ([[8, 9]], "microbatch_sizes[0][1] must be a whole number <= 8, got 9"),
        ([[8, -1]], "microbatch_sizes[0][1] must be a whole number >= 0, got -1"),
        ([[8, 8], [8]], "microbatch_sizes[1] must be 2 microbatches like replica 0, got 1"),
        ([], "microbatch_sizes must be at least one replica, got []"),
        ([[]], "microbatch_sizes[0] must be a non-empty list of sizes, got []"),
        ("8,8", "microbatch_sizes must be a list of per-replica lists of sizes, got '8,8'"),
    ],
)
def test_uneven_batch_errors(sizes, message):
    """Each malformed list is named down to the offending entry."""
    with pytest.raises(CalcError) as info:
        uneven_batch(8, sizes)
    assert str(info.value) == message


def test_uneven_batch_accepts_empty_microbatch():
    """A replica may receive an empty final microbatch (size 0 is the lower bound)."""
    assert uneven_batch(4, [[4, 0]]).effective_examples == 4


def test_packing_multiplies_examples_and_padding_removes_real_tokens():
    """Packing multiplies examples; padding reduces real tokens."""
    p = packed_batch(1024, 4096, examples_per_sequence=3.5, padding_fraction=0.25)
    assert p.effective_examples == 3584.0
    assert p.token_slots == 4194304
    assert p.real_tokens == 4194304 * 0.75


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"examples_per_sequence": 0.5}, "examples_per_sequence must be a number >= 1, got 0.5"),
        ({"padding_fraction": 1.0}, "padding_fraction must be a number >= 0 and < 1, got 1.0"),
        ({"padding_fraction": -0.1}, "padding_fraction must be a number >= 0 and < 1, got -0.1"),
    ],
)
def test_packed_batch_errors(kwargs, message):
    """Packing parameters have explicit ranges."""
    with pytest.raises(CalcError) as info:
        packed_batch(8, 128, **kwargs)
    assert str(info.value) == message


def test_packed_batch_bounds_accepted():
    """The inclusive ends of the ranges are accepted."""
    p = packed_batch(8, 128, examples_per_sequence=1, padding_fraction=0.0)
    assert p.effective_examples == 8 and p.real_tokens == 1024


def test_sequences_command_rounds_a_token_budget_down():
    """Published case B2 through the command: 3.2M tokens at s = 2048 are 1,562 sequences; as a multiple of
    512 (Narayanan et al. 2021, §5.4.3) 1,536 sequences, which hold 3,145,728 token slots."""
    assert evaluate("sequences", {"target_tokens": "3.2e6", "seq_len": "2048"}) == {
        "sequences": 1562, "tokens_per_update": 1562 * 2048}
    assert evaluate("sequences", COMMANDS["sequences"].example) == {"sequences": 1536, "tokens_per_update": 3_145_728}


def test_sequences_command_refuses_a_budget_below_one_multiple():
    """Fewer tokens than seq_len × multiple_of round down to no sequence: refused, naming target_tokens."""
    with pytest.raises(CalcError, match=r"^target_tokens must be >= seq_len × multiple_of = 2048 tokens, got 100\.0$"):
        evaluate("sequences", {"target_tokens": "100", "seq_len": "2048"})
