"""Guided prompting: the prefix/suffix split and LCS precision, recall and F1."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.detectors.guided import (
    lcs_length,
    lcs_score,
    run_guided_prompt_test,
    score_completion,
    split_prefix_suffix,
)
from contam_cli.errors import UsageError
from contam_cli.text import tokenize

PADDED = "alpha " + "filler " * 40 + "beta " + "filler " * 40 + "gamma"


def test_padding_keeps_recall_but_not_f1() -> None:
    # the regression case: a verbose completion that holds the suffix as a subsequence
    score = lcs_score(tokenize(PADDED), tokenize("alpha beta gamma"))
    assert score.recall == 1.0
    assert score.precision == pytest.approx(0.0361, abs=1e-4)
    assert score.f1 == pytest.approx(0.0698, abs=1e-4)


def test_one_extra_word() -> None:
    score = lcs_score(tokenize("of the eukaryotic cell"), tokenize("the eukaryotic cell"))
    assert score.f1 == pytest.approx(0.857, abs=1e-3)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        pytest.param("", "a b", 0, id="empty"),
        pytest.param("a b c", "a b c", 3, id="identical"),
        pytest.param("a b c d", "d c b a", 1, id="reversed"),
        pytest.param("x a y b z c", "a b c", 3, id="interleaved"),
        pytest.param("a a a", "a", 1, id="repeats"),
        pytest.param("b a n a n a", "a n a n a s", 5, id="banana"),
    ],
)
def test_lcs_length(a: str, b: str, expected: int) -> None:
    assert lcs_length(a.split(), b.split()) == expected


def _lcs_reference(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev_diag, row[0] = 0, 0
        for j, y in enumerate(b, start=1):
            prev_diag, row[j] = row[j], prev_diag + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


words = st.lists(st.sampled_from("abcde"), max_size=30)


@settings(max_examples=200, deadline=None)
@given(a=words, b=words)
def test_lcs_matches_the_textbook_dp_and_f1_is_symmetric(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == _lcs_reference(a, b)
    forward, backward = lcs_score(a, b), lcs_score(b, a)
    assert forward.f1 == backward.f1
    assert (forward.precision, forward.recall) == (backward.recall, backward.precision)
    assert 0.0 <= forward.f1 <= 1.0


def test_lcs_of_a_few_hundred_tokens_is_fast() -> None:
    a = [f"w{i % 97}" for i in range(400)]
    b = [f"w{i % 89}" for i in range(400)]
    assert lcs_length(a, b) == _lcs_reference(a, b)


@pytest.mark.parametrize(
    "text, prefix, suffix",
    [
        pytest.param("one two", "one", "two", id="two tokens: one each side"),
        pytest.param("a b c d e f g h i j", "a b c d e f g", "h i j", id="ten: cut at 7"),
        pytest.param("a b c d e", "a b c d", "e", id="3.5 rounds up to 4"),
        pytest.param(
            "a b c d e f g h i j k l m n o", "a b c d e f g h i j k", "l m n o", id="10.5"
        ),
        pytest.param("  The cat's hat,\n  ok  ", "The cat's hat,", "ok  ", id="original text kept"),
        pytest.param("東京は晴れです", "東京は晴れ", "です", id="CJK: one token per character"),
    ],
)
def test_split_prefix_suffix(text: str, prefix: str, suffix: str) -> None:
    got = split_prefix_suffix(text)
    assert got is not None
    assert (got[0].strip(), got[1]) == (prefix, suffix)


@pytest.mark.parametrize("text", ["", "   ", "word", "—!?"])
def test_split_needs_two_tokens(text: str) -> None:
    assert split_prefix_suffix(text) is None


def test_split_rejects_a_bad_ratio() -> None:
    with pytest.raises(UsageError):
        split_prefix_suffix("a b c", ratio=1.0)


def test_run_guided_prompt_test_exact_reproduction() -> None:
    text = "The mitochondria is the powerhouse of the cell, as every student learns."
    seen: list[str] = []

    def complete(prefix: str) -> str:
        seen.append(prefix)
        return "  as EVERY student, learns!!"

    result = run_guided_prompt_test("q1", text, complete)
    assert seen == [result.prefix]
    assert result.prefix + " " + result.suffix == text
    assert result.similarity == 1.0 and result.precision == 1.0 and result.recall == 1.0
    assert result.scorable and result.example_id == "q1"


def test_run_guided_prompt_test_padding_is_penalized() -> None:
    text = "w1 w2 w3 w4 w5 w6 w7 alpha beta gamma"
    result = run_guided_prompt_test("q2", text, lambda _prefix: PADDED)
    assert result.suffix == "alpha beta gamma"
    assert result.recall == 1.0
    assert result.similarity == pytest.approx(0.0698, abs=1e-4)


def test_run_guided_prompt_test_too_short_is_unscored_and_never_asks() -> None:
    def complete(prefix: str) -> str:
        raise AssertionError("must not be called")

    result = run_guided_prompt_test("q3", "alone", complete)
    assert not result.scorable
    assert (result.similarity, result.precision, result.recall, result.completion) == (
        None,
        None,
        None,
        None,
    )


def test_score_completion_on_an_empty_completion() -> None:
    result = score_completion("q4", "a b", "c d", "")
    assert (result.similarity, result.precision, result.recall) == (0.0, 0.0, 0.0)
