"""The compiled tokenizer's character tables (text.tables) and the words it tokenizes with them
(text._kernels.word_tokens): exactly the tokens of :func:`tokenize`, for every configuration."""

from __future__ import annotations

import sys
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.text import Tokenizer, is_segmented, normalize, token_hash, tokenize
from contam_cli.text.normalize import NormConfig
from contam_cli.text.tables import IGNORED, JOINING, SEPARATOR, SINGLE, fast_table, word_table

pytest.importorskip("numba", reason="the compiled tokenizer needs numba (extra fast)")

CONFIGS = [
    NormConfig(),
    NormConfig(casefold=False),
    NormConfig(nfkc=False),
    NormConfig(False, False),
]


def _composing_seconds() -> set[str]:
    """Every character that is the second of a canonical two-character decomposition: the
    characters that can compose with the one before them."""
    out = set()
    for cp in range(sys.maxunicode + 1):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                out.add(chr(int(parts[1], 16)))
    out.update(chr(cp) for cp in range(0x1161, 0x1176))  # Hangul: composed by algorithm
    out.update(chr(cp) for cp in range(0x11A8, 0x11C3))
    return out


@pytest.mark.parametrize("norm", CONFIGS, ids=str)
def test_no_fast_character_composes_with_its_neighbours(norm: NormConfig) -> None:
    seconds = _composing_seconds()
    kinds, fold, fold_len = word_table(norm)
    for cp in np.flatnonzero((kinds == JOINING) | (kinds == SINGLE) | (kinds == SEPARATOR)):
        c = chr(int(cp))
        for text in (c, unicodedata.normalize("NFKC", c)):
            nfd = unicodedata.normalize("NFD", text)
            assert not nfd or nfd[0] not in seconds, hex(cp)
        if kinds[cp] == JOINING:
            out = int(fold[cp]).to_bytes(8, "little")[: fold_len[cp]].decode()
            assert out == normalize(c, norm)
            assert all(ch.isalnum() and ch not in seconds for ch in out), hex(cp)


def test_the_fast_table_is_what_the_normalizer_says() -> None:
    """Every character fast_table() calls a token of its own (or a separator) is one for
    :func:`tokenize` too, by the plain definition."""
    table = fast_table()
    for cp in [*range(0x3000, 0x3100), *range(0x3400, 0x4DC0), *range(0x4E00, 0xA000),
               *range(0xFF00, 0xFF66)]:  # fmt: skip
        c = chr(cp)
        single = (
            not unicodedata.combining(c)
            and tokenize(c) == [c]
            and normalize(c) == c
            and is_segmented(c)
        )
        assert (table[cp] == SINGLE) == single, hex(cp)
        if table[cp] == SEPARATOR:
            assert not tokenize(c) and not any(ch.isalnum() for ch in normalize(c)), hex(cp)


def test_the_tables_cover_the_common_letters() -> None:
    kinds, _, _ = word_table(NormConfig())
    for c in "éèàçñüößåøæœıłšžčğ" + "αβγδωάέ" + "абвгджя" + "ＡＺａｚ０９ﬁ":
        assert kinds[ord(c)] == JOINING, c
    for c in "\u0301İ":  # a combining mark; a letter whose casefold holds one
        assert kinds[ord(c)] not in (JOINING, SINGLE, SEPARATOR), c
    assert (fast_table() == word_table(NormConfig())[0])[0x3000:0xA000].all()


def test_format_characters_are_ignored_and_marks_slow() -> None:
    # Every BMP format character is skipped in a word (tokenize removes it first); no combining
    # mark is ever a fast kind: it joins the token before it, which the normalizer decides.
    kinds, _, _ = word_table(NormConfig())
    for cp in range(0x10000):
        cat = unicodedata.category(chr(cp))
        assert (kinds[cp] == IGNORED) == (cat == "Cf"), hex(cp)
        if cat in ("Mn", "Mc", "Me"):
            assert kinds[cp] not in (JOINING, SINGLE, SEPARATOR), hex(cp)


def test_compiled_words_with_soft_hyphens_and_zero_width_spaces() -> None:
    docs = ["so\u00adft hyp\u00adhen", "zero\u200bwidth\u2060 ﬁ\u00adne Caf\u00ade\u0301"]
    docs.append("東\u200b京 a")
    for accel in (True, False):
        stream = Tokenizer(accel=accel).tokens(docs)
        want = ["soft", "hyphen", "zerowidth", "fine", "café", "東", "京", "a"]
        assert stream.hashes.tolist() == [token_hash(t) for t in want]


def _pool(norm: NormConfig) -> list[str]:
    kinds, _, _ = word_table(norm)
    by_kind = [chr(int(c)) for k in (JOINING, SINGLE, SEPARATOR)
               for c in np.flatnonzero(kinds == k)[::7]]  # fmt: skip
    ignored = [chr(int(c)) for c in np.flatnonzero(kinds == IGNORED)]
    marks = ["\u094d", "\u093f", "\u0e35", "\u0e48", "\u20dd", "\u034f", "\u3099", "\u302e"]
    extra = ["\u0301", "İ", "ß", "\U0001f600", "\u0345", "ﬀ", "\U000e0041", "\u2065"]
    return by_kind + ignored * 3 + marks + list("abcXYZ09") + extra


@settings(max_examples=150, deadline=None)
@given(data=st.data(), norm=st.sampled_from(CONFIGS))
def test_compiled_words_are_the_tokens_of_tokenize(data: st.DataObject, norm: NormConfig) -> None:
    pool = _pool(norm)
    char = st.sampled_from(pool)
    docs = data.draw(
        st.lists(
            st.lists(st.lists(char, min_size=1, max_size=8).map("".join), max_size=6).map(" ".join),
            min_size=1,
            max_size=5,
        )
    )
    want = [token_hash(t) for d in docs for t in tokenize(d, norm)]
    assert Tokenizer(norm, accel=True).tokens(docs).hashes.tolist() == want
    assert Tokenizer(norm, accel=False).tokens(docs).hashes.tolist() == want
