"""Timing of the engine's search (``bench_search()`` returns figures; the lead wires it into ``make bench``)."""

import time

from calc.model import model
from calc.plan import hardware
from calc.search import search


def bench_search(repeats: int = 5) -> dict:
    """Search GPT-3 175B on 1024 A100-80GB GPUs (128 nodes of 8); best-of and median wall time in seconds."""
    gpt3 = model(96, 12288, 96, 51200, 2048, biases=True, learned_positions=True, tied_embeddings=True)
    hw = hardware(1024, 80e9, 312e12, 300e9, 25e9, startup=5e-6)
    times = []
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = search(gpt3, 1536, hw, top=10)
        times.append(time.perf_counter() - start)
    times.sort()
    best = result.plans[0]
    return {
        "search_175b_1024gpus_best_s": times[0],
        "search_175b_1024gpus_median_s": times[len(times) // 2],
        "configurations_enumerated": result.enumerated,
        "configurations_feasible": result.feasible,
        "refusals": result.refused_count,
        "best_step_time_s": best["step_time_s"],
        "best_parallel": best["parallel"],
    }


if __name__ == "__main__":
    for key, value in bench_search().items():
        print(f"{key}: {value}")
