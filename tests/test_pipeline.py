"""calc.pipeline: bubble, layer split, in-flight microbatches and generated schedules."""

import json
from dataclasses import asdict

import pytest

from calc.errors import CalcError
from calc.pipeline import bubble, in_flight_chunks, schedule, stage_layers


@pytest.mark.parametrize("kind,p,m,v", [("gpipe", 4, 8, 1), ("1f1b", 8, 32, 1), ("1f1b", 5, 3, 1),
                                        ("interleaved", 4, 8, 2), ("interleaved", 8, 32, 4),
                                        ("interleaved", 2, 6, 3), ("1f1b", 1, 4, 1)])
@pytest.mark.parametrize("tb", [1, 2])
def test_generated_schedules_match_the_closed_form(kind, p, m, v, tb):
    """The generated makespan is (v·m + p − 1)·(1 + t_b) chunk slots: bubble (p−1)/(v·m)."""
    s = schedule(kind, p, m, v, tb)
    assert s.makespan_slots == (v * m + p - 1) * (1 + tb)
    assert s.bubble_fraction == pytest.approx(bubble(p, m, v).bubble_fraction)
    assert len(s.ops) == 2 * p * m * v
    assert list(s.ops) == sorted(s.ops, key=lambda o: (o.stage, o.start))  # as Schedule documents
    for a, b in zip(s.ops, s.ops[1:]):  # one stage runs one operation at a time
        assert a.stage != b.stage or a.start + a.duration <= b.start


@pytest.mark.parametrize("kind,p,m,v", [("gpipe", 4, 8, 1), ("1f1b", 8, 32, 1), ("1f1b", 8, 3, 1),
                                        ("interleaved", 4, 8, 2), ("interleaved", 4, 4, 4)])
def test_peak_in_flight_matches_the_formula(kind, p, m, v):
    """Measured peak chunks in flight per stage = in_flight_chunks (p − s for 1F1B; the warm-up + 1 interleaved)."""
    s = schedule(kind, p, m, v)
    assert s.peak_in_flight == tuple(in_flight_chunks(i, p, m, v, kind) for i in range(p))


def test_dependencies_are_respected():
    """No forward starts before the previous virtual stage's forward ends; backwards run in reverse."""
    s = schedule("interleaved", 4, 8, 2)
    end = {(o.kind, o.chunk * 4 + o.stage, o.microbatch): o.start + o.duration for o in s.ops}
    for o in s.ops:
        vs = o.chunk * 4 + o.stage
        if o.kind == "forward" and vs > 0:
            assert o.start >= end[("forward", vs - 1, o.microbatch)]
        if o.kind == "backward":
            dep = ("backward", vs + 1, o.microbatch) if vs < 7 else ("forward", vs, o.microbatch)
            assert o.start >= end[dep]


def test_schedule_is_json_able():
    """A schedule serialises to JSON; an operation is an immutable record of named fields."""
    s = schedule("1f1b", 2, 2)
    assert json.loads(json.dumps(asdict(s)))["ops"][0] == [0, 0, 0, "forward", 0, 1]
    op = s.ops[0]
    assert (op.stage, op.chunk, op.microbatch, op.kind, op.start, op.duration) == (0, 0, 0, "forward", 0, 1)
    with pytest.raises(AttributeError):
        op.start = 3
    assert op._asdict() == {"stage": 0, "chunk": 0, "microbatch": 0, "kind": "forward", "start": 0, "duration": 1}


def test_uneven_split_puts_extra_layers_last():
    """10 layers on 4 stages: 2, 2, 3, 3."""
    assert stage_layers(10, 4) == (2, 2, 3, 3)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: bubble(8, 12, 2), "microbatches must be a multiple of pipeline_parallel (8) when interleave > 1, got 12"),
        (lambda: bubble(1, 12, 2), "interleave must be 1 when pipeline_parallel is 1, got 2"),
        (lambda: bubble(0, 12), "pipeline_parallel must be a whole number >= 1, got 0"),
        (lambda: bubble(8, 0), "microbatches must be a whole number >= 1, got 0"),
        (lambda: schedule("zb", 2, 2), "schedule must be one of gpipe, 1f1b, interleaved, got 'zb'"),
        (lambda: schedule("1f1b", 2, 2, 2), "interleave must be 1 for the 1f1b schedule, got 2"),
        (lambda: schedule("1f1b", 100, 101), "pipeline_parallel × microbatches × interleave must be <= 10000 to draw a schedule, "
                                             "got 10100"),
        (lambda: stage_layers(3, 4), "pipeline_parallel must be <= layers (3), got 4"),
    ],
)
def test_impossible_pipelines_are_refused_with_the_reason(call, message):
    """Impossible pipelines are CalcErrors with the reason."""
    with pytest.raises(CalcError) as e:
        call()
    assert str(e.value) == message


def test_largest_drawn_schedule_and_interleave_at_m_equal_p_are_accepted():
    """The largest schedule drawn and interleaving with m = p are accepted."""
    assert len(schedule("1f1b", 100, 100).ops) == 20_000
    assert bubble(8, 8, 2).bubble_fraction == 7 / 16
