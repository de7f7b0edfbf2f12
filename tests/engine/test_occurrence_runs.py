"""Occurrence offsets kept only for the n-grams that occur more than once."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from contam_cli.engine import occurrence_runs
from contam_cli.engine.occurrence_runs import compact, counts, ranges

PER_GRAM = st.lists(st.one_of(st.just(1), st.integers(1, 6)), max_size=200)


@given(per_gram=PER_GRAM, data=st.data())
def test_the_compact_form_gives_every_offset(per_gram: list[int], data: st.DataObject) -> None:
    ptr = np.zeros(len(per_gram) + 1, dtype=np.int32)
    np.cumsum(per_gram, out=ptr[1:])
    multi, extra = compact(ptr)
    assert len(multi) == sum(c > 1 for c in per_gram) and len(extra) == len(multi) + 1
    assert counts(multi, extra, len(per_gram)).tolist() == per_gram
    if per_gram:
        drawn = data.draw(st.lists(st.integers(0, len(per_gram) - 1), max_size=50))
        uidx = np.array(drawn, dtype=np.int64)
        lo, cnt = ranges(multi, extra, uidx)
        assert lo.tolist() == ptr[uidx].tolist()
        assert cnt.tolist() == (ptr[uidx + 1] - ptr[uidx]).tolist()


@given(per_gram=PER_GRAM)
def test_slices_do_not_change_the_compact_form(per_gram: list[int]) -> None:
    ptr = np.zeros(len(per_gram) + 1, dtype=np.int64)
    np.cumsum(per_gram, out=ptr[1:])
    whole = compact(ptr)
    saved = occurrence_runs._STEP
    occurrence_runs._STEP = 3
    try:
        sliced = compact(ptr)
    finally:
        occurrence_runs._STEP = saved
    assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(whole, sliced))
