"""Long documents are matched in overlapping windows (engine.windows) with exactly the results of a
whole-document pass: matched n-grams, longest runs, their positions, evidence offsets and text,
on both tokenizer paths, whatever the window size; the windows themselves cover the document's
tokens at the right offsets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import contam_cli.engine.accumulator as accumulator
import contam_cli.engine.windows as windows
from contam_cli import scan
from contam_cli.engine.windows import iter_windows
from contam_cli.text import Tokenizer, token_range

# Words that exercise the tokenizer: ASCII, casefolding that gives a combining mark (İ), CJK
# (one token per character), combining marks (composed, or kept in the word: Devanagari), format
# characters (ignored), NFKC expansions into several tokens (½, the ligature ﬁ, ﷽).
WORDS = [
    "alpha", "beta", "gamma", "delta", "Epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "İstanbul", "日本語", "café", "e\u0301te\u0301", "½", "ﬁne", "\ufdfd", "x2", "42",
    "so\u00adft", "zero\u200bwidth", "हिन्दी",
]  # fmt: skip
SEPARATORS = [" ", " ", " ", ", ", "\n", " - ", "... "]


def _document(rng: np.random.Generator, words: int) -> str:
    picks = rng.integers(0, len(WORDS), size=words)
    seps = rng.integers(0, len(SEPARATORS), size=words)
    return "".join(WORDS[w] + SEPARATORS[s] for w, s in zip(picks, seps)).strip()


def _examples(rng: np.random.Generator, doc: str, k: int) -> list[str]:
    """`k` eval examples: pieces of the document (leaks, of many lengths), one not in it."""
    words = doc.split()
    out = []
    for _ in range(k):
        a = int(rng.integers(0, max(1, len(words) - 3)))
        b = min(len(words), a + int(rng.integers(3, 40)))
        out.append(" ".join(words[a:b]))
    out.append("nothing of this sentence is anywhere in that document at all")
    return out


def _scan_json(eval_path: Path, corpus: Any, n: int, accel: bool) -> bytes:
    report = scan(str(eval_path), corpus, n=n, jobs=1, accel=accel)
    return orjson.dumps(report.example_dicts())


def _write_eval(path: Path, texts: list[str]) -> Path:
    path.write_bytes(
        b"".join(orjson.dumps({"id": f"e{i}", "text": t}) + b"\n" for i, t in enumerate(texts))
    )
    return path


@pytest.mark.parametrize("accel", [True, False], ids=["kernels", "numpy"])
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    words=st.integers(50, 400),
    window=st.integers(16, 400),
    n=st.integers(2, 6),
)
def test_windows_give_the_whole_document_results(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    accel: bool,
    seed: int,
    words: int,
    window: int,
    n: int,
) -> None:
    rng = np.random.default_rng(seed)
    doc = _document(rng, words)
    eval_path = _write_eval(tmp_path / f"eval-{seed}.jsonl", _examples(rng, doc, 6))
    corpus = tmp_path / f"corpus-{seed}.jsonl"
    corpus.write_bytes(
        orjson.dumps({"text": "a short one beside it"}) + b"\n" + orjson.dumps({"text": doc})
    )
    whole = _scan_json(eval_path, str(corpus), n, accel)
    whole_in_memory = _scan_json(eval_path, [doc], n, accel)  # streamed in this process
    monkeypatch.setattr(accumulator, "LONG_DOC_BYTES", 0)
    monkeypatch.setattr(windows, "WINDOW_BYTES", window)
    assert _scan_json(eval_path, str(corpus), n, accel) == whole
    assert _scan_json(eval_path, [doc], n, accel) == whole_in_memory


def test_a_run_across_a_window_edge_keeps_its_length_and_offsets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    filler = " ".join(f"w{i}" for i in range(3000))
    leak = "the quick brown fox jumps over the lazy dog near İstanbul at dawn"
    doc = f"{filler} {leak} {filler}"
    eval_path = _write_eval(tmp_path / "eval.jsonl", [leak])
    [whole] = scan(str(eval_path), [doc], n=5, jobs=1).examples
    assert whole.longest_run == 13  # İstanbul is one token (i + combining dot, stanbul)
    monkeypatch.setattr(accumulator, "LONG_DOC_BYTES", 1000)
    for window in range(len(filler) - 20, len(filler) + 80, 7):  # edges all through the leak
        monkeypatch.setattr(windows, "WINDOW_BYTES", window)
        [ex] = scan(str(eval_path), [doc], n=5, jobs=1).examples
        assert ex == whole
        ev = ex.evidence
        assert ev is not None
        assert doc[ev.char_start : ev.char_end] == leak == ev.text
        assert ev.doc_token == 3000


@pytest.mark.parametrize("overlap", [1, 5, 30])
def test_windows_hold_the_document_tokens_at_their_offsets(overlap: int) -> None:
    rng = np.random.default_rng(overlap)
    doc = _document(rng, 500)
    tk = Tokenizer()
    raw = doc.encode()
    every = tk.tokens([raw]).hashes
    last_end = 0
    previous: windows.Window | None = None
    for win in iter_windows(raw, tk, overlap, window_bytes=100):
        got = win.stream.hashes
        assert np.array_equal(got, every[win.token_base : win.token_base + len(got)])
        assert raw[win.byte_base : win.byte_base + len(win.raw)] == win.raw
        assert len(doc.encode()[: win.byte_base].decode()) == win.char_base
        if previous is not None:  # consecutive windows share at least `overlap` tokens
            assert previous.token_base + len(previous.stream.hashes) - win.token_base >= overlap
        previous = win
        last_end = win.token_base + len(got)
    assert last_end == len(every)
    # A run's offsets in a window, shifted, are the document's (token_range is the definition).
    assert previous is not None
    a, b = token_range(doc, previous.token_base, previous.token_base + 2)
    assert a >= previous.char_base and b <= previous.char_base + len(previous.raw.decode())


def test_a_document_without_separators_is_taken_whole() -> None:
    tk = Tokenizer()
    raw = ("日本語" * 2000).encode()
    [win] = list(iter_windows(raw, tk, 3, window_bytes=64))
    assert win.raw == raw and win.token_base == 0


@pytest.mark.parametrize("accel", [True, False], ids=["kernels", "numpy"])
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    words=st.integers(0, 400),
    window=st.integers(1, 400),
    n=st.integers(1, 6),
)
def test_window_ngrams_are_the_whole_documents(
    accel: bool, seed: int, words: int, window: int, n: int
) -> None:
    raw = _document(np.random.default_rng(seed), words).encode()
    tk = Tokenizer(accel=accel)
    parts = list(windows.window_ngrams(raw, tk, n, window_bytes=window))
    grams, start = (np.concatenate(x) for x in zip(*parts))
    want_grams, want_start = tk.ngrams(tk.tokens([raw]), n)
    assert grams.tolist() == want_grams.tolist()
    assert start.tolist() == want_start.tolist()


def test_index_build_and_document_frequency_window_long_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A corpus index (with positions) and --ignore-common's document frequencies take a long
    # document window by window: the same files (the header's counts included), byte for byte,
    # and the same counts.
    import contam_cli.engine.corpus_index.mapper as mapper
    import contam_cli.engine.doc_frequency as doc_frequency
    from contam_cli.engine.corpus_index import build_corpus_index
    from contam_cli.engine.eval_index import build_eval_index
    from contam_cli.engine.executor import InProcess
    from contam_cli.features.scan import ScanOptions, resolve_sources

    rng = np.random.default_rng(7)
    docs = [_document(rng, 30), _document(rng, 3000), _document(rng, 20), _document(rng, 2000)]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes(b"".join(orjson.dumps({"text": d}) + b"\n" for d in docs))
    opts = ScanOptions(n=4)
    index = build_eval_index(_examples(rng, docs[1], 30) + docs[:1], 4)

    def run(out: Path) -> np.ndarray:
        sources = resolve_sources([corpus], opts)
        spec = opts.corpus_spec
        build_corpus_index(sources, out, n=4, norm=opts.norm, positions=True, corpus_spec=spec)
        return doc_frequency.document_frequency(index, sources, opts, InProcess())

    whole = run(tmp_path / "whole")
    monkeypatch.setattr(mapper, "LONG_DOC_BYTES", 1000)
    monkeypatch.setattr(doc_frequency, "LONG_DOC_BYTES", 1000)
    monkeypatch.setattr(windows, "WINDOW_BYTES", 300)
    assert run(tmp_path / "windows").tolist() == whole.tolist()
    assert whole.max() >= 2  # grams found in several documents, long ones among them
    files = sorted(p.name for p in (tmp_path / "whole").iterdir())
    assert "header.json" in files  # NOTE: its counts of documents and n-grams too
    assert files == sorted(p.name for p in (tmp_path / "windows").iterdir())
    for name in files:
        a, b = (tmp_path / "whole" / name).read_bytes(), (tmp_path / "windows" / name).read_bytes()
        assert a == b, name


@pytest.mark.parametrize("accel", [True, False], ids=["kernels", "numpy"])
def test_a_corpus_clean_windows_long_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, accel: bool
) -> None:
    # clean --target corpus finds the eval n-grams of a long document window by window, and of
    # its cleaned text too (the check for n-grams a join formed): the same files and manifest.
    if accel:
        pytest.importorskip("numba")
    from contam_cli.features.clean import clean_corpus

    rng = np.random.default_rng(11)
    leaks = [" ".join(f"leak{k}x{i} İstanbul" for i in range(8)) for k in range(4)]
    filler = [f"w{i} {WORDS[i % len(WORDS)]}" for i in range(6000)]
    for k, at in enumerate((600, 3000, 5400)):  # the long document holds three leaks
        filler.insert(at, leaks[k])
    docs = [f"a short one {leaks[3]} ends", " ".join(filler), _document(rng, 25)]
    corpus = tmp_path / "corpus" / "c.jsonl"
    corpus.parent.mkdir()
    corpus.write_bytes(b"".join(orjson.dumps({"text": d}) + b"\n" for d in docs))
    eval_path = _write_eval(tmp_path / "eval.jsonl", leaks)

    def run(out: Path) -> tuple[bytes, Any]:
        clean_corpus(eval_path, corpus.parent, out, n=5, window=10, min_piece=5, accel=accel)
        manifest = orjson.loads((out / ".contam-manifest.json").read_bytes())
        return (out / "c.jsonl").read_bytes(), manifest["files"]

    whole = run(tmp_path / "whole")
    monkeypatch.setattr(windows, "LONG_DOC_BYTES", 1000)
    monkeypatch.setattr(windows, "WINDOW_BYTES", 300)
    assert run(tmp_path / "windows") == whole
    cleaned = [orjson.loads(line)["text"] for line in whole[0].splitlines()]
    # NOTE: the short one lost to its cut, then four pieces of the long one, then the clean one.
    assert len(cleaned) == 4 + 1 and cleaned[0].startswith("w0 alpha")
    assert not any("leak" in t for t in cleaned) and cleaned[-1] == docs[2]
