"""Detection recall and error prevention (IVG spec §4.2): every row of the spec's table."""

from __future__ import annotations

import pytest

from sim.metrics import (
    DETECTION_GRACE_TICKS,
    AssistantFlag,
    DetectionEpisode,
    ErrorCall,
    ErrorEvent,
    MetricsError,
    detection_recall,
    grade_detection,
    prevention_rate,
)

TYPE, OTHER = "unattended_cooking", "wrong_assembly_order"


def event(**ticks: int | None) -> ErrorEvent:
    return ErrorEvent("e1", TYPE, ("pan",), **ticks)  # type: ignore[arg-type]


def flag(tick: int, kind: str = TYPE, target: str | None = "pan") -> AssistantFlag:
    return AssistantFlag(tick, kind, target)


@pytest.mark.parametrize(
    ("ev", "flags", "calls", "triggered", "detected", "prevented"),
    [
        pytest.param(
            event(trigger_tick=10, commit_tick=20), [flag(25)], [], 1, 1, 0,
            id="flag 5 ticks after commit",
        ),
        pytest.param(
            event(trigger_tick=10, resolve_tick=17, accept_tick=17), [flag(15)], [], 1, 1, 1,
            id="warned before commit, accepted, course changed",
        ),
        pytest.param(
            event(trigger_tick=10, commit_tick=20), [flag(15)], [], 1, 1, 0,
            id="warned before commit, user rejects, action commits",
        ),
        pytest.param(
            event(trigger_tick=10, commit_tick=20, accept_tick=23), [flag(22)], [], 1, 1, 0,
            id="accepted, but the message arrived after commit",
        ),
        pytest.param(
            event(trigger_tick=10, commit_tick=20),
            [flag(15, OTHER)],
            [ErrorCall(16, "e1", correct=False)],
            1, 0, 0,
            id="wrong type, user does not recognize the diagnosis",
        ),
        pytest.param(
            event(trigger_tick=10, commit_tick=20), [flag(20 + DETECTION_GRACE_TICKS + 1)], [],
            1, 0, 0,
            id="correct flag 31 ticks after commit",
        ),
        pytest.param(
            event(trigger_tick=10, commit_tick=20), [flag(20 + DETECTION_GRACE_TICKS)], [],
            1, 1, 0,
            id="correct flag exactly 30 ticks after commit (inclusive)",
        ),
        pytest.param(event(), [flag(5)], [], 0, 0, 0, id="episode ends before the trigger"),
    ],
)  # fmt: skip
def test_the_spec_detection_table(
    ev: ErrorEvent,
    flags: list[AssistantFlag],
    calls: list[ErrorCall],
    triggered: int,
    detected: int,
    prevented: int,
) -> None:
    result = grade_detection(DetectionEpisode("ep", (ev,), tuple(flags), tuple(calls)))
    assert (result.triggered, result.detected, result.prevented) == (triggered, detected, prevented)


def test_a_correct_user_error_call_detects_within_the_window() -> None:
    ev = event(trigger_tick=10, commit_tick=20, accept_tick=18)
    result = grade_detection(DetectionEpisode("ep", (ev,), calls=(ErrorCall(16, "e1", True),)))
    assert (result.detected, result.prevented, result.outcomes[0].detect_tick) == (1, 1, 16)
    late = DetectionEpisode("ep", (ev,), calls=(ErrorCall(51, "e1", True),))
    assert grade_detection(late).detected == 0


def test_the_window_opens_at_the_trigger_and_closes_at_resolution_without_commit() -> None:
    ev = event(trigger_tick=10, resolve_tick=30)
    assert ev.window() == (10, 30)
    for tick, hit in ((9, 0), (10, 1), (30, 1), (31, 0)):
        assert grade_detection(DetectionEpisode("ep", (ev,), (flag(tick),))).detected == hit
    # neither committed nor resolved: open to the end of the trace
    assert event(trigger_tick=10).window() == (10, None)


def test_the_grader_accepts_a_flag_without_a_target_but_not_a_wrong_target() -> None:
    ev = event(trigger_tick=10, commit_tick=20)
    assert grade_detection(DetectionEpisode("ep", (ev,), (flag(12, target=None),))).detected == 1
    assert grade_detection(DetectionEpisode("ep", (ev,), (flag(12, target="pot"),))).detected == 0


def test_false_flags_are_counted_and_do_not_change_recall() -> None:
    ev = event(trigger_tick=10, commit_tick=20)
    flags = (flag(5), flag(12), flag(13, OTHER), flag(90))
    result = grade_detection(DetectionEpisode("ep", (ev,), flags))
    assert result.false_flags == 3  # before the trigger, the wrong type, after the window
    assert detection_recall([result]).value == 1.0


def test_the_pooled_example_gives_fifty_percent() -> None:
    def episode(name: str, triggered: int, detected: int) -> DetectionEpisode:
        events = tuple(
            ErrorEvent(f"{name}{i}", TYPE, (f"pan{i}",), trigger_tick=10, commit_tick=20)
            for i in range(triggered)
        )
        flags = tuple(AssistantFlag(12, TYPE, f"pan{i}") for i in range(detected))
        return DetectionEpisode(name, events, flags)

    results = [grade_detection(episode(*row)) for row in (("A", 3, 2), ("B", 1, 0), ("C", 0, 0))]
    assert [(r.triggered, r.detected) for r in results] == [(3, 2), (1, 0), (0, 0)]
    recall = detection_recall(results)
    assert recall.value == pytest.approx(0.5)  # not 33.3% nor 22.2%
    assert (recall.n, recall.episodes) == (4, ("A", "B"))
    assert prevention_rate(results).value == 0.0


def test_nothing_triggered_gives_none_not_zero() -> None:
    result = grade_detection(DetectionEpisode("ep", (event(),)))
    assert detection_recall([result]).value is None
    assert prevention_rate([result]).value is None


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: event(trigger_tick=-1), "trigger_tick"),
        (lambda: event(trigger_tick=10, commit_tick=5), "commit_tick"),
        (lambda: event(commit_tick=5), "commit_tick"),
        (lambda: AssistantFlag(-3, TYPE), "tick"),
        (lambda: ErrorCall(-1, "e1", True), "tick"),
        (lambda: DetectionEpisode("ep", (event(),), calls=(ErrorCall(3, "zz", True),)), "event_id"),
        (lambda: DetectionEpisode("ep", (event(), event())), "event_id"),
    ],
)
def test_bad_records_name_the_field(make: object, field: str) -> None:
    with pytest.raises(MetricsError, match=field):
        make()  # type: ignore[operator]
