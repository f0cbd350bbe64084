"""The RL reward, behaviour similarity and preference agreement (IVG spec §4.6)."""

from __future__ import annotations

import pytest

from sim.metrics import (
    MetricsError,
    PreferencePair,
    agreement,
    kendall_tau,
    shaped_reward,
    similarity,
)


@pytest.mark.parametrize(
    ("success", "prevented", "flags", "turns", "reward"),
    [
        (True, True, 0, 100, 1.275),
        (True, False, 15, 200, 0.65),
        (True, False, 40, 900, 0.65),  # "15+ flags, T ≥ 200": both capped
        (False, True, 0, 0, 0.30),
        (False, False, 20, 400, -0.35),
    ],
)
def test_the_spec_reward_rows(
    success: bool, prevented: bool, flags: int, turns: int, reward: float
) -> None:
    assert shaped_reward(success, prevented, flags, turns) == pytest.approx(reward)


def test_the_reward_refuses_negative_counts() -> None:
    with pytest.raises(MetricsError, match="false_flags"):
        shaped_reward(True, False, -1, 3)
    with pytest.raises(MetricsError, match="turns"):
        shaped_reward(True, False, 1, -3)


@pytest.mark.parametrize(
    ("x", "y", "sim"),
    [
        (5.87, 7.38, 0.89),
        (0.39, 16.10, 0.05),
        (2.0, 79.0, 0.05),
        (29.3, 75.0, 0.56),
        (-8.0, -12.8, 0.77),
        (-27.1, -26.2, 0.98),
        (-0.001, 0.051, 0.00),
        (0.0, 0.0, 1.0),
    ],
)
def test_the_spec_similarity_rows(x: float, y: float, sim: float) -> None:
    assert round(similarity(x, y), 2) == sim


def test_similarity_of_distributions() -> None:
    assert similarity([0.5, 0.5, 0.0], [0.5, 0.5, 0.0]) == 1.0
    assert similarity([1.0, 0.0], [0.0, 1.0]) == 0.0
    assert similarity([0.6, 0.4], [0.4, 0.6]) == pytest.approx(0.8)
    with pytest.raises(MetricsError, match="equal-length"):
        similarity([1.0], [1.0, 2.0])


def pairs(agree: int, disagree: int, metric_ties: int, human_ties: int) -> list[PreferencePair]:
    out = [PreferencePair(f"p{i}", 1, 0.8, 0.4) for i in range(agree)]
    out += [PreferencePair(f"q{i}", -1, 0.8, 0.4) for i in range(disagree)]
    out += [PreferencePair(f"r{i}", 1, 0.5, 0.5) for i in range(metric_ties)]
    out += [PreferencePair(f"s{i}", 0, 0.9, 0.1) for i in range(human_ties)]
    return out


def test_agreement_and_pair_count_tau() -> None:
    sample = pairs(agree=156, disagree=42, metric_ties=2, human_ties=7)
    assert agreement(sample) == pytest.approx(0.785)  # (156 + 2·½) / 200
    assert kendall_tau(sample) == pytest.approx(0.57)
    assert agreement(pairs(0, 0, 0, 3)) is None
    assert agreement([PreferencePair("p", -1, 0.1, 0.7)]) == 1.0


def test_a_preference_is_plus_or_minus_one_or_a_tie() -> None:
    with pytest.raises(MetricsError, match="human"):
        PreferencePair("p", 2, 0.1, 0.2)
