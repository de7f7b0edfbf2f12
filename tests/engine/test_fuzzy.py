"""The fuzzy detector: the alignment's definition and edits, the index, and whole-scan properties
(verbatim copies align fully, unrelated words never raise a score, chunking and merge order
change nothing, the numba path equals the numpy one)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.engine.fuzzy import (
    Alignment,
    FuzzyAccumulator,
    FuzzyConfig,
    FuzzyResults,
    align,
    build_fuzzy_index,
)
from contam_cli.engine.fuzzy.align import (
    Candidates,
    align_candidates,
    band_matrix,
    best_cell,
    reference_matrix,
    traceback,
)
from contam_cli.engine.fuzzy.candidates import fuzzy_kernels
from contam_cli.engine.fuzzy.seeds import pair_hash, pair_hashes
from contam_cli.engine.match import DocBatch, RangePlaces
from contam_cli.errors import UsageError
from contam_cli.io.model import Locator, Record
from contam_cli.text import Tokenizer, hash_tokens, tokenize

KERNELS = fuzzy_kernels()
NUMBA = pytest.mark.skipif(KERNELS is None, reason="no numba")
ACCEL = [False, pytest.param(True, marks=NUMBA)]
PEN = (100, 150, 100)  # mismatch, gap, swap
CFG = FuzzyConfig()

# A vocabulary for generated texts: a few function words that every text uses, and content
# words; unrelated words (for replacements) share no token with either.
COMMON = ["the", "of", "and", "a", "to", "in", "is", "that"]
CONTENT = [
    f"{a}{b}"
    for a in ("bra", "cle", "dro", "fen", "gal", "hum", "jor", "kel")
    for b in ("mat", "nis", "pot", "rud", "sov", "tel", "vin", "wex", "yop", "zar")
]
UNRELATED = [f"qx{i}zz" for i in range(200)]


def _ints(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


def _w(n: int, value: int = 1000) -> np.ndarray:
    return np.full(n, value, dtype=np.int64)


# -- the alignment, edit by edit -----------------------------------------------------------------

X = list(range(1, 11))  # ten distinct tokens


def _full(y: list[int], w: np.ndarray | None = None) -> Alignment:
    x = _ints(X)
    w = _w(len(X)) if w is None else w
    return align(x, w, _ints(y), -len(X), len(y), PEN)


def test_identical_aligns_everything() -> None:
    a = _full(X)
    assert a.score == 10_000 and a.matched == 10 and a.columns == 10
    assert a.pairs.tolist() == [[i, i] for i in range(10)]


def test_substitution_costs_the_token_and_a_mismatch() -> None:
    y = X.copy()
    y[4] = 99
    a = _full(y)
    assert a.score == 10_000 - 1000 - PEN[0]
    assert a.matched == 9 and a.columns == 10 and [4, 4] not in a.pairs.tolist()


def test_insertion_costs_one_gap() -> None:
    y = X[:5] + [99] + X[5:]
    a = _full(y)
    assert a.score == 10_000 - PEN[1]
    assert a.matched == 10 and a.columns == 11
    assert a.pairs[5:, 1].tolist() == list(range(6, 11))


def test_deletion_costs_the_token_and_one_gap() -> None:
    y = X[:5] + X[6:]
    a = _full(y)
    assert a.score == 10_000 - 1000 - PEN[1]
    assert a.matched == 9 and a.columns == 10


def test_neighbour_swap_keeps_both_tokens() -> None:
    y = X.copy()
    y[3], y[4] = y[4], y[3]
    a = _full(y)
    assert a.score == 10_000 - PEN[2]
    assert a.matched == 10 and a.columns == 10
    assert a.pairs[3].tolist() == [3, 4] and a.pairs[4].tolist() == [4, 3]


def test_matches_count_their_weight() -> None:
    w = np.array([50] * 5 + [1000] * 5, dtype=np.int64)
    common_lost, rare_lost = X.copy(), X.copy()
    common_lost[2], rare_lost[7] = 99, 99
    assert _full(common_lost, w).score == int(w.sum()) - 50 - PEN[0]
    assert _full(rare_lost, w).score == int(w.sum()) - 1000 - PEN[0]
    # Only common words shared, in order, each between unrelated words: their weights never
    # pay for the mismatches between them.
    scattered = [t for t in X[:5] for t in (t, 91, 92, 93)]
    assert _full(scattered, w).score == 50


def test_alignment_is_local_and_banded() -> None:
    y = [90, 91, 92, *X, 93, 94]
    a = _full(y)
    assert a.score == 10_000 and a.pairs[:, 1].tolist() == list(range(3, 13))
    narrow = align(_ints(X), _w(10), _ints(y), 0, 2, PEN)  # the copy lies on diagonal 3
    assert narrow.score < 10_000


@st.composite
def _problem(draw: st.DrawFn) -> tuple[list[int], list[int], list[int], int, int, tuple]:
    alphabet = st.integers(1, draw(st.integers(2, 6)))
    x = draw(st.lists(alphabet, min_size=1, max_size=14))
    y = draw(st.lists(alphabet, min_size=1, max_size=18))
    w = draw(st.lists(st.integers(1, 1000), min_size=len(x), max_size=len(x)))
    lo = draw(st.integers(-len(x) - 2, len(y)))
    hi = draw(st.integers(lo, lo + 12))
    pen = tuple(draw(st.integers(0, 400)) for _ in range(3))
    return x, w, y, lo, hi, pen


@settings(max_examples=150, deadline=None, derandomize=True)
@given(_problem())
def test_band_equals_definition(problem: tuple) -> None:
    x, w, y, lo, hi, pen = problem
    ref = np.array(reference_matrix(x, w, y, lo, hi, pen), dtype=np.int64)
    args = (_ints(x), np.array(w, dtype=np.int64), _ints(y), lo, hi, pen)
    assert np.array_equal(band_matrix(*args), ref)
    if KERNELS is not None:
        assert np.array_equal(band_matrix(*args, kernels=KERNELS), ref)
    h, i, j = best_cell(ref, lo)
    assert h == int(ref.max())
    if h:
        found = align(*args, kernels=KERNELS)
        assert found.score == h
        plain = traceback(ref, args[0], args[1], args[2], lo, pen, (i, j))
        assert plain[1] == found.columns and np.array_equal(plain[0], found.pairs)
        # Every matched pair is a true match, in eval order, each token used once.
        xs, ys = np.array(x), np.array(y)
        assert (xs[found.pairs[:, 0]] == ys[found.pairs[:, 1]]).all()
        assert len(set(found.pairs[:, 1].tolist())) == found.matched
        assert (np.diff(found.pairs[:, 0]) > 0).all()


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(_problem(), min_size=1, max_size=6))
def test_batched_candidates_equal_one_by_one(problems: list[tuple]) -> None:
    pen = problems[0][5]
    xs = [p[0] for p in problems]
    ys = [p[2] for p in problems]
    ptr = np.cumsum([0] + [len(x) for x in xs])
    base = np.cumsum([0] + [len(y) for y in ys])[:-1]
    cands = Candidates(
        example=np.arange(len(problems)),
        doc=np.arange(len(problems)),
        lo=np.array([p[3] for p in problems]),
        hi=np.array([p[4] for p in problems]),
        base=base,
        length=np.array([len(y) for y in ys]),
    )
    ev_tok, ev_w = _ints(sum(xs, [])), np.array(sum((p[1] for p in problems), []), np.int64)
    y = _ints(sum(ys, []))
    want = [best_cell(reference_matrix(p[0], p[1], p[2], p[3], p[4], pen), p[3]) for p in problems]
    for k in (None, KERNELS) if KERNELS is not None else (None,):
        got = align_candidates(cands, ev_tok, ev_w, ptr, y, pen, k)
        assert [tuple(int(v[i]) for v in got) for i in range(len(problems))] == want


# -- seeds and the index -------------------------------------------------------------------------


def test_pair_hash_is_unordered_and_vectorized() -> None:
    toks = hash_tokens(["alpha", "beta", "gamma"])
    a, b, c = (int(t) for t in toks)
    assert pair_hash(a, b) == pair_hash(b, a) != pair_hash(a, c)
    assert pair_hashes(toks, 1).tolist() == [pair_hash(a, b), pair_hash(b, c)]


def test_index_weights_seeds_and_scorability() -> None:
    texts = [
        " ".join(["the", "of", w, "and", CONTENT[(i + 1) % 80]] * 5)
        for i, w in enumerate(CONTENT[:30])
    ] + ["too short to score"]
    index = build_fuzzy_index(texts)
    assert index.scorable.tolist() == [True] * 30 + [False]
    tok, w = index.example(0)
    names = tokenize(texts[0])
    weight = dict(zip(names, w.tolist()))
    assert weight["the"] < weight["bramat"] <= 1000
    assert weight["the"] >= 1000 * CFG.weight_floor
    assert index.total_weight[0] == int(w.sum())
    assert (index.n_seeds[:30] >= 1).all() and index.n_seeds[30] == 0
    assert (index.need >= CFG.min_seeds).all()
    places = np.diff(index.occ_ptr)
    assert places.max() <= CFG.max_places


def test_every_example_keeps_min_pairs_seeds() -> None:
    # Every text is the same common words: no pair weighs enough, yet each keeps its heaviest.
    texts = [" ".join(COMMON * 4)] * 3
    index = build_fuzzy_index(texts, config=FuzzyConfig(max_places=1000))
    assert (index.n_seeds >= CFG.min_pairs).all()


def test_index_and_tokenizer_must_agree() -> None:
    from contam_cli.text import NormConfig

    index = build_fuzzy_index([" ".join(CONTENT[:30])])
    acc = FuzzyAccumulator(1, ["s"])
    with pytest.raises(UsageError):
        batch = DocBatch(0, [], np.zeros(0, np.int64), lambda d: Record("", "", Locator("")))
        acc.add_batch(index, Tokenizer(NormConfig(casefold=False)), batch)


def test_config_is_checked() -> None:
    with pytest.raises(UsageError):
        FuzzyConfig(max_gap=0)
    with pytest.raises(UsageError):
        FuzzyConfig(mismatch=-1)
    assert FuzzyConfig().describe()["min_fuzzy"] == CFG.min_fuzzy


# -- the whole detector --------------------------------------------------------------------------

_words = st.one_of(st.sampled_from(COMMON), st.sampled_from(CONTENT))
_example = st.lists(_words, min_size=20, max_size=45).map(" ".join)
_filler = st.lists(st.sampled_from(UNRELATED + COMMON), min_size=0, max_size=30).map(" ".join)


def _run(
    examples: list[str],
    batches: list[list[tuple[int, str]]],
    accel: bool = False,
    cfg: FuzzyConfig = CFG,
) -> FuzzyResults:
    """Scan documents (order, text) in the given batches, one accumulator per batch, merged."""
    tk = Tokenizer(accel=accel)
    index = build_fuzzy_index(examples, tokenizer=tk, config=cfg)
    total = FuzzyAccumulator(len(examples), ["s"], cfg)
    for docs in batches:
        acc = FuzzyAccumulator(len(examples), ["s"], cfg)
        recs = [Record(f"d{o}", t, Locator("c.jsonl", line=o + 1)) for o, t in docs]
        order = np.array([o for o, _ in docs], dtype=np.int64)
        acc.add_batch(
            index, tk, DocBatch(0, [t.encode() for _, t in docs], order, recs.__getitem__)
        )
        total.merge(acc)
    return total.results(index)


def _same(a: FuzzyResults, b: FuzzyResults) -> None:
    for name in (
        "scorable",
        "source",
        "doc_order",
        "doc_start",
        "doc_end",
        "eval_start",
        "eval_end",
        "char_start",
        "char_end",
    ):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for name in ("score", "aligned_fraction", "identity"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    assert a.evidence.keys() == b.evidence.keys()
    for e, ev in a.evidence.items():
        other = b.evidence[e]
        assert (ev.path, ev.line, ev.text) == (other.path, other.line, other.text)
        assert np.array_equal(ev.pairs, other.pairs)
        assert np.array_equal(ev.pair_chars, other.pair_chars)


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"])
@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    examples=st.lists(_example, min_size=1, max_size=4),
    before=_filler,
    after=_filler,
    pick=st.integers(0, 3),
)
def test_verbatim_copy_aligns_fully(
    accel: bool, examples: list[str], before: str, after: str, pick: int
) -> None:
    e = pick % len(examples)
    doc = f"{before} {examples[e].upper()}, {after}"
    r = _run(examples, [[(0, doc)]], accel)
    assert r.aligned_fraction[e] == 1.0 and r.score[e] == 1.0 and r.identity[e] == 1.0
    ev = r.evidence[e]
    # The evidence: the span is the copy, and each matched pair shows the same word.
    assert tokenize(ev.text or "") == tokenize(examples[e])
    assert doc[ev.char_start : ev.char_end] == ev.text
    eval_tokens = tokenize(examples[e])
    for (i, _), (a, b) in zip(ev.pairs.tolist(), ev.pair_chars.tolist()):
        assert tokenize(doc[a:b]) == [eval_tokens[i]]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(examples=st.lists(_example, min_size=1, max_size=3), filler=_filler, data=st.data())
def test_unrelated_words_never_raise_a_score(
    examples: list[str], filler: str, data: st.DataObject
) -> None:
    words = f"{filler} {examples[0]} {filler}".split()
    doc = " ".join(words)
    before = _run(examples, [[(0, doc)]])
    picks = data.draw(st.sets(st.integers(0, len(words) - 1), max_size=len(words) // 2))
    for k in picks:
        words[k] = UNRELATED[k % len(UNRELATED)]
    after = _run(examples, [[(0, " ".join(words))]])
    assert (np.nan_to_num(after.score) <= np.nan_to_num(before.score)).all()


def _corpus(data: st.DataObject, examples: list[str]) -> list[str]:
    """Documents holding reworded copies of some examples (words replaced or swapped)."""
    draw = data.draw
    docs = []
    for _ in range(draw(st.integers(1, 6))):
        words = draw(st.sampled_from(examples)).split()
        for k in draw(st.sets(st.integers(0, len(words) - 2), max_size=len(words) // 3)):
            if draw(st.booleans()):
                words[k], words[k + 1] = words[k + 1], words[k]
            else:
                words[k] = draw(st.sampled_from(UNRELATED + CONTENT))
        docs.append(f"{draw(_filler)} {' '.join(words)} {draw(_filler)}")
    return docs


@settings(max_examples=20, deadline=None, derandomize=True)
@given(examples=st.lists(_example, min_size=1, max_size=4), data=st.data())
def test_chunking_and_merge_order_change_nothing(examples: list[str], data: st.DataObject) -> None:
    docs = list(enumerate(_corpus(data, examples)))
    whole = _run(examples, [docs])
    cuts = sorted(data.draw(st.sets(st.integers(1, len(docs)), max_size=3)))
    parts = [docs[a:b] for a, b in zip([0, *cuts], [*cuts, len(docs)]) if a < b]
    shuffled = data.draw(st.permutations(parts))
    _same(whole, _run(examples, list(shuffled)))


@NUMBA
@settings(max_examples=20, deadline=None, derandomize=True)
@given(examples=st.lists(_example, min_size=1, max_size=4), data=st.data())
def test_numba_equals_numpy(examples: list[str], data: st.DataObject) -> None:
    docs = list(enumerate(_corpus(data, examples)))
    _same(_run(examples, [docs], accel=False), _run(examples, [docs], accel=True))


def test_reworded_copy_is_found_with_evidence() -> None:
    ex = (
        "the committee approved the new budget for the public library after a long debate"
        " about opening hours and the cost of repairs to the old roof"
    )
    doc = (
        "minutes of the meeting. the board approved a new budget for the town library after"
        " the debate about opening times and the cost of repairs to the old roof. next item"
    )
    r = _run([ex, "an unrelated example " * 8], [[(7, doc)]])
    assert r.flagged(CFG.min_fuzzy).tolist() == [True, False]
    ev = r.evidence[0]
    assert (ev.path, ev.line, ev.source) == ("c.jsonl", 8, "s")
    assert ev.text is not None and ev.text.startswith("the board approved")
    assert ev.text.endswith("old roof") and 0.5 < ev.identity < 1.0
    assert r.doc_order[0] == 7 and r.source[0] == 0 and r.source[1] == -1


def test_short_examples_are_unscorable() -> None:
    r = _run(["far too short", " ".join(CONTENT[:25])], [[(0, " ".join(CONTENT[:25]))]])
    assert np.isnan(r.score[0]) and not r.scorable[0] and not r.flagged(0.0)[0]
    assert r.score[1] == 1.0 and r.source[0] == -1


def test_seeds_below_need_make_no_candidate() -> None:
    example = " ".join(CONTENT[:40])
    r = _run([example], [[(0, f"{CONTENT[3]} {CONTENT[4]} and more words")]])
    assert r.score[0] == 0.0 and r.source[0] == -1 and not r.evidence


def test_slices_of_documents_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from contam_cli.engine.fuzzy import candidates

    examples = [" ".join(CONTENT[i : i + 30]) for i in range(0, 50, 10)]
    docs = list(enumerate(f"x {ex} y {examples[0]}" for ex in examples))
    whole = _run(examples, [docs])
    monkeypatch.setattr(candidates, "MAX_PLACES", 7)
    _same(whole, _run(examples, [docs]))


def test_sources_are_kept_apart_and_ties_go_to_the_first() -> None:
    example = " ".join(CONTENT[:30])
    tk = Tokenizer()
    index = build_fuzzy_index([example], tokenizer=tk)
    rec = Record("d", f"so {example} end", Locator("x.txt", line=3))
    accs = []
    for s in (1, 0):
        acc = FuzzyAccumulator(1, ["train", "test"], CFG, redact=True)
        acc.add_batch(
            index, tk, DocBatch(s, [rec.text.encode()], np.zeros(1, np.int64), lambda d: rec)
        )
        accs.append(acc)
    accs[0].merge(accs[1])
    assert (accs[0].best_h > 0).all()
    r = accs[0].results(index)
    assert r.source[0] == 0 and r.evidence[0].source == "train"
    assert r.evidence[0].text is None and r.evidence[0].char_start == 3  # redacted, offsets kept
    assert accs[0].documents.tolist() == [1, 1]


def test_byte_range_lines_are_marked_like_the_exact_evidence() -> None:
    example = " ".join(CONTENT[:30])
    tk = Tokenizer()
    index = build_fuzzy_index([example], tokenizer=tk)
    rec = Record("d", example, Locator("big.jsonl", line=2))
    acc = FuzzyAccumulator(1, ["s"], CFG)
    batch = DocBatch(
        0,
        [example.encode()],
        np.zeros(1, np.int64),
        lambda d: rec,
        RangePlaces(("big.jsonl", 4096), [2], [1]),
    )
    acc.add_batch(index, tk, batch)
    ev = acc.results(index).evidence[0]
    assert (ev.line, ev.record, ev.line_base) == (2, 1, ("big.jsonl", 4096))


NON_ASCII = ["café", "ﬁsh", "東京", "Straße", "ΟΔΟΣ", "naïve", "ｆｕｌｌ", "e\u0301t\u00e9"]


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"])
@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    words=st.lists(st.sampled_from(CONTENT + NON_ASCII + COMMON), min_size=20, max_size=40),
    junk=st.lists(st.sampled_from(NON_ASCII + UNRELATED[:5] + ["—", "“x”", "1,2"]), max_size=10),
)
def test_pair_offsets_equal_token_spans(accel: bool, words: list[str], junk: list[str]) -> None:
    from contam_cli.text import token_spans

    example = " ".join(words)
    doc = " ".join([*junk, example.replace(" ", "  "), *junk])
    r = _run([example], [[(0, doc)]], accel)
    ev = r.evidence[0]
    spans = token_spans(doc)
    assert ev.pair_chars.tolist() == [list(spans[j]) for j in ev.pairs[:, 1].tolist()]
    assert (ev.char_start, ev.char_end) == (spans[ev.doc_token][0], spans[ev.doc_token_end - 1][1])


def test_a_document_of_many_copies_is_aligned_in_pieces() -> None:
    example = " ".join(CONTENT[:30])
    cfg = FuzzyConfig(max_band=2 * CFG.band)
    doc = " ".join([example] * 5)
    r = _run([example], [[(0, doc)]], cfg=cfg)
    assert r.score[0] == 1.0 and r.doc_start[0] == 0  # the first copy: earliest end wins


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(-3, 3)), max_size=40))
def test_seed_grouping_sorts_like_lexsort(keys: list[tuple[int, int, int]]) -> None:
    from contam_cli.engine.fuzzy.candidates import _group_order

    e, d, b = (
        (np.array(c, dtype=np.int64).reshape(-1) for c in zip(*keys))
        if keys
        else [np.zeros(0, np.int64)] * 3
    )
    packed = _group_order(e, d, b, 6, 4)
    fallback = _group_order(e, d, b, 1 << 40, 1 << 22)  # too large for one key: lexsort
    for o in (packed, fallback):
        got = list(zip(e[o].tolist(), d[o].tolist(), b[o].tolist()))
        assert got == sorted(keys)
