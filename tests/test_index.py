"""The eval index: its arrays equal their plain definitions, on both build paths."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.engine import eval_index, occurrence_sort
from contam_cli.engine.accel import index_kernels as kernels
from contam_cli.engine.bloom import bloom_log2, bloom_test, bloom_words
from contam_cli.engine.eval_index import EvalIndex, build_eval_index
from contam_cli.text import Tokenizer, ngram_hashes

ACCEL = [False, True] if kernels() is not None else [False]
FIELDS = (
    "grams occ_multi occ_extra occ_ex occ_pos occ_first total_ngrams n_tokens words directory"
).split()

# Few distinct words, so that n-grams repeat within and across examples; a shared boilerplate
# sentence puts one gram in many examples (a bucket too big for the insertion sort).
WORDS = st.sampled_from("a b c d the of and".split())
TEXTS = st.lists(
    st.builds(
        lambda ws, boiler: ("q r s t u v w " if boiler else "") + " ".join(ws),
        st.lists(WORDS, max_size=25),
        st.booleans(),
    ),
    max_size=60,
)


@pytest.fixture(autouse=True)
def _compiled_sort_for_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tokenizer with the kernels builds with them here, however small the set: the tests
    below hold the compiled build to the definition and to numpy's (a scan sorts a small set
    with numpy, see test_a_small_set_is_sorted_by_numpy_a_large_one_by_the_kernels)."""
    monkeypatch.setattr(eval_index, "COMPILED_SORT_MIN", 0)


@pytest.mark.skipif(kernels() is None, reason="no numba")
def test_a_small_set_is_sorted_by_numpy_a_large_one_by_the_kernels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [f"w{i} x{i % 7} y{i % 5} z{i % 3} v" for i in range(40)]  # an n-gram each, n = 5
    calls = []
    monkeypatch.setattr(eval_index, "index_kernels", lambda: calls.append(1) or kernels())
    built = {}
    for least in (41, 40):  # one more than the set holds, then exactly as many
        monkeypatch.setattr(eval_index, "COMPILED_SORT_MIN", least)
        built[least] = build_eval_index(texts, 5, tokenizer=Tokenizer(accel=True))
        assert len(calls) == (0 if least == 41 else 1), least
    for name in FIELDS:
        x, y = getattr(built[41], name), getattr(built[40], name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name


def _expected(texts: list[str], n: int) -> dict[int, set[tuple[int, int]]]:
    """Gram -> every (example, position) where it occurs, by the plain definition."""
    places: dict[int, set[tuple[int, int]]] = {}
    for e, t in enumerate(texts):
        for p, g in enumerate(ngram_hashes(t, n).tolist()):
            places.setdefault(g, set()).add((e, p))
    return places


def _check(index: EvalIndex, texts: list[str], n: int) -> None:
    places = _expected(texts, n)
    assert index.grams.tolist() == sorted(places)
    lo, cnt = index.occ_range(np.arange(len(index.grams)))
    assert int(cnt.sum()) == len(index.occ_ex) and lo.tolist() == (np.cumsum(cnt) - cnt).tolist()
    for u, g in enumerate(index.grams.tolist()):
        j = range(int(lo[u]), int(lo[u] + cnt[u]))
        got = [(int(index.occ_ex[k]), int(index.occ_pos[k])) for k in j]
        assert got == sorted(places[g])  # (example, position) order
        firsts = [k for k in j if index.occ_first[k]]
        assert [int(index.occ_ex[k]) for k in firsts] == sorted({e for e, _ in places[g]})
    for e, t in enumerate(texts):
        assert index.total_ngrams[e] == len(set(ngram_hashes(t, n).tolist()))


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"][: len(ACCEL)])
@settings(max_examples=60, deadline=None)
@given(texts=TEXTS, n=st.integers(1, 4))
def test_index_equals_definition(accel: bool, texts: list[str], n: int) -> None:
    index = build_eval_index(iter(texts), n, tokenizer=Tokenizer(accel=accel))
    _check(index, texts, n)


@pytest.mark.skipif(kernels() is None, reason="no numba")
@pytest.mark.parametrize("coarse", [occurrence_sort.COARSE_BITS, 2, 1])
def test_both_build_paths_give_identical_arrays(
    coarse: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # NOTE: a first split of 2 bits (or 1): every bucket is split again, the path of large sets.
    monkeypatch.setattr(occurrence_sort, "COARSE_BITS", coarse)
    texts = [f"the boiler plate w{i % 97} w{i % 13} and w{i % 7} " * 3 for i in range(3000)]
    a = build_eval_index(texts, 3, tokenizer=Tokenizer(accel=False))
    b = build_eval_index(texts, 3, tokenizer=Tokenizer(accel=True))
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert a.digests == b.digests


@pytest.mark.skipif(kernels() is None, reason="no numba")
@settings(max_examples=40, deadline=None)
@given(texts=TEXTS, n=st.integers(1, 4), coarse=st.integers(1, 3))
def test_split_buckets_index_equals_definition(texts: list[str], n: int, coarse: int) -> None:
    saved = occurrence_sort.COARSE_BITS
    occurrence_sort.COARSE_BITS = coarse
    try:
        index = build_eval_index(iter(texts), n, tokenizer=Tokenizer(accel=True))
    finally:
        occurrence_sort.COARSE_BITS = saved
    _check(index, texts, n)


def test_index_reads_a_generator_once_in_batches() -> None:
    texts = [f"example {i} " + "word " * 400 for i in range(2000)]  # several 1 MB batches
    consumed = []

    def gen():  # noqa: ANN202
        for t in texts:
            consumed.append(t)
            yield t

    a = build_eval_index(gen(), 5)
    b = build_eval_index(texts, 5)
    assert len(consumed) == len(texts)
    assert all(np.array_equal(getattr(a, f), getattr(b, f)) for f in FIELDS)


def test_empty_eval_set() -> None:
    index = build_eval_index([], 3)
    assert index.n_examples == 0 and len(index.grams) == 0
    assert index.lookup(np.arange(5, dtype=np.uint64))[0].tolist() == []


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"][: len(ACCEL)])
def test_distinct_per_example(accel: bool) -> None:
    texts = ["a b a b a b", "b a b", "c d e", "a b"]
    index = build_eval_index(texts, 2, tokenizer=Tokenizer(accel=accel))
    ab = int(ngram_hashes("a b", 2)[0])
    mask = index.grams == ab
    assert index.distinct_per_example(mask).tolist() == [1, 1, 0, 1]  # "a b" counted once
    assert index.distinct_per_example(np.ones(len(index.grams), bool)).tolist() == [2, 2, 2, 1]
    assert index.total_ngrams.tolist() == [2, 2, 2, 1]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=300, unique=True))
def test_bloom_has_no_false_negatives(values: list[int]) -> None:
    grams = np.array(sorted(values), dtype=np.uint64)
    log2 = bloom_log2(len(grams))
    words = bloom_words(grams, log2)
    assert bloom_test(words, log2, grams).all()
    if kernels() is not None:
        assert np.array_equal(bloom_words(grams, log2, kernels()), words)


@pytest.mark.parametrize(
    "n, dtype", [(10, np.uint64), (1 << 21, np.uint64), ((1 << 22) + 1, np.int32)]
)
def test_scratch_arrays_are_plain_zeros(n: int, dtype: type) -> None:
    # NOTE: 4 MB and more take a mapping of their own (on Linux): still zeros, writable, and
    # pickled (to a spawned worker) as any array.
    a = occurrence_sort.scratch(n, dtype)
    assert a.shape == (n,) and a.dtype == dtype and a.flags.writeable and a.flags.c_contiguous
    assert not a.any()
    a[::4097] = 7
    b = pickle.loads(pickle.dumps(a))
    assert np.array_equal(a, b) and int(b.sum()) == 7 * len(range(0, n, 4097))


@pytest.mark.skipif(kernels() is None, reason="no numba")
def test_bloom_rejects_most_other_hashes() -> None:
    rng = np.random.default_rng(7)
    grams = np.unique(rng.integers(0, 2**64 - 1, 200_000, dtype=np.uint64))
    log2 = bloom_log2(len(grams))
    words = bloom_words(grams, log2, kernels())
    others = rng.integers(0, 2**64 - 1, 200_000, dtype=np.uint64)
    passed = bloom_test(words, log2, others).mean()
    assert passed < 0.04  # two bits in one word at 16 bits per gram: about 2%


@pytest.mark.parametrize("accel", ACCEL, ids=["numpy", "numba"][: len(ACCEL)])
def test_positions_widen_for_long_examples(accel: bool) -> None:
    short = build_eval_index(["a b c d"], 2, tokenizer=Tokenizer(accel=accel))
    assert short.occ_pos.dtype == np.uint16
    text = " ".join(f"w{i % 1000}" for i in range(70_000))
    index = build_eval_index(["a b c", text], 2, tokenizer=Tokenizer(accel=accel))
    assert index.occ_pos.dtype == np.int32
    _check(index, ["a b c", text], 2)


@pytest.mark.skipif(kernels() is None, reason="no numba")
def test_prefetching_lookup_finds_the_same() -> None:
    rng = np.random.default_rng(3)
    texts = [" ".join(f"w{x}" for x in rng.integers(0, 500, 40)) for _ in range(300)]
    index = build_eval_index(texts, 3, tokenizer=Tokenizer(accel=True))
    tk = Tokenizer(accel=True)
    grams, _ = tk.ngrams(tk.tokens(texts[::2] + ["w1 w2 w3 w4"] * 50), 3)
    k = kernels()
    args = (grams, index.words, 64 - index.words_log2, index.grams, index.directory)
    plain = k.lookup(*args, 64 - index.dir_log2, 0)
    for ahead in (1, 48, len(grams) + 5):
        got = k.lookup(*args, 64 - index.dir_log2, ahead)
        assert all(np.array_equal(a, b) for a, b in zip(got, plain))
    assert all(np.array_equal(a, b) for a, b in zip(index.lookup(grams), plain))
