"""The one divisibility rule of a parallel split: every device holds whole pieces.

``traffic``, ``activations``, ``memory`` and ``plan`` split the same model the same way, so they
accept and refuse the same splits, with the same words, through :func:`check_split`::

    tensor t      divides heads, ffn_hidden and hidden, and        Megatron-LM splits attention by
                  divides kv_heads or is a multiple of it          heads and the MLP by columns; with
                                                                   t > kv_heads each KV head is
                                                                   replicated t/kv_heads times
    pipeline p    at most layers                                   every stage holds a layer
    context c     2·c divides seq_len                              load-balanced causal split: each
                                                                   rank holds 2 of 2c chunks
    sequence par. t divides seq_len / c                            each TP rank holds s/(c·t) tokens
    t × p         divides params                                   (when only a parameter count is known)

Sources: Shoeybi et al. 2019, "Megatron-LM", §3 (the tensor split); Korthikanti et al. 2022,
§4.2.2 (sequence parallelism); Liu et al. 2023, "Ring Attention", and Megatron-LM's context
parallelism (the 2c-chunk load balancing).

Every command names the degrees the same way (``tensor_parallel``, ``pipeline_parallel``,
``context_parallel``: :data:`calc.spec.AXES`), so a message names a parameter the caller has.
"""

from __future__ import annotations

from .errors import CalcError

__all__ = ["check_split"]


def check_split(
    *,
    tensor: int = 1,
    pipeline: int = 1,
    context: int = 1,
    sequence_parallel: bool = False,
    heads: int | None = None,
    kv_heads: int | None = None,
    ffn_hidden: int | None = None,
    hidden: int | None = None,
    seq_len: int | None = None,
    layers: int | None = None,
    params: int | None = None,
) -> None:
    """Refuse a split that leaves a device a fraction of something; say which degree and why.

    Degrees and sizes are whole numbers already checked (:func:`calc.check.count`); a size left
    as ``None`` is not known to the caller and not checked. ``kv_heads`` None means ``heads``.
    The first broken rule is reported, in the order of the table in the module docstring.

    >>> check_split(tensor=8, heads=32, kv_heads=8, ffn_hidden=14336, hidden=4096, seq_len=8192)
    >>> check_split(tensor=16, heads=32, kv_heads=8)  # each KV head on two ranks
    >>> check_split(tensor=12, heads=48, kv_heads=8)
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: tensor_parallel must be a divisor of heads (48) that divides kv_heads (8) or is a multiple of it, got 12
    >>> check_split(context=3, seq_len=2047)
    Traceback (most recent call last):
    ...
    calc.errors.CalcError: context_parallel must be such that 2 × context_parallel divides seq_len (2047) (load-balanced causal split), got 3
    """
    t, p, c = tensor, pipeline, context
    tn, pn, cn = "tensor_parallel", "pipeline_parallel", "context_parallel"
    if heads is not None:
        kv = heads if kv_heads is None else kv_heads
        if heads % t or (kv % t and t % kv):
            raise CalcError(tn, f"a divisor of heads ({heads}) that divides kv_heads ({kv}) or is a multiple of it", t)
    if ffn_hidden is not None and ffn_hidden % t:
        raise CalcError(tn, f"a divisor of ffn_hidden ({ffn_hidden})", t)
    if hidden is not None and hidden % t:
        raise CalcError(tn, f"a divisor of hidden ({hidden})", t)
    if layers is not None and p > layers:
        raise CalcError(pn, f"<= layers ({layers})", p)
    if seq_len is not None:
        if c > 1 and seq_len % (2 * c):
            raise CalcError(cn, f"such that 2 × {cn} divides seq_len ({seq_len}) (load-balanced causal split)", c)
        if sequence_parallel and t > 1 and (seq_len // c) % t:
            raise CalcError("sequence_parallel",
                            f"false, or seq_len / {cn} ({seq_len // c}) must be a multiple of {tn} ({t})", True)
    if params is not None and params % (t * p):
        raise CalcError("params", f"a multiple of {tn} × {pn} = {t * p} (each device holds whole parameters)",
                        params)
