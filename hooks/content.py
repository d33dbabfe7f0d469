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

``<!-- calc:commands -->``
    Every command of ``python -m calc`` (:data:`calc.api.COMMANDS`, the list
    ``--help`` prints) with what it computes, so a page that lists them never
    goes stale when a command is added.

``<!-- calc:names -->``
    The table of names (:data:`calc.spec.NAMES`): each concept, the one name every
    interface gives it, and the names no command uses for it.

``<!-- calc:params layers=L hidden=H heads=A vocab=V seq_len=S [kv_heads=..] [ffn_hidden=..] [gated_mlp=true] [biases=true] [learned_positions=true] [tied_embeddings=true] show=KEY -->``
    One parameter count of a model (:func:`calc.model.param_count`): ``total``,
    ``embedding`` (word embedding, with learned positions), ``output_head`` (0
    when tied) or ``per_dense_layer`` (one transformer block).
"""

from __future__ import annotations

from calc import batch as _batch
from calc import model as _model
from calc.api import COMMANDS
from calc.collectives import ring_allreduce_schedule
from calc.spec import NAMES
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


def build_commands() -> Table:
    """One row per command of ``python -m calc``, in the order ``--help`` lists them."""
    rows = tuple((f"`python -m calc {c.name}`", c.title) for c in COMMANDS.values())
    return Table(("Command", "What it computes"), rows, align=("l", "l"))


def render_commands(marker: Marker) -> str:
    if marker.words:
        raise MarkerError("takes no command name: calc:commands")
    return build_commands().as_markdown()


def render_names(marker: Marker) -> str:
    if marker.words or marker.options:
        raise MarkerError("takes nothing: calc:names")
    rows = tuple((f"`{n.name}`", n.concept, ", ".join(f"`{x}`" for x in n.not_names)) for n in NAMES)
    return Table(("Name", "What it is", "Not called"), rows, align=("l", "l", "l")).as_markdown()


_MODEL_COUNTS = ("layers", "hidden", "heads", "vocab", "seq_len", "kv_heads", "ffn_hidden")
_MODEL_FLAGS = ("gated_mlp", "biases", "learned_positions", "tied_embeddings")
_PARAM_COUNTS = ("total", "embedding", "output_head", "per_dense_layer")


def render_params(marker: Marker) -> str:
    if marker.words:
        raise MarkerError("takes no command name: calc:params layers=L hidden=H ... show=KEY")
    show = marker.take("show")
    if show not in _PARAM_COUNTS:
        raise MarkerError(f"show must be one of {', '.join(_PARAM_COUNTS)}, got {show!r}")
    counts = {k: marker.take(k) for k in _MODEL_COUNTS}
    flags = {k: marker.take(k, "false") for k in _MODEL_FLAGS}
    missing = [k for k in _MODEL_COUNTS[:5] if counts[k] is None]
    if missing:
        raise MarkerError(f"needs {', '.join(f'{k}=N' for k in missing)}")
    for k, v in flags.items():
        if v not in ("true", "false"):
            raise MarkerError(f"{k} must be true or false, got {v!r}")
    try:
        numbers = {k: int(v) for k, v in counts.items() if v is not None}
    except ValueError as e:
        raise MarkerError(f"{', '.join(_MODEL_COUNTS)} must be whole numbers: {e}") from None
    m = _model.model(numbers.pop("layers"), numbers.pop("hidden"), numbers.pop("heads"), numbers.pop("vocab"),
                     numbers.pop("seq_len"), **numbers, **{k: v == "true" for k, v in flags.items()})
    return format_count(getattr(_model.param_count(m), show), "parameters")


RENDERERS = {"cases": render_cases, "schedule": render_schedule, "sequences": render_sequences,
             "commands": render_commands, "params": render_params, "names": render_names}
