"""The published cases of ../shared/validation/published-cases.md that the foundation covers.

B1-B4 (global batch accounting) and R1-R3, R5 (ring all-reduce, nccl-tests conventions).
Each test is named for the behaviour it checks, its docstring starts with the case's id; tolerances
are the document's.
"""

import pytest

from calc.api import evaluate
from calc.batch import accumulation_for, data_parallel_degree, global_batch, sequences_for_tokens
from calc.collectives import ring_allreduce

# Narayanan et al. 2021, Table 1: (TP, PP, GPUs)
MEGATRON_TABLE_1 = [
    (1, 1, 32), (2, 1, 64), (4, 1, 128), (8, 1, 256), (8, 2, 512),
    (8, 4, 1024), (8, 8, 1536), (8, 16, 1920), (8, 35, 2520), (8, 64, 3072),
]


def test_global_batch_is_micro_times_accumulation_times_replicas():
    """B1: micro 8, accumulation 16, DP 64 → 8192 examples/update."""
    assert global_batch(8, 16, 64).global_batch == 8192


def test_a_token_budget_rounds_down_to_a_multiple_of_the_granularity():
    """B2: 3.2M tokens at s 2048 is 1562.5 sequences; trained with 1536 = 3,145,728 tokens."""
    assert 3.2e6 / 2048 == 1562.5
    assert sequences_for_tokens(3.2e6, 2048, multiple_of=512) == 1536
    assert global_batch(1, 1536, 1, seq_len=2048).tokens_per_update == 3_145_728


def test_accumulation_follows_from_a_target_batch_and_the_replicas():
    """B3: 4M tokens at s 4096 → 1024 sequences; micro 2, DP 128 → acc 4; DP 512 → acc 1."""
    sequences = sequences_for_tokens(4 * 2**20, 4096)
    assert sequences == 1024
    assert accumulation_for(sequences, 2, 128) == 4
    assert accumulation_for(sequences, 2, 512) == 1


def test_data_parallel_degree_is_gpus_over_tensor_times_pipeline():
    """B4: DP = GPUs / (TP·PP) for the 10 rows of Megatron Table 1."""
    dps = [data_parallel_degree(g, t, p) for t, p, g in MEGATRON_TABLE_1]
    assert dps == [32, 32, 32, 32, 32, 32, 24, 15, 9, 6]


def test_ring_allreduce_time_follows_alpha_beta():
    """R1: p 8, n 1e9 B, α 5 µs, β 100 GB/s → T = 0.01757 s (rel. 1e-9)."""
    assert ring_allreduce(8, 1e9, 100e9, 5e-6).time_s == pytest.approx(0.01757, rel=1e-9)


@pytest.mark.parametrize("n", [2, 3, 8, 64, 1024])
def test_allreduce_bus_bandwidth_is_algorithm_bandwidth_times_2_n_minus_1_over_n(n):
    """R2: all-reduce busbw = algbw × 2(n-1)/n, algbw = S/t."""
    r = ring_allreduce(n, 8e9, 300e9, 3e-6)
    assert r.algbw_bytes_per_s == pytest.approx(8e9 / r.time_s, rel=1e-12)
    assert r.busbw_bytes_per_s / r.algbw_bytes_per_s == pytest.approx(2 * (n - 1) / n, rel=1e-12)


def test_eight_ranks_give_a_bus_bandwidth_factor_of_1_75():
    """R3: 8 ranks → busbw / algbw = 1.75 for all-reduce."""
    r = ring_allreduce(8, 1e9, 100e9, 5e-6)
    assert r.busbw_bytes_per_s / r.algbw_bytes_per_s == pytest.approx(1.75, rel=1e-12)


def test_ddp_gradient_allreduce_sends_14_gb_per_rank():
    """R5: 8 GB of fp32 gradients on 8 GPUs at 300 GB/s → 14 GB per rank, about 0.047 s."""
    out = evaluate("allreduce", {"ranks": "8", "payload": "8GB", "bandwidth": "300GB/s", "startup": "0"})
    assert out["bytes_sent_per_rank"] == pytest.approx(14e9, rel=1e-12)
    assert out["time_s"] == pytest.approx(0.0467, abs=5e-4)
