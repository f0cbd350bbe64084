"""Proactive requests (IVG spec §4.5): every row of the spec's table, the readiness classifier,
pre-classified messages and the exclusions."""

from __future__ import annotations

import pytest

from sim.metrics import Message, MetricsError, ProactiveRequest, is_readiness_claim, proactive_score

T_Q, T_C, H = 113, 130, 140


def request(*messages: tuple[int, str], t_q: int = T_Q, **kw: int | None) -> ProactiveRequest:
    ticks: dict[str, int | None] = {"complete_tick": T_C, "end_tick": H}
    ticks.update(kw)
    msgs = tuple(Message(t, text) for t, text in messages)
    return ProactiveRequest("r", ("potato",), t_q, messages=msgs, **ticks)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("req", "score"),
    [
        pytest.param(request((120, "I'll watch it"), (134, "potato is done")), 1, id="ack, done"),
        pytest.param(request((134, "done")), 1, id="134 done"),
        pytest.param(request((127, "it's ready"), (134, "done")), 0, id="premature at 127"),
        pytest.param(request((128, "it's ready")), 0, id="128 only: not premature, not valid"),
        pytest.param(request((128, "it's ready"), (131, "done")), 1, id="128 then 131"),
        pytest.param(request((140, "done")), 0, id="late: H exclusive"),
        pytest.param(request((120, "I'll watch it")), 0, id="acknowledgement only"),
        pytest.param(request((136, "done"), t_q=135), 1, id="asked after completion: L = 135"),
        pytest.param(request(removed_tick=131), None, id="taken off the heat at 131: excluded"),
    ],
)  # fmt: skip
def test_the_spec_proactive_table(req: ProactiveRequest, score: int | None) -> None:
    assert proactive_score(req) == score


def test_the_window_is_from_max_of_request_and_completion_to_h() -> None:
    assert request().window == (130, 140)
    assert request(t_q=135).window == (135, 140)
    assert request(end_tick=None).window == (130, None)  # open to the end of the trace
    assert request(removed_tick=136).window == (130, 136)


def test_requests_without_a_valid_cooking_window_are_excluded() -> None:
    assert proactive_score(request((134, "done"), complete_tick=None, end_tick=None)) is None
    assert proactive_score(request((145, "done"), t_q=142)) is None  # asked after H


def test_an_alert_before_an_early_removal_still_counts() -> None:
    assert proactive_score(request((130, "potato's done"), removed_tick=131)) == 1
    assert proactive_score(request((125, "it's ready"), removed_tick=131)) == 0  # premature
    assert proactive_score(request(removed_tick=133)) == 0  # not within two ticks


def test_messages_before_the_request_do_not_answer_it() -> None:
    assert proactive_score(request((100, "it's ready"), (134, "done"))) == 1


def test_pre_classified_messages_skip_the_classifier() -> None:
    said = (Message(134, "🥔✅", readiness=True),)
    assert proactive_score(ProactiveRequest("r", ("potato",), T_Q, T_C, H, messages=said)) == 1
    said = (Message(134, "potato is done", readiness=False),)
    assert proactive_score(ProactiveRequest("r", ("potato",), T_Q, T_C, H, messages=said)) == 0


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("potato is done", True),
        ("Done!", True),
        ("it's ready", True),
        ("The potato is cooked, take it off now.", True),
        ("I'll watch it. Your potato is finished.", True),
        ("not done yet", False),
        ("The potato isn't ready", False),
        ("I'll watch it", False),
        ("I'll tell you when it's done", False),
        ("It will be ready in a few ticks", False),
        ("almost done", False),
        ("It's nearly fully cooked", False),
        ("Good news about the potato: it's done.", True),
        ("No worries, the potato is done", True),
        ("Is it done?", False),
        ("The fries are done", False),  # another item
    ],
)
def test_readiness_claims(text: str, claim: bool) -> None:
    assert is_readiness_claim(text, ("potato",)) is claim


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: Message(-1, "done"), "tick"),
        (lambda: Message(10, "done", generated_tick=12), "generated_tick"),
        (lambda: request(t_q=-2), "request_tick"),
        (lambda: request(end_tick=120), "end_tick"),
        (lambda: request(removed_tick=-1), "removed_tick"),
    ],
)
def test_bad_records_name_the_field(make: object, field: str) -> None:
    with pytest.raises(MetricsError, match=field):
        make()  # type: ignore[operator]
