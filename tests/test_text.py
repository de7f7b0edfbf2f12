"""Normalization and tokenization rules, one named case each."""

from __future__ import annotations

import importlib
import sys
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.text import (
    NormConfig,
    normalize,
    token_range,
    token_span_array,
    token_spans,
    tokenize,
)

#: Format characters and combining marks that NFKC leaves alone: inside and between words.
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u200e\u202a\u2060\u2064\u2066\ufeff\u061c\U000e0041"
_INVISIBLE += "\u094d\u093f\u0947\u064e\u05b8\u0e35\u0e48\u20dd\u0903\u034f"
_ALPHABET = "ab 東京ｆｕ½ﬁé\u0301“,\x80"


@pytest.mark.parametrize(
    "text, tokens",
    [
        pytest.param("The Cat SAT", ["the", "cat", "sat"], id="case"),
        pytest.param("  the\tcat\n\nsat  ", ["the", "cat", "sat"], id="whitespace"),
        pytest.param("the, cat; (sat)!", ["the", "cat", "sat"], id="punctuation"),
        pytest.param("“quoted” ‘text’ — dash", ["quoted", "text", "dash"], id="curly-quotes"),
        pytest.param("snake_case", ["snake", "case"], id="underscore-separates"),
        pytest.param("Straße STRASSE", ["strasse", "strasse"], id="sharp-s"),
        pytest.param("ＦＵＬＬ－ｗｉｄｔｈ １２３", ["full", "width", "123"], id="full-width"),
        pytest.param("ﬁne ﬂow", ["fine", "flow"], id="ligatures"),
        pytest.param("ΟΔΟΣ οδος οδοσ", ["οδοσ", "οδοσ", "οδοσ"], id="greek-final-sigma"),
        pytest.param("café cafe\u0301", ["café", "café"], id="combining-accent"),
        pytest.param("北京是中国的首都", list("北京是中国的首都"), id="chinese"),
        pytest.param("東京はとても大きい", list("東京はとても大きい"), id="japanese-kanji-kana"),
        pytest.param("ｶﾀｶﾅ", ["カ", "タ", "カ", "ナ"], id="half-width-katakana"),
        pytest.param("GPT-4o scored 86.4%", ["gpt", "4o", "scored", "86", "4"], id="digits"),
        pytest.param("ภาษาไทย", list("ภาษาไทย"), id="thai"),
        pytest.param("привет, МИР", ["привет", "мир"], id="cyrillic"),
        pytest.param("x² ①", ["x2", "1"], id="superscripts-circled"),
        pytest.param("so\u00adft hy\u00adphen", ["soft", "hyphen"], id="soft-hyphen-ignored"),
        pytest.param("zero\u200bwidth \ufeffbom", ["zerowidth", "bom"], id="zwsp-bom-ignored"),
        pytest.param("foo\u200bbar", ["foobar"], id="zwsp-between-words-joins"),
        pytest.param("a\u200cb\u200dc\u2060d\u200fe\u061cf", ["abcdef"], id="format-chars"),
        pytest.param("cafe\u00ad\u0301", ["café"], id="format-before-accent-still-composes"),
        pytest.param("हिन्दी भाषा", ["हिन्दी", "भाषा"], id="devanagari-marks-stay"),
        pytest.param("हिन्दी हिंदू", ["हिन्दी", "हिंदू"], id="devanagari-words-differ"),
        pytest.param("كَتَبَ كتب", ["كَتَبَ", "كتب"], id="arabic-harakat-stay"),
        pytest.param("שָׁלוֹם", ["שָׁלוֹם"], id="hebrew-points-stay"),
        pytest.param("x\u0301y \u0301z", ["x\u0301y", "z"], id="mark-after-nothing-separates"),
        pytest.param("ที่นี่", ["ที่", "นี่"], id="thai-marks-join-their-consonant"),
        pytest.param("東\u0301京", ["東\u0301", "京"], id="mark-after-segmented"),
        pytest.param("İstanbul", ["i\u0307stanbul"], id="casefold-dot-stays"),
        pytest.param("", [], id="empty"),
        pytest.param("!!! ...", [], id="only-punctuation"),
    ],
)
def test_tokenize(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_normalization_can_be_configured() -> None:
    assert tokenize("The CAT", NormConfig(casefold=False)) == ["The", "CAT"]
    assert tokenize("ＡＢ", NormConfig(nfkc=False, casefold=False)) == ["ＡＢ"]


@given(st.text())
def test_normalize_is_idempotent(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once


@given(st.text())
def test_tokenize_is_stable_under_its_own_output(text: str) -> None:
    toks = tokenize(text)
    assert tokenize(" ".join(toks)) == toks


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60))
def test_token_spans_cover_each_token(text: str) -> None:
    spans = token_spans(text)
    toks = tokenize(text)
    assert len(spans) == len(toks)
    for (a, b), tok in zip(spans, toks):
        assert 0 <= a < b <= len(text)
        # Re-tokenizing the original characters of a span gives back (at least) that token.
        assert tok in tokenize(text[a:b]) or tok in "".join(tokenize(text[a:b]))


@given(st.text(max_size=80), st.integers(0, 20))
def test_token_spans_can_stop_early(text: str, stop: int) -> None:
    assert token_spans(text, stop=stop) == token_spans(text)[:stop]


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ascii_token_spans_match_tokenize(text: str) -> None:
    assert [text[a:b].casefold() for a, b in token_spans(text)] == tokenize(text)


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(st.characters(), st.sampled_from([*_ALPHABET, *_INVISIBLE])),
        max_size=50,
    ),
    st.data(),
)
def test_token_range_equals_token_spans(text: str, data: st.DataObject) -> None:
    spans = token_spans(text)
    if spans:
        a = data.draw(st.integers(0, len(spans) - 1))
        b = data.draw(st.integers(a, len(spans) - 1))
        assert token_range(text, a, b) == (spans[a][0], spans[b][1])


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            st.characters(), st.sampled_from([*_ALPHABET, *"İ\u00a0\u2003", *_INVISIBLE])
        ),
        max_size=60,
    )
)
def test_token_span_array_equals_token_spans(text: str) -> None:
    got = token_span_array(text)
    assert got.dtype == np.int64 and got.shape == (len(token_spans(text)), 2)
    assert [tuple(row) for row in got.tolist()] == token_spans(text)


def test_token_span_array_of_words_split_into_several_tokens_and_none() -> None:
    text = "a x½y 東京 \u0301 b ﬁsh"
    assert [tuple(r) for r in token_span_array(text).tolist()] == token_spans(text)
    assert len(token_span_array(text)) > len(text.split())
    assert token_span_array("").shape == (0, 2) and token_span_array(" , ").shape == (0, 2)


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.sampled_from([*_ALPHABET, *"İ\u00a0\u2003\n-", *_INVISIBLE]), max_size=80),
    st.integers(1, 9),
)
def test_long_texts_are_split_into_words_in_pieces_with_the_same_spans(
    text: str, chunk: int
) -> None:
    # NOTE: the module by name: the package's attribute "normalize" is the function
    normalize_module = importlib.import_module("contam_cli.text.normalize")
    whole = token_span_array(text)
    was = normalize_module._WORDS_CHUNK
    normalize_module._WORDS_CHUNK = chunk
    try:
        assert token_span_array(text).tolist() == whole.tolist()
        spans = token_spans(text)
        if spans:
            assert token_range(text, 0, len(spans) - 1) == (spans[0][0], spans[-1][1])
    finally:
        normalize_module._WORDS_CHUNK = was


_FORMAT = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.one_of(
            st.sampled_from([*"ab é東ภ \u0301\u0e35\u094d½İ,.", *_INVISIBLE]),
            st.sampled_from(_FORMAT),
        )
    )
)
def test_format_characters_are_ignored_entirely(text: str) -> None:
    # Any format characters, anywhere (inside, between and around words): the tokens of the
    # text without them, so no invisible character can hide a verbatim copy.
    plain = "".join(c for c in text if unicodedata.category(c) != "Cf")
    assert tokenize(text) == tokenize(plain)
    assert len(token_spans(text)) == len(tokenize(plain))


def test_every_format_character_and_mark_lies_where_the_patterns_look() -> None:
    # The token patterns read categories only in MARK_PLANES (a sixth of the code points); no
    # Cf, Mn, Mc or Me character of this Python's Unicode database lies outside them.
    from contam_cli.text.unicode_ranges import MARK_PLANES

    scanned = {c for plane in MARK_PLANES for c in plane}
    kinds = ("Cf", "Mn", "Mc", "Me")
    outside = [hex(c) for c in range(sys.maxunicode + 1)
               if c not in scanned and unicodedata.category(chr(c)) in kinds]  # fmt: skip
    assert outside == []


def test_the_mark_ranges_hold_every_format_character_and_mark_and_nothing_else() -> None:
    from contam_cli.text.unicode_ranges import mark_ranges

    fmt, marks = mark_ranges()
    for ranges in (fmt, marks):  # sorted, disjoint, never two touching (merged)
        assert all(a <= b < c - 1 for (a, b), (c, _) in zip(ranges, ranges[1:]))
    spans = {cp for a, b in fmt for cp in range(a, b + 1)}
    mark_spans = {cp for a, b in marks for cp in range(a, b + 1)}
    cats = [unicodedata.category(chr(c)) for c in range(sys.maxunicode + 1)]
    assert spans == {c for c, k in enumerate(cats) if k == "Cf"}
    assert mark_spans == {c for c, k in enumerate(cats) if k in ("Mn", "Mc", "Me")}


def test_every_format_character_is_ignored() -> None:
    for c in _FORMAT:
        assert tokenize(f"wo{c}rd") == ["word"], hex(ord(c))
        assert tokenize(c) == [], hex(ord(c))


def test_the_separators_above_ascii_are_what_tokenize_separates() -> None:
    # Every character of UNICODE_SEPARATOR_RANGES separates words, on its own and between
    # letters, and is no format character or mark; the block's format characters are not there.
    from contam_cli.text.normalize import UNICODE_SEPARATOR_RANGES

    inside = {cp for lo, hi in UNICODE_SEPARATOR_RANGES for cp in range(lo, hi + 1)}
    for cp in sorted(inside):
        c = chr(cp)
        assert unicodedata.category(c)[0] in "ZPS", hex(cp)
        assert tokenize(c) == [] and tokenize(f"a{c}b") == ["a", "b"], hex(cp)
        assert tokenize(f"a{c}\u0301b") == ["a", "b"], hex(cp)
        assert not unicodedata.combining(unicodedata.normalize("NFD", c)[0]), hex(cp)
    for cp in range(0x2000, 0x2070):
        if unicodedata.category(chr(cp)) == "Cf":
            assert cp not in inside, hex(cp)
