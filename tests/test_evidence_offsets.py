"""Evidence offsets taken from the tokenizer's words equal :func:`token_range`'s, on both paths."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.engine import evidence as engine
from contam_cli.engine.accumulator import Accumulator
from contam_cli.engine.eval_index import build_eval_index
from contam_cli.engine.evidence import RunOffsets as _RunOffsets
from contam_cli.engine.evidence import make_evidence
from contam_cli.engine.match import ChunkRuns, DocBatch
from contam_cli.features.scan import scan
from contam_cli.io.model import Locator, Record
from contam_cli.text import NormConfig, Tokenizer, token_range, token_spans, tokenize
from contam_cli.text.accel import kernels

ACCEL = [False, pytest.param(True, marks=pytest.mark.skipif(kernels() is None, reason="no numba"))]

# Words that mix every kind of character the tokenizer treats differently: ASCII, separators
# it blanks (General Punctuation, NBSP), non-ASCII letters that stay one token, characters
# that normalize to several characters or tokens, scripts without spaces, combining marks,
# and punctuation inside a word ("«hello»" is one word whose token is shorter than it).
TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("abcXYZ0189 ,.-_'\"\n\t")),
        st.sampled_from(list("“”‘’–—…\u2028\u2060\u00a0«»")),
        st.sampled_from(list("éèüßΣςçÅñ")),
        st.sampled_from(list("ＡＢｃｄ１２ﬁﬂ½①²")),
        st.sampled_from(list("東京は晴れカタ一、。ｶﾞ")),
        st.sampled_from(["\u0301", "\u0308", "\u3099", "\u093f", "\u094d", "\u0e35"]),
        # format characters, ignored wherever they are
        st.sampled_from(["\u00ad", "\u200b", "\u200d", "\u202e", "\ufeff", "\u061c"]),
        # "İ" is a letter and NFKC-stable, yet casefolds to "i" and a combining dot; "ǅ" is
        # a letter that NFKC changes.
        st.sampled_from(list("İǅ")),
        st.characters(min_codepoint=0x2000, max_codepoint=0x206F),
    ),
    max_size=40,
)


def _offsets(
    tk: Tokenizer,
    texts: list[str],
    runs: list[tuple[int, int, int]],
    records: list[str] | None = None,
) -> list[tuple[int, int] | None]:
    """`_RunOffsets.char_range` of runs (document, token position, length) of chunk `texts`,
    in the records' texts (default: `texts`)."""
    stream = tk.tokens(texts)
    counts = np.bincount(stream.doc, minlength=len(texts))
    doc, pos, length = (np.array(c, dtype=np.int64) for c in zip(*runs))
    chunk = ChunkRuns(doc, length, doc, pos, pos, stream.words, np.cumsum(counts) - counts)
    raw = [t.encode("utf-8", "surrogatepass") for t in texts]
    offsets = _RunOffsets(chunk, np.arange(len(runs)), raw, tk.norm)
    records = records or texts
    return [offsets.char_range(j, records[d]) for j, (d, _, _) in enumerate(runs)]


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"])
@settings(max_examples=75, deadline=None)
@given(texts=st.lists(TEXT, min_size=1, max_size=5), data=st.data())
def test_run_offsets_equal_token_range(accel: bool, texts: list[str], data: st.DataObject) -> None:
    tk = Tokenizer(accel=accel)
    n_tokens = [len(tokenize(t)) for t in texts]
    docs = [d for d, n in enumerate(n_tokens) if n]
    if not docs:
        return
    runs = []
    for _ in range(data.draw(st.integers(1, 4))):
        d = data.draw(st.sampled_from(docs))
        a = data.draw(st.integers(0, n_tokens[d] - 1))
        b = data.draw(st.integers(a, n_tokens[d] - 1))
        runs.append((d, a, b - a + 1))
    for _ in range(2):  # the second pass goes through the tokenizer's word caches
        for (d, a, length), got in zip(runs, _offsets(tk, texts, runs)):
            assert got == token_range(texts[d], a, a + length - 1)


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"])
@settings(max_examples=40, deadline=None)
@given(texts=st.lists(TEXT, min_size=1, max_size=5))
def test_word_layout_locates_every_token(accel: bool, texts: list[str]) -> None:
    stream = Tokenizer(accel=accel).tokens(texts)
    words = stream.words
    assert words is not None
    buf = b"\n" + b"\n".join(t.encode("utf-8", "surrogatepass") for t in texts)
    per_word = [
        len(tokenize(buf[a:b].decode("utf-8", "surrogatepass")))
        for a, b in zip(words.starts.tolist(), words.ends.tolist())
    ]
    expected = [(w, i, n) for w, n in enumerate(per_word) for i in range(n)]
    got = words.locate(np.arange(len(stream.hashes)))
    assert list(zip(*(g.tolist() for g in got))) == expected
    assert words.special.tolist() == [
        w for w, (a, b) in enumerate(zip(words.starts, words.ends)) if not buf[a:b].isascii()
    ]


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"])
@pytest.mark.parametrize(
    "text",
    [
        pytest.param("The quick brown fox jumps over the lazy dog", id="ascii"),
        pytest.param("Le «café» du coin, l’été — très ﬁn ½ ① 東京は晴れ", id="mixed"),
        pytest.param("«hello» wörld ｆｕｌｌ ﬁsh cafe\u0301 ok", id="partial-words"),
    ],
)
def test_run_offsets_do_not_fall_back(accel: bool, text: str) -> None:
    n = len(tokenize(text))
    runs = [(1, a, b - a + 1) for a in range(n) for b in range(a, n)]
    got = _offsets(Tokenizer(accel=accel), ["x y", text], runs)
    assert got == [token_range(text, a, a + length - 1) for _, a, length in runs]


def test_a_word_that_normalization_splits() -> None:
    # "½" is NFKC "1⁄2", whose fraction slash separates: "x½y" is the two tokens "x1", "2y" for
    # the tokenizer and for token_range alike, and each span holds the "½" it came from.
    text = "a x½y b c"
    assert [text[a:b] for a, b in token_spans(text)] == ["a", "x½", "½y", "b", "c"]
    got = _offsets(Tokenizer(accel=False), [text], [(0, 0, 1), (0, 0, 3), (0, 3, 1)])
    assert got == [(0, 1), (0, 5), (6, 7)]
    leak = scan(["2y was once called"], ["x½y was once called"], n=3)
    ev = leak.examples[0].evidence
    assert ev is not None and ev.text == "½y was once called"


def test_a_word_that_casefolding_gives_a_combining_mark() -> None:
    # "İ" casefolds to "i" + a combining dot above, which stays in the word: "İstanbul" is one
    # token, not "i" and "stanbul" (the rule before "/2"), and its span is the whole word.
    text = "a İstanbul b c"
    assert tokenize(text) == ["a", "i\u0307stanbul", "b", "c"]
    assert [text[a:b] for a, b in token_spans(text)] == ["a", "İstanbul", "b", "c"]
    assert _offsets(Tokenizer(accel=False), [text], [(0, 0, 2)]) == [(0, 10)]
    leak = scan(["İSTANBUL was once called"], ["a city, İstanbul was once called"], n=3)
    ev = leak.examples[0].evidence
    assert ev is not None and ev.text == "İstanbul was once called"


def test_run_offsets_need_the_tokenized_text() -> None:
    tk, texts = Tokenizer(accel=False), ["zero", "one two three"]
    assert _offsets(tk, texts, [(1, 1, 1)]) == [(4, 7)]
    assert _offsets(tk, texts, [(1, 1, 1)], ["zero", "one  two three"]) == [None]


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"])
@pytest.mark.parametrize("norm", [NormConfig(), NormConfig(casefold=False)], ids=["nfkc", "cased"])
def test_scan_evidence_equals_token_range(
    accel: bool, norm: NormConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = [
        "the «quick» brown fox jumps over the lazy dog",
        "東京は晴れ 今日も 東京は晴れ",
        "ﬁne ﬂow of café au lait",
    ]
    docs = [
        "noise\nmore noise THE “QUICK” brown fox jumps over the lazy dog again",
        "前 東京は晴れ 今日も 東京は晴れ 後",
        "x\n\ny  the ﬁne ﬂow of café au lait",
        "İstanbul fine flow of café au lait",
    ]
    tk = Tokenizer(norm, accel=accel)
    index = build_eval_index(examples, 3, norm, tokenizer=Tokenizer(norm, accel=False))
    recs = [Record(str(i), t, Locator("c.txt", line=10 * i + 1)) for i, t in enumerate(docs)]
    acc = Accumulator(1, len(index.grams), len(examples), ["c"])
    raw = [t.encode() for t in docs]
    calls: list[int] = []
    monkeypatch.setattr(engine, "token_range", lambda *a: calls.append(1) or token_range(*a))
    acc.add_batch(index, tk, DocBatch(0, raw, np.arange(len(docs)), recs.__getitem__))
    assert calls == []  # every offset came from the tokenizer's words
    monkeypatch.undo()
    assert len(acc.evidence) == len(examples)
    for (_, e), ev in acc.evidence.items():
        rec = recs[int(acc.best_order[0, e])]
        assert ev == make_evidence(
            rec, "c", ev.doc_token, ev.eval_token, ev.length, False, norm=norm
        )
        assert ev.text == rec.text[ev.char_start : ev.char_end]


LEAK = (
    "the quick brown fox jumps over the lazy dog while seven wizards quietly box jumping frogs"
    " near the old stone bridge at dawn"
)


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"])
@pytest.mark.parametrize("mark", ["\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
def test_a_leak_hidden_by_format_characters_is_found_with_its_evidence(
    tmp_path: Path, mark: str, accel: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Scraped HTML keeps &shy; (and zero-width characters) inside words: the copy renders as
    # the eval text and must be flagged, its evidence the corpus's characters, marks included.
    if not accel:
        monkeypatch.setenv("CONTAM_ACCEL", "0")
    hidden = " ".join(w[:2] + mark + w[2:] if len(w) > 3 else w for w in LEAK.split())
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "cv.txt").write_text(f"Intro line.\nSeen: {hidden}. The end\n", encoding="utf-8")
    [ex] = scan([LEAK], str(corpus), n=8).examples
    assert ex.flagged and ex.overlap_fraction == 1.0 and ex.longest_run == len(LEAK.split())
    ev = ex.evidence
    assert ev is not None and ev.text == hidden and ev.line == 2
    text = (corpus / "cv.txt").read_text(encoding="utf-8")
    assert text[ev.char_start : ev.char_end] == hidden


def test_devanagari_words_differing_only_in_vowel_signs_do_not_collide() -> None:
    # "किताब" (book) and "कातिब" (scribe) share their consonants; under the rule before "/2"
    # both were the tokens "क", "त", "ब", so a Hindi text matched another with other words.
    assert tokenize("किताब") == ["किताब"] and tokenize("कातिब") == ["कातिब"]
    hindi = "मेरे पास एक किताब है जो मेरे दादा ने लिखी थी और मैं उसे रोज़ पढ़ता हूँ"
    other = hindi.replace("किताब", "कातिब").replace("लिखी", "लेखा").replace("पढ़ता", "पढ़ती")
    flagged = scan([hindi], [f"शुरू {hindi} अंत"], n=5).examples[0]
    assert flagged.flagged and flagged.evidence is not None and flagged.evidence.text == hindi
    unrelated = scan([hindi], [other], n=5).examples[0]  # the rule before: flagged, 1.000
    assert not unrelated.flagged and unrelated.overlap_fraction < 0.2
