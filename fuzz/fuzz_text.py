"""Fuzz normalization and tokenization (`contam_cli.text`).

The input after its first byte is decoded as UTF-8 (bad bytes replaced by U+FFFD, as text
reaches the tokenizer only as valid Unicode); NUL bytes split it into documents; the first byte
picks the normalization (NFKC and casefold on or off) and whether the compiled kernels are
checked too. What must hold:

- ``normalize`` is idempotent;
- ``token_spans`` gives one span per token of ``tokenize``, within the text, in order (starts
  and ends never go back), each non-empty, and re-tokenizing a span's characters gives back its
  token (exactly, for ASCII text);
- ``tokenize`` equals the tokens of the normalized text read from its own output
  (``tokenize(" ".join(tokens)) == tokens``);
- the vectorized ``Tokenizer`` (numpy path, and the compiled kernels when installed) gives
  ``token_hash`` of each token of ``tokenize``, document by document, and the n-gram hashes
  ``ngram_hash`` of each window inside one document.

Run: ``python fuzz/fuzz_text.py [libFuzzer flags] [corpus dirs]`` (see scripts/fuzz.sh).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from _harness import main  # noqa: E402

from contam_cli.text import (  # noqa: E402
    NormConfig,
    Tokenizer,
    ngram_hash,
    normalize,
    token_hash,
    token_spans,
    tokenize,
)
from contam_cli.text.accel import kernels  # noqa: E402

CONFIGS = tuple(NormConfig(nfkc=a, casefold=b) for a in (True, False) for b in (True, False))
_TOKENIZERS: dict[tuple[NormConfig, bool], Tokenizer] = {}


def _tokenizer(norm: NormConfig, accel: bool) -> Tokenizer:
    # NOTE: one per configuration, reused, as a scan does: its caches must not change results.
    key = (norm, accel)
    if key not in _TOKENIZERS:
        _TOKENIZERS[key] = Tokenizer(norm, cache_limit=64, accel=accel)
    return _TOKENIZERS[key]


def check_text(text: str, norm: NormConfig) -> None:
    once = normalize(text, norm)
    assert normalize(once, norm) == once, "normalize is not idempotent"
    toks = tokenize(text, norm)
    assert tokenize(" ".join(toks), norm) == toks, "tokenize is not stable under its output"
    spans = token_spans(text, norm)
    assert len(spans) == len(toks), (len(spans), len(toks))
    prev = (0, 0)
    for (a, b), tok in zip(spans, toks):
        assert 0 <= a < b <= len(text), (a, b, len(text))
        assert a >= prev[0] and b >= prev[1], f"spans go back: {prev} then {(a, b)}"
        prev = (a, b)
        again = tokenize(text[a:b], norm)
        assert tok in again or tok in "".join(again), (tok, text[a:b], again)
    if text.isascii():
        assert [tokenize(text[a:b], norm) for a, b in spans] == [[t] for t in toks]
    assert token_spans(text, norm, stop=3) == spans[:3]


def check_tokenizer(docs: list[str], norm: NormConfig, accel: bool) -> None:
    tk = _tokenizer(norm, accel)
    stream = tk.tokens(docs)
    per_doc = [tokenize(d, norm) for d in docs]
    want = [token_hash(t) for toks in per_doc for t in toks]
    got = [int(h) for h in stream.hashes]
    assert got == want, f"Tokenizer hashes differ from token_hash(tokenize) for {docs!r}"
    doc_of = [i for i, toks in enumerate(per_doc) for _ in toks]
    assert [int(d) for d in stream.doc] == doc_of, "tokens assigned to the wrong document"
    for n in (1, 3):
        grams, first = tk.ngrams(stream, n)
        expect, where = [], []
        k = 0
        for toks in per_doc:
            hashes = [token_hash(t) for t in toks]
            for j in range(len(toks) - n + 1):
                expect.append(ngram_hash(hashes[j : j + n]))
                where.append(k + j)
            k += len(toks)
        assert [int(g) for g in grams] == expect, f"n-gram hashes differ (n={n})"
        assert np.asarray(first).tolist() == where, f"n-gram positions differ (n={n})"


def check(data: bytes) -> None:
    if not data:
        return
    norm = CONFIGS[data[0] % len(CONFIGS)]
    text = data[1:].decode("utf-8", "replace")
    check_text(text, norm)
    docs = text.split("\x00")  # NOTE: NUL splits the input into documents
    check_tokenizer(docs, norm, accel=False)
    if kernels() is not None and data[0] & 0x80:
        check_tokenizer(docs, norm, accel=True)


if __name__ == "__main__":
    main(check)
