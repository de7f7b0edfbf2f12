"""Shard results hold what they found, not dense arrays: merging and pickling them in any order
gives what one accumulator holding everything gives."""

from __future__ import annotations

import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.engine.accumulator import Accumulator
from contam_cli.engine.evidence import Evidence

S, G, E = 2, 300, 40


def _evidence(s: int, e: int, length: int) -> Evidence:
    return Evidence(f"s{s}", "f.jsonl", 1, 0, "d", 0, 0, 1, 0, 0, length, None)


def _shard(hits: list[tuple[int, list[int]]], runs: list[tuple[int, int, int, int]]) -> Accumulator:
    acc = Accumulator(S, G, E, ["a", "b"])
    for s, grams in hits:
        acc.mark(s, np.array(grams, dtype=np.int64))
    for s, e, length, order in runs:
        cur = acc.best_len[s, e]
        if length > cur or (length == cur and order < acc.best_order[s, e]):
            acc.best_len[s, e], acc.best_order[s, e], acc.best_pos[s, e] = length, order, 0
            acc.evidence[(s, e)] = _evidence(s, e, length)
    return acc


shards = st.lists(
    st.tuples(
        st.lists(st.tuples(st.integers(0, S - 1), st.lists(st.integers(0, G - 1), max_size=30))),
        st.lists(
            st.tuples(
                st.integers(0, S - 1), st.integers(0, E - 1), st.integers(1, 9), st.integers(0, 5)
            )
        ),  # fmt: skip
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=80, deadline=None)
@given(parts=shards, order=st.randoms(use_true_random=False), pickled=st.booleans())
def test_merged_shards_equal_one_accumulator(parts: list, order, pickled: bool) -> None:
    one = _shard([h for hits, _ in parts for h in hits], [r for _, runs in parts for r in runs])
    results = [_shard(hits, runs) for hits, runs in parts]
    order.shuffle(results)
    total = Accumulator(S, G, E, ["a", "b"])
    for r in results:
        total.merge(pickle.loads(pickle.dumps(r)) if pickled else r)
    assert (total.matched == one.matched).all()
    assert (total.best_len == one.best_len).all()
    has = one.best_len > 0
    assert (total.best_order[has] == one.best_order[has]).all()
    assert set(total.evidence) == set(one.evidence) == {tuple(x) for x in np.argwhere(has)}


def test_a_shard_that_finds_most_n_grams_turns_dense_and_still_merges() -> None:
    acc = Accumulator(S, G, E, ["a", "b"])
    for _ in range(40):
        acc.mark(0, np.arange(G))
    assert acc._dense is not None  # more marks than a bitmap's worth
    back = pickle.loads(pickle.dumps(acc))
    total = Accumulator(S, G, E, ["a", "b"])
    total.merge(back)
    assert total.matched[0].all() and not total.matched[1].any()
