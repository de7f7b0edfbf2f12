"""Precision at a base rate and the review queue a detector produces."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contam_cli.stats import ReviewQueue, precision_at_prevalence, review_queue_size

prevalence_module = importlib.import_module("contam_cli.stats.prevalence")


def test_doctests() -> None:
    result = doctest.testmod(prevalence_module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    "recall, fpr, prevalence, expected",
    [
        pytest.param(0.945, 0.457, 0.01, 0.0204599, id="n=5 overlap at 1%"),
        pytest.param(0.40, 0.0, 0.01, 1.0, id="no false positives"),
        pytest.param(0.0, 0.3, 0.01, 0.0, id="no true positives"),
        pytest.param(0.5, 0.5, 0.5, 0.5, id="chance at even odds"),
        pytest.param(0.2, 0.9, 1.0, 1.0, id="everything contaminated"),
    ],
)
def test_precision_at_prevalence(
    recall: float, fpr: float, prevalence: float, expected: float
) -> None:
    assert precision_at_prevalence(recall, fpr, prevalence) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    "recall, fpr, prevalence",
    [
        pytest.param(0.0, 0.0, 0.01, id="nothing flagged"),
        pytest.param(0.9, 0.0, 0.0, id="no contamination, no false positive"),
    ],
)
def test_precision_of_an_empty_queue_is_none(recall: float, fpr: float, prevalence: float) -> None:
    assert precision_at_prevalence(recall, fpr, prevalence) is None


@pytest.mark.parametrize(
    "recall, fpr, prevalence, name",
    [
        pytest.param(0.5, 0.1, 1.5, "prevalence", id="prevalence above 1"),
        pytest.param(0.5, 0.1, -0.01, "prevalence", id="prevalence below 0"),
        pytest.param(1.2, 0.1, 0.01, "recall", id="recall above 1"),
        pytest.param(0.5, -0.1, 0.01, "false-positive rate", id="negative fpr"),
        pytest.param(math.nan, 0.1, 0.01, "recall", id="NaN recall"),
        pytest.param(0.5, 0.1, "1%", "prevalence", id="not a number"),
    ],
)
def test_precision_rejects_non_rates(
    recall: float, fpr: float, prevalence: float, name: str
) -> None:
    with pytest.raises(ValueError, match=name):
        precision_at_prevalence(recall, fpr, prevalence)


def test_review_queue_size() -> None:
    queue = review_queue_size(10_000, 0.945, 0.457, 0.01)
    assert queue.flagged == pytest.approx(4618.8)
    assert queue.true == pytest.approx(94.5)
    assert queue.false == pytest.approx(4524.3)
    assert queue.missed == pytest.approx(5.5)
    assert queue.precision == pytest.approx(0.0204599, abs=1e-6)
    with pytest.raises(dataclasses.FrozenInstanceError):
        queue.flagged = 0.0  # type: ignore[misc]


def test_review_queue_edges() -> None:
    none = review_queue_size(0, 0.5, 0.1, 0.01)
    assert none == ReviewQueue(0.0, 0.0, 0.0, 0.0, precision_at_prevalence(0.5, 0.1, 0.01))
    assert none.precision == pytest.approx(0.005 / (0.005 + 0.099))
    empty = review_queue_size(100, 0.0, 0.0, 0.2)
    assert (empty.flagged, empty.missed, empty.precision) == (0.0, 20.0, None)
    with pytest.raises(ValueError, match="documents"):
        review_queue_size(-1, 0.5, 0.1, 0.01)
    with pytest.raises(ValueError, match="prevalence"):
        review_queue_size(100, 0.5, 0.1, 2.0)


rates = st.floats(0.0, 1.0)


@given(rates, rates, rates)
def test_precision_is_a_rate(recall: float, fpr: float, prevalence: float) -> None:
    precision = precision_at_prevalence(recall, fpr, prevalence)
    assert precision is None or 0.0 <= precision <= 1.0


@given(st.floats(0, 1e9), rates, rates, rates)
def test_review_queue_adds_up(documents: float, recall: float, fpr: float, p: float) -> None:
    queue = review_queue_size(documents, recall, fpr, p)
    assert queue.flagged == pytest.approx(queue.true + queue.false)
    assert queue.true + queue.missed == pytest.approx(documents * p)
    assert min(queue.flagged, queue.true, queue.false, queue.missed) >= 0.0
