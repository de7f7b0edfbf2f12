"""The exact runs' one-key sort finds the runs the four-key lexsort finds."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from contam_cli.engine.match import run_starts

# Distinct places (example, its position; document, its position), a few values each, so that
# runs along a diagonal and near-misses (a step in one coordinate only) are common.
PLACES = st.sets(
    st.tuples(st.integers(0, 3), st.integers(0, 7), st.integers(0, 3), st.integers(0, 7)),
    max_size=80,
)


def _runs(places: set[tuple[int, int, int, int]], keyed: bool) -> list[list[int]]:
    e, i, d, c = (np.array(col, dtype=np.int64) for col in zip(*sorted(places)))
    start, e, d, c, i = run_starts(e, d, c, i, keyed=keyed)
    return [start.tolist(), e.tolist(), d.tolist(), c.tolist(), i.tolist()]


@given(places=PLACES.filter(bool))
def test_one_key_and_lexsort_agree(places: set[tuple[int, int, int, int]]) -> None:
    assert _runs(places, keyed=True) == _runs(places, keyed=False)


def test_the_largest_position_does_not_run_into_the_next_diagonal() -> None:
    # (e 0, i 7, d 0, c 7) is on diagonal 0 and (e 0, i 0, d 0, c 1) on diagonal 1: keys one
    # apart if i's span were the largest i + 1.
    places = {(0, 7, 0, 7), (0, 0, 0, 1), (0, 1, 0, 2)}
    start = _runs(places, keyed=True)[0]
    assert start == _runs(places, keyed=False)[0] == [0, 1]
