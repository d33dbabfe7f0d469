"""Markers the content pages need beyond single values and one-parameter tables.

``<!-- calc:cases COMMAND vary=P1,P2 values="a1,a2;b1,b2" columns=K1,K2 [param=value ...] -->``
    One row per case (cases separated by ``;``, the values of ``P1, P2, ...``
    by ``,``), for comparisons that change several inputs at once, such as
    Megatron-LM's (GPUs, TP, PP) rows. Headers are the parameters' and the
    results' labels.

``<!-- calc:schedule ranks=P -->``
    The ideal ring all-reduce of :func:`calc.collectives.ring_allreduce_schedule`
    as a table: one row per step, one column per rank, each cell the chunk that
    rank sends to its right-hand neighbour and what the neighbour does with it.

``<!-- calc:sequences tokens=T seq_len=S [multiple_of=K] [show=sequences|tokens] -->``
    Sequences per update for a token budget, rounded down to a multiple of
    ``K`` (:func:`calc.batch.sequences_for_tokens`), or the tokens those
    sequences hold.
"""

from __future__ import annotations

from calc import batch as _batch
from calc.collectives import ring_allreduce_schedule
from calc.units import format_count

from .markers import Marker, MarkerError
from .tables import Table, _command, _params, build_cases


def render_cases(marker: Marker) -> str:
    cmd = _command(marker)
    vary, values, columns = marker.take("vary"), marker.take("values"), marker.take("columns")
    if not (vary and values and columns):
        raise MarkerError('needs vary=P1,P2 values="a1,a2;b1,b2" columns=KEY,KEY')
    cases = [[v.strip() for v in case.split(",")] for case in values.split(";")]
    return build_cases(cmd, vary.split(","), cases, columns.split(","), _params(marker, cmd)).as_markdown()


def build_schedule(ranks: int) -> Table:
    """Step by step: which chunk each rank sends to its neighbour (Patarasuk & Yuan 2009, §3)."""
    steps = ring_allreduce_schedule(ranks)
    header = ("Step", "Phase") + tuple(f"Rank {r} sends" for r in range(ranks))
    rows = []
    for s in steps:
        cells = {t.src: f"chunk {t.chunk} → rank {t.dst}, {'added' if t.reduce else 'copied'}" for t in s.transfers}
        rows.append((str(s.step + 1), s.phase) + tuple(cells[r] for r in range(ranks)))
    return Table(header, tuple(rows), align=("r", "l") + ("l",) * ranks)


def render_schedule(marker: Marker) -> str:
    if marker.words:
        raise MarkerError("takes no command name: calc:schedule ranks=P")
    ranks = marker.take("ranks")
    if ranks is None:
        raise MarkerError("needs ranks=P")
    if not ranks.isdigit():
        raise MarkerError(f"ranks must be a whole number, got {ranks!r}")
    if not 2 <= int(ranks) <= 8:
        raise MarkerError(f"ranks must be 2 to 8 to fit a page, got {ranks}")
    return build_schedule(int(ranks)).as_markdown()


def render_sequences(marker: Marker) -> str:
    if marker.words:
        raise MarkerError("takes no command name: calc:sequences tokens=T seq_len=S")
    tokens, seq_len = marker.take("tokens"), marker.take("seq_len")
    multiple = marker.take("multiple_of", "1")
    show = marker.take("show", "sequences")
    if tokens is None or seq_len is None:
        raise MarkerError("needs tokens=T seq_len=S")
    if show not in ("sequences", "tokens"):
        raise MarkerError(f"show must be sequences or tokens, got {show!r}")
    try:
        t, s, k = float(tokens), int(seq_len), int(multiple)
    except ValueError as e:
        raise MarkerError(f"tokens, seq_len and multiple_of must be numbers: {e}") from None
    n = _batch.sequences_for_tokens(t, s, multiple_of=k)
    if show == "sequences":
        return format_count(n, "sequences")
    return format_count(_batch.global_batch(n, 1, 1, seq_len=s).tokens_per_update, "tokens")


RENDERERS = {"cases": render_cases, "schedule": render_schedule, "sequences": render_sequences}
