"""The assistant's timing (IVG spec §2.3): the delay table, the float pitfalls it names, the
App. K delivery ticks, the cadence and the one request in flight."""

from __future__ import annotations

import json

import pytest

from annotation import UserError
from sim.assistants import AssistantClock, TimingConfig, TimingError, delay_ticks

COOK_CAP, HOUSE_CAP, DELTA = 30, 15, 1.2


@pytest.mark.parametrize(
    ("latency", "raw", "cook", "house"),
    [
        (1.0, 1, 1, 1),
        (1.2, 1, 1, 1),
        (1.21, 2, 2, 2),
        (6.5, 6, 6, 6),
        (14.4, 12, 12, 12),
        (20.0, 17, 17, 15),
        (40.0, 34, 30, 15),
        (0.0, 0, 0, 0),
    ],
)
def test_the_spec_delay_table(latency: float, raw: int, cook: int, house: int) -> None:
    assert delay_ticks(latency, DELTA) == raw
    assert delay_ticks(latency, DELTA, COOK_CAP) == cook
    assert delay_ticks(latency, DELTA, HOUSE_CAP) == house


@pytest.mark.parametrize(
    ("latency", "ticks"),
    [(8.4, 7), (10.8, 9), (16.8, 14), (21.6, 18), (27.6, 23), (33.6, 28), (3.6, 3)],
)
def test_exact_multiples_of_the_tick_are_not_rounded_up(latency: float, ticks: int) -> None:
    assert latency / DELTA > ticks or latency == 3.6  # the float trap the rule avoids
    assert delay_ticks(latency, DELTA) == ticks


def test_latency_is_rounded_to_milliseconds_first() -> None:
    assert delay_ticks(13.2004, DELTA) == 11  # 13,200 ms: exactly 11 ticks
    assert delay_ticks(13.2006, DELTA) == 12  # 13,201 ms


def test_appendix_k_delivery_ticks() -> None:
    """K.1: generated from tick 55 with ℓ in (13.2, 14.4] s arrives at 67; from 370, d = 6."""
    cfg = TimingConfig(mode="measured", cap=COOK_CAP, tick_s=DELTA)
    for latency in (13.201, 14.0, 14.4):
        clock = AssistantClock(cfg)
        assert clock.asked(55, "reply", latency) == 67
        assert clock.deliver(66) is None
        got = clock.deliver(67)
        assert got is not None and (got.asked, got.due, got.reply) == (55, 67, "reply")
    clock = AssistantClock(cfg)
    assert clock.asked(370, None, 7.0) == 376


def test_cadence_and_one_request_in_flight() -> None:
    """Measured 0.5 s at Δ = 0.1 s is 5 ticks: asked at 0, delivered at 5 and asked again."""
    clock = AssistantClock(TimingConfig(mode="measured", cadence=2, tick_s=0.1))
    asked, delivered = [], []
    for tick in range(16):
        if clock.deliver(tick) is not None:
            delivered.append(tick)
        if clock.should_ask(tick):
            clock.asked(tick, {"text": ""}, 0.5)
            asked.append(tick)
    assert asked == [0, 5, 10, 15] and delivered == [5, 10, 15]
    with pytest.raises(TimingError, match="still due at 20"):
        clock.asked(16, None, 0.1)


def test_fixed_timing_and_action_response() -> None:
    fixed = AssistantClock(TimingConfig())  # every 2 ticks, delivered at t + 2
    asked = []
    for tick in range(7):
        fixed.deliver(tick)
        if fixed.should_ask(tick):
            assert fixed.asked(tick, None, 99.0) == tick + 2  # the latency is ignored
            asked.append(tick)
    assert asked == [0, 2, 4, 6]
    screen = AssistantClock(TimingConfig(cadence=1, fixed_delay=0))
    for tick in (6, 7, 13):  # K.3c: errors at t6 and t13 answered at t6 and t13
        assert screen.should_ask(tick)
        assert screen.asked(tick, "warn", 1.7) == tick
        assert screen.deliver(tick) is not None


def test_state_round_trips_through_json_mid_flight() -> None:
    cfg = TimingConfig(mode="measured", tick_s=0.1)
    clock = AssistantClock(cfg)
    clock.asked(4, {"text": "the pan is empty"}, 0.35)
    again = AssistantClock(cfg)
    again.restore(json.loads(json.dumps(clock.state())))
    assert not again.should_ask(5)
    got = again.deliver(8)
    assert got is not None and got.reply == {"text": "the pan is empty"} and got.asked == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "live"}, "timing mode must be 'fixed' or 'measured'"),
        ({"cadence": 0}, "timing cadence must be a whole number of ticks"),
        ({"cap": -1}, "timing cap must be a whole number of ticks"),
    ],
)
def test_bad_timing_is_refused_by_name(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(TimingError, match=message) as err:
        TimingConfig(**kwargs)  # type: ignore[arg-type]
    assert isinstance(err.value, UserError)
    with pytest.raises(TimingError, match="latency must be"):
        delay_ticks(-1.0, 0.1)
