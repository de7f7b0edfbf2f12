"""The stable hash: pinned values, and the vectorized path equal to the plain definition."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.engine.eval_index import build_eval_index
from contam_cli.text import NormConfig, Tokenizer, ngram_hash, ngram_hashes, token_hash, tokenize
from contam_cli.text.accel import kernels
from contam_cli.text.normalize import UNICODE_SEPARATOR_RANGES


# NOTE: persisted indexes depend on these values; a change here is a format change (bump HASH_NAME).
def test_pinned_token_hashes() -> None:
    # NOTE: persisted indexes depend on these values; changing them is a format change
    # (bump HASH_NAME).
    assert token_hash("the") == 0x975D7C19563FF109
    assert token_hash("café") == 0xB4B76824C3AC984A
    assert token_hash("北") == 0x35BB346487FE00AD
    # tokens longer than 64 bytes take a separate path in the vectorized code
    assert int(Tokenizer().tokens(["X" * 100]).hashes[0]) == token_hash("x" * 100)


def test_pinned_ngram_hash() -> None:
    grams = ngram_hashes("The quick brown fox", 3)
    assert [hex(int(g)) for g in grams] == ["0xdd6477bb30bc4b68", "0x3cd6fa099abaab39"]


def _reference(texts: list[str], n: int, norm: NormConfig = NormConfig()) -> list[int]:
    out = []
    for t in texts:
        th = [token_hash(x) for x in tokenize(t, norm)]
        out += [ngram_hash(th[i : i + n]) for i in range(len(th) - n + 1)]
    return out


TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("abcXYZ019 ,.-_'\"\n\t")),
        st.sampled_from(list("éßΣς東京はカタ①ﬁ＂Ａ\u0301ภา“”’—…\u00a0\u2028\u2070\u2071⁴")),
        st.characters(codec="utf-8"),
    ),
    max_size=80,
)


ACCEL = [False, pytest.param(True, marks=pytest.mark.skipif(kernels() is None, reason="no numba"))]


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"])
@settings(max_examples=200, deadline=None)
@given(texts=st.lists(TEXT, max_size=6), n=st.integers(1, 5))
def test_vectorized_hashes_equal_definition(accel: bool, texts: list[str], n: int) -> None:
    tk = Tokenizer(accel=accel)
    grams, _ = tk.ngrams(tk.tokens(texts), n)
    assert [int(g) for g in grams] == _reference(texts, n)


@settings(max_examples=50, deadline=None)
@given(st.lists(TEXT, max_size=4))
def test_vectorized_tokens_equal_tokenize_without_casefold(texts: list[str]) -> None:
    norm = NormConfig(casefold=False)
    tk = Tokenizer(norm)
    stream = tk.tokens(texts)
    expected = [token_hash(t) for x in texts for t in tokenize(x, norm)]
    assert [int(h) for h in stream.hashes] == expected


@given(st.lists(st.sampled_from(["a", "b", "c", "dd"]), max_size=30), st.integers(1, 8))
def test_ngram_count(tokens: list[str], n: int) -> None:
    assert len(ngram_hashes(" ".join(tokens), n)) == max(0, len(tokens) - n + 1)


def test_ngrams_never_cross_documents() -> None:
    tk = Tokenizer()
    grams, start = tk.ngrams(tk.tokens(["a b c", "d e f"]), 3)
    assert len(grams) == 2 and start.tolist() == [0, 3]


@pytest.mark.parametrize(
    "variant", ["THE quick, brown FOX", "the\u00a0quick brown fox!", "ｔｈｅ quick brown fox"]
)
def test_light_edits_hash_alike(variant: str) -> None:
    assert np.array_equal(ngram_hashes(variant, 2), ngram_hashes("the quick brown fox", 2))


_BLANKED = [cp for lo, hi in UNICODE_SEPARATOR_RANGES for cp in range(lo, hi + 1)]


@pytest.mark.parametrize("cp", _BLANKED)
def test_byte_level_separators_really_separate(cp: int) -> None:
    # The fast path blanks these characters before tokenizing; that is only right if they
    # separate tokens and never produce one, before or after NFKC.
    c = chr(cp)
    assert tokenize(f"a{c}b 1{c}2 {c}\u0301x") == ["a", "b", "1", "2", "x"]
    tk = Tokenizer()
    assert [int(h) for h in tk.tokens([f"x{c}y{c}"]).hashes] == [token_hash("x"), token_hash("y")]


@pytest.mark.parametrize("cp", sorted(set(range(0x2000, 0x2070)) - set(_BLANKED)))
@pytest.mark.parametrize("accel", [False, None])
def test_the_format_characters_of_general_punctuation_are_inside_words(
    cp: int, accel: bool | None
) -> None:
    # Not blanked: a format character (ZWSP, ZWJ, word joiner, bidi controls) is ignored, so
    # "x\u200by" is the one token "xy"; U+2065 (unassigned) still separates, in tokenize.
    c = chr(cp)
    fmt = unicodedata.category(c) == "Cf"
    want = ["ab", "12", "x"] if fmt else ["a", "b", "1", "2", "x"]
    assert tokenize(f"a{c}b 1{c}2 {c}\u0301x") == want
    got = [int(h) for h in Tokenizer(accel=accel).tokens([f"x{c}y{c}"]).hashes]
    assert got == [token_hash(t) for t in (["xy"] if fmt else ["x", "y"])]


def test_word_cache_eviction_keeps_words_already_seen() -> None:
    # Multi-token non-ASCII words bypass the single-token map and fill the word cache; a chunk
    # mixing cached words with enough new ones forces an eviction in the middle of a lookup.
    words = [f"東{i}京" for i in range(50)]
    tk = Tokenizer(cache_limit=40, accel=False)
    tk.tokens([" ".join(words[:30])])
    doc = " ".join(words[:30] + words[30:])
    assert [int(h) for h in tk.tokens([doc]).hashes] == [token_hash(t) for t in tokenize(doc)]


def test_tokenizer_caches_stay_exact_across_many_chunks() -> None:
    # Enough distinct non-ASCII words to fill and merge the single-token map several times,
    # seen again in later chunks and mixed with multi-token (CJK) words.
    words = [f"wörd{i}" for i in range(3000)] + ["東京", "ｆｕｌｌ", "½"]
    tk = Tokenizer(cache_limit=2000)
    for start in range(0, 6000, 700):
        chunk = [
            " ".join(words[(start + k) % len(words)] for k in range(j, j + 50))
            for j in range(0, 700, 50)
        ]
        expected = [token_hash(t) for doc in chunk for t in tokenize(doc)]
        assert [int(h) for h in tk.tokens(chunk).hashes] == expected


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"])
def test_long_tokens_and_lookup(accel: bool) -> None:
    texts = ["a " + "b" * k + " c d" for k in range(1, 90)] + ["x" * 1000 + " y z"]
    tk = Tokenizer(accel=accel)
    stream = tk.tokens(texts)
    assert [int(h) for h in stream.hashes] == [token_hash(t) for x in texts for t in tokenize(x)]
    index = build_eval_index(texts[::3], 2, tokenizer=Tokenizer(accel=False))
    grams, _ = tk.ngrams(stream, 2)
    pos, found = index.lookup(grams, accel=tk.kernels is not None)
    assert np.array_equal(index.grams[found], grams[pos])
    assert set(grams[pos].tolist()) == set(index.grams.tolist())


@pytest.mark.skipif(kernels() is None, reason="no numba")
def test_index_lookup_kernel_matches_numpy() -> None:
    texts = [f"w{i} w{i + 1} w{i + 2} w{i + 3}" for i in range(0, 400, 3)]
    index = build_eval_index(texts, 3)
    tk = Tokenizer(accel=False)
    grams, _ = tk.ngrams(tk.tokens([" ".join(f"w{i}" for i in range(500))]), 3)
    compiled = index.lookup(grams, accel=True)
    numpy_only = index.lookup(grams)
    assert all(np.array_equal(a, b) for a, b in zip(compiled, numpy_only))
    assert len(numpy_only[0]) == len(index.grams)


CJK = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("東京は晴れカタナ一二三、。「」，！？：ｶﾞか\u3099が・ー々〇あ")),
        st.characters(min_codepoint=0x3000, max_codepoint=0x30FF),
        st.characters(min_codepoint=0x4E00, max_codepoint=0x4E40),
        st.characters(min_codepoint=0xFF00, max_codepoint=0xFF70),
        st.sampled_from(list("ab1 é,")),
    ),
    max_size=60,
)


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"])
@settings(max_examples=150, deadline=None)
@given(texts=st.lists(CJK, max_size=5))
def test_cjk_fast_path_equals_definition(accel: bool, texts: list[str]) -> None:
    tk = Tokenizer(accel=accel)
    for _ in range(2):  # the second pass goes through the caches
        stream = tk.tokens(texts)
        assert [int(h) for h in stream.hashes] == [
            token_hash(t) for x in texts for t in tokenize(x)
        ]
        assert stream.doc.tolist() == [i for i, x in enumerate(texts) for _ in tokenize(x)]


def test_lone_surrogates_from_json_escapes_separate_tokens() -> None:
    # The standard json module (JSON arrays) accepts "\ud800"; it must not crash a scan.
    text = "left\ud800right x\udfffy"
    tk = Tokenizer(accel=False)
    assert [int(h) for h in tk.tokens([text]).hashes] == [token_hash(t) for t in tokenize(text)]


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"])
def test_words_for_the_full_normalizer_first_seen_then_known(accel: bool) -> None:
    # Words the character tables cannot tokenize, giving two tokens, one, or none: the first
    # chunk sends them to the full normalizer, the second finds the one-token ones already
    # known; tokens, documents and word layout equal the definition both times.
    docs = ["a½b café \u0301 İstanbul plain", "a\U0001f600b x\u0301\u0301 ok ½", "café"]
    tk = Tokenizer(accel=accel)
    for _ in range(2):
        stream = tk.tokens(docs)
        want = [(token_hash(t), d) for d, text in enumerate(docs) for t in tokenize(text)]
        assert list(zip(stream.hashes.tolist(), stream.doc.tolist())) == want
        words = stream.words
        assert words is not None
        buf = ("\n" + "\n".join(docs)).encode()
        per_word = [len(tokenize(buf[a:b].decode())) for a, b in zip(words.starts, words.ends)]
        expected = [(w, i, n) for w, n in enumerate(per_word) for i in range(n)]
        got = words.locate(np.arange(len(stream.hashes)))
        assert list(zip(*(g.tolist() for g in got))) == expected
