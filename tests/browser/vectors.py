"""Input vectors for the parity tests: the page (and Pyodide under Node) must print what the CLI prints.

Each vector is a dict of raw inputs as typed in a form field or a terminal; fields not
named are left blank, which means "absent" for both the CLI and the page.
"""

from calc.api import COMMANDS
from calc.presets import ATLAS_DEFAULT, PRESETS

BATCH = [
    {"micro_batch": "8", "accumulation": "16", "data_parallel": "64"},
    {"micro_batch": "1", "data_parallel": "1"},
    {"micro_batch": "4", "accumulation": "8", "gpus": "512", "tensor_parallel": "8", "pipeline_parallel": "4"},
    {"micro_batch": "2", "accumulation": "32", "gpus": "1024", "tensor_parallel": "4", "pipeline_parallel": "8",
     "context_parallel": "2"},
    {"micro_batch": "8", "accumulation": "16", "data_parallel": "64", "seq_len": "4096"},
    {"micro_batch": "16", "data_parallel": "8", "seq_len": "2048", "target_global_batch": "1024"},
    {"micro_batch": "2", "gpus": "64", "tensor_parallel": "2", "target_global_batch": "4096"},
    {"micro_batch": "8", "accumulation": "4", "data_parallel": "16", "seq_len": "8192", "examples_per_sequence": "3.5"},
    {"micro_batch": "8", "accumulation": "4", "data_parallel": "16", "seq_len": "8192", "padding_fraction": "0.125"},
    {"micro_batch": "8", "accumulation": "4", "data_parallel": "16", "seq_len": "1024",
     "examples_per_sequence": "2.25", "padding_fraction": "0.3"},
    {"micro_batch": "8", "accumulation": "3", "data_parallel": "2", "microbatch_sizes": "8,8,5;8,8,8"},
    {"micro_batch": "8", "accumulation": "3", "data_parallel": "2", "seq_len": "512",
     "microbatch_sizes": "8,7,5;6,8,8", "padding_fraction": "0.1"},
    {"micro_batch": "1", "accumulation": "1", "data_parallel": "1000000"},
    {"micro_batch": "3", "accumulation": "7", "data_parallel": "11", "seq_len": "3"},
    {"micro_batch": " 8 ", "accumulation": "16", "data_parallel": "64"},
    {"micro_batch": "8.0", "accumulation": "16", "data_parallel": "64"},
    {"micro_batch": "+8", "accumulation": "1e1", "data_parallel": "64"},
    {"micro_batch": "32", "accumulation": "2", "gpus": "96", "pipeline_parallel": "3"},
    {"micro_batch": "4", "gpus": "8", "data_parallel": "8"},
    {"micro_batch": "6", "data_parallel": "10", "target_global_batch": "600", "seq_len": "128000"},
    {"micro_batch": "1", "accumulation": "1", "data_parallel": "1", "examples_per_sequence": "1", "padding_fraction": "0"},
    {"micro_batch": "12", "accumulation": "5", "gpus": "240", "tensor_parallel": "4", "context_parallel": "3",
     "seq_len": "32768", "examples_per_sequence": "1.75", "padding_fraction": "0.05"},
]

ALLREDUCE = [
    {},
    {"ranks": "8", "payload": "1e9", "bandwidth": "100e9", "startup": "5e-6"},
    {"ranks": "2"},
    {"ranks": "1"},
    {"ranks": "1024", "payload": "4MB"},
    {"ranks": "64", "payload": "0"},
    {"ranks": "64", "startup": "0"},
    {"payload": "1KiB"},
    {"payload": "512MB", "bandwidth": "400Gbit/s"},
    {"payload": "1.5GiB", "bandwidth": "25GB/s", "startup": "20us"},
    {"ranks": "16", "payload": "100kB", "bandwidth": "12.5GB/s", "startup": "1ms"},
    {"ranks": "4096", "payload": "10GB", "bandwidth": "50GBps", "startup": "2µs"},
    {"ranks": "3", "payload": "7", "bandwidth": "1", "startup": "1"},
    {"ranks": "128", "payload": "64MiB", "bandwidth": "900GB/s", "startup": "3.5us"},
    {"ranks": "48", "payload": "2TB", "bandwidth": "1TB/s", "startup": "500ns"},
    {"ranks": "8", "payload": "8 GiB", "bandwidth": "100 GB/s", "startup": "5 us"},
    {"ranks": "256", "payload": "1MB", "bandwidth": "100Gbps", "startup": "10us"},
    {"ranks": "7", "payload": "123456789", "bandwidth": "3.3e10", "startup": "1.7e-5"},
    {"ranks": "1000000000", "payload": "1PB"},
    {"ranks": "32", "payload": "0.5", "bandwidth": "1kB/s", "startup": "0.25s"},
    {"ranks": "12", "payload": "3MiB", "bandwidth": "200MiB/s", "startup": "100ms"},
    {"ranks": "64.0", "payload": "1GiB"},
]

#: Splits of the atlas's default model (GPT-3 175B on 1024 GPUs), and other presets.
ATLAS_VECTORS = [
    {},
    {"interleave": "2"},
    {"interleave": "4", "recompute": "selective", "sequence_parallel": "true"},
    {"data_parallel": "32", "pipeline_parallel": "4"},
    {"data_parallel": "8", "pipeline_parallel": "16"},
    {"data_parallel": "128", "pipeline_parallel": "1", "zero": "3", "sequence_parallel": "true", "recompute": "selective"},
    {"data_parallel": "8", "context_parallel": "2", "sequence_parallel": "true"},
    {"data_parallel": "64", "tensor_parallel": "2", "zero": "1"},
    {"data_parallel": "16", "micro_batch": "2", "zero": "1", "precision": "bf16-adam"},
    {"data_parallel": "16", "inter_node_bandwidth": "50GB/s", "intra_node_bandwidth": "450GB/s", "flops_per_gpu": "989TFLOP/s"},
    {**PRESETS["llama3-8b"].inputs},
    {**PRESETS["mixtral-8x7b"].inputs},
    {**PRESETS["mixtral-8x7b"].inputs, "data_parallel": "1", "context_parallel": "2"},
    # hybrid sharding (zero_group), and DeepSpeed's ZeRO-3 of 2021 (tensor-blocking)
    {"data_parallel": "128", "pipeline_parallel": "1", "zero": "3", "zero_group": "8", "sequence_parallel": "true",
     "recompute": "selective"},
    {"data_parallel": "128", "pipeline_parallel": "1", "zero": "3", "zero3_gather": "tensor-blocking",
     "recompute": "full"},
]


def atlas_inputs(extra: dict[str, str]) -> dict[str, str]:
    base = COMMANDS["plan"].fields(PRESETS[ATLAS_DEFAULT].inputs)
    if "layers" in extra:  # a whole preset: fields it does not name take their defaults
        base = COMMANDS["plan"].fields()
    return {**base, **extra}


#: Atlas inputs (over the default) whose launch settings cover every framework's text and refusals:
#: ZeRO-3 (Megatron has no stage 3), a plan that does not fit (every framework refuses), the presets.
LAUNCH_VECTORS = [
    {},
    {"precision": "bf16-adam", "overlap_grad_reduce": "false"},
    {"zero": "3", "interleave": "2"},
    {"device_memory": "24GiB"},
    {"data_parallel": "8", "context_parallel": "2", "sequence_parallel": "true"},
    {**PRESETS["llama3-8b"].inputs},
    {**PRESETS["mixtral-8x7b"].inputs},
]

#: (pin, atlas inputs over the default): the pin is the atlas's query string as the page keeps it in
#: ``pin=``; the last two are refused (plans of different models; a name that is no field).
COMPARE_VECTORS = [
    ("", {"data_parallel": "32", "pipeline_parallel": "4"}),
    ("interleave=2", {"interleave": "4", "recompute": "selective", "sequence_parallel": "true"}),
    ("zero=1&data_parallel=64&tensor_parallel=2", {"data_parallel": "128", "pipeline_parallel": "1", "zero": "3",
                                                   "sequence_parallel": "true", "recompute": "selective"}),
    ("device_memory=24GiB", {}),
    ("", {"hidden": "8192", "heads": "64"}),
    ("evil=1", {}),
]
