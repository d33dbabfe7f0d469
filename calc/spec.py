"""SPEC.json: the nested description ``plan`` and ``search`` read, flattened to their parameters.

A SPEC is a JSON object of sections (``model``, ``batch``, ``hardware``,
``parallel``, ``training``; ``serving`` for ``infer``), each an object of fields. Field
names are unique across sections, so the flat parameter of ``model.kv_heads`` is
``kv_heads``, with one rule for the parallel degrees (:func:`spec_key`): inside the
``parallel`` section a degree is named by its bare axis, ``parallel.tensor``, and its
flat name (CLI flag, URL parameter, form field, marker option) adds ``_parallel``:
``tensor_parallel``. A result's ``parallel`` object uses the bare axes too, so it can be
pasted back into a SPEC.
Values may be numbers, booleans or unit strings (``"80GB"``, ``"989TFLOP/s"``,
``"450GB/s"``, ``"5us"``); they are parsed by :func:`calc.api.evaluate` like any
other input. The defaults of omitted fields are those of the command's
parameters (``calc.api``): ``kv_heads`` = heads, ``ffn_hidden`` = 4 × hidden,
``gated_mlp`` false, ``tied_embeddings`` false, every parallel degree 1, ``zero``
0, ``sequence_parallel`` false, ``recompute`` none, ``interleave`` 1.

An unknown section or field is a :class:`CalcError` naming it (``model.foo``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from . import jsontext
from .errors import CalcError

__all__ = ["parse_text", "flatten", "qualified", "spec_key", "AXES", "Name", "NAMES"]

#: The parallel axes, in the order the site lists them.
AXES = ("data", "tensor", "pipeline", "context", "expert")


@dataclass(frozen=True, slots=True)
class Name:
    """One concept, the one flat name every interface gives it, and the names it must not have."""

    name: str  #: the CLI flag (``--`` + name with ``-``), URL parameter, form field, marker option, JSON key
    concept: str
    not_names: tuple[str, ...]  #: names other tools use for it, which no command may use


#: The table of names (the interfaces page prints it; a test holds every command to it).
NAMES = (
    Name("data_parallel", "data-parallel degree: model replicas, each on its own examples (ZeRO shards over them)",
         ("data", "dp", "replicas", "data_parallel_size")),
    Name("tensor_parallel", "tensor-parallel degree: ranks that split each layer's matrices",
         ("tensor", "tp", "tensor_model_parallel_size")),
    Name("pipeline_parallel", "pipeline-parallel degree: stages, each holding consecutive layers",
         ("pipeline", "pp", "stages", "pipeline_stages", "pipeline_model_parallel_size")),
    Name("context_parallel", "context-parallel degree: ranks that split each sequence", ("context", "cp")),
    Name("expert_parallel", "expert-parallel degree: ranks that split the experts", ("expert", "ep")),
    Name("gpus", "GPUs in total", ("devices", "world_size", "num_gpus", "n_gpus")),
    Name("device_memory", "memory of one GPU", ("memory", "gpu_memory", "memory_per_gpu", "hbm")),
    Name("micro_batch", "microbatch size: sequences one replica runs at once",
         ("microbatch", "mbs", "micro_batch_size")),
    Name("global_batch", "global batch: sequences per optimizer step, all replicas",
         ("gbs", "global_batch_size", "batch_size")),
    Name("seq_len", "sequence length (tokens)", ("seq", "seqlen", "sequence_length", "seq_length")),
    Name("interleave", "model chunks per pipeline stage (virtual stages)",
         ("virtual_stages", "chunks", "vpp", "virtual_pipeline_model_parallel_size")),
)

#: Longest SPEC text accepted (characters).
MAX_SPEC_CHARS = 1_000_000


def parse_text(text: str, name: str = "SPEC.json") -> dict:
    """The JSON object in ``text``, read by :func:`calc.jsontext.loads` (bounded; a key given twice is an error).

    >>> parse_text('{"model": {"layers": 2}}')
    {'model': {'layers': 2}}
    >>> parse_text('[1]')
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: SPEC.json must be a JSON object of sections, got '[1]'
    """
    data = jsontext.loads(text, name, MAX_SPEC_CHARS)
    if not isinstance(data, dict):
        raise CalcError(name, "a JSON object of sections", text)
    return data


def spec_key(name: str, section: str) -> str:
    """The key of flat field ``name`` inside SPEC section ``section``.

    >>> spec_key("tensor_parallel", "parallel"), spec_key("zero", "parallel"), spec_key("layers", "model")
    ('tensor', 'zero', 'layers')
    """
    axis = name.removesuffix("_parallel")
    return axis if section == "parallel" and axis in AXES and axis != name else name


def flatten(spec: Mapping, fields: Mapping[str, str]) -> dict:
    """``{"model": {"layers": 32}}`` → ``{"layers": 32}``, checking every name.

    ``fields`` maps each flat field name to its section.

    >>> flatten({"model": {"layers": 32}, "batch": {}}, {"layers": "model", "micro_batch": "batch"})
    {'layers': 32}
    >>> flatten({"parallel": {"tensor": 8}}, {"tensor_parallel": "parallel"})
    {'tensor_parallel': 8}
    >>> flatten({"model": {"foo": 1}}, {"layers": "model"})
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: model.foo must be a field of model (layers), got 1
    """
    sections: dict[str, dict[str, str]] = {}
    for name, section in fields.items():
        sections.setdefault(section, {})[spec_key(name, section)] = name
    flat: dict[str, object] = {}
    for section, body in spec.items():
        if section not in sections:
            raise CalcError(str(section), "a section of the spec (" + ", ".join(sections) + ")", body)
        if not isinstance(body, Mapping):
            raise CalcError(str(section), "a JSON object of fields", body)
        for key, value in body.items():
            if key not in sections[section]:
                raise CalcError(f"{section}.{key}", f"a field of {section} ({', '.join(sections[section])})",
                                value)
            flat[sections[section][key]] = value
    return flat


def qualified(name: str, fields: Mapping[str, str]) -> str:
    """``kv_heads`` → ``model.kv_heads``, ``tensor_parallel`` → ``parallel.tensor`` (names outside the spec
    are returned unchanged).

    >>> qualified("kv_heads", {"kv_heads": "model"}), qualified("top", {})
    ('model.kv_heads', 'top')
    >>> qualified("tensor_parallel", {"tensor_parallel": "parallel"})
    'parallel.tensor'
    """
    section = fields.get(name)
    return f"{section}.{spec_key(name, section)}" if section else name
