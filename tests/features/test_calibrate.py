"""calibrate(): per-source thresholds from known-clean controls, the file they save to, and the
flag policy that applies them (monotone in every threshold)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli import FlagPolicy, SourceThreshold, scan
from contam_cli.errors import InputError, UsageError
from contam_cli.features.calibrate import calibrate, controls_needed, source_threshold
from contam_cli.policy.thresholds import load_thresholds
from contam_cli.stats.percentile import percentile

FORMULA = "please show all working and simplify your answer completely"
FORMULAIC = " ".join([FORMULA] * 20)
PROSE = (
    "the harbour was empty that morning and the gulls had gone inland before the weather "
    "turned, which the fishermen took as a warning"
)
CONTROLS = [FORMULA + " for question one", FORMULA + " for question two"]
UNRELATED = "an unrelated sentence about cooking rice slowly in boiling salted water"
TRAIN = "the quick brown fox jumps over the lazy dog in the meadow at dawn"
TEST = "a photon travelling through a vacuum moves at a constant speed always"


def test_formulaic_source_gets_higher_thresholds_than_prose() -> None:
    t = calibrate({"formulaic": [FORMULAIC], "prose": [PROSE]}, CONTROLS, n=5, percentile=100)
    # NOTE: 5 of each control's 8 five-grams lie inside the repeated sentence: a run of 9 tokens.
    assert t["formulaic"].longest_run == 10 and t["formulaic"].overlap_fraction == 0.625
    assert t["prose"].longest_run == 1 and t["prose"].overlap_fraction == 0.0
    assert t["formulaic"].controls == t["prose"].controls == 2
    assert t.n == 5 and t.percentile == 100.0 and t.min_run is None


def test_min_run_is_a_floor() -> None:
    assert calibrate({"f": [FORMULAIC]}, [UNRELATED], n=5, min_run=25)["f"].longest_run == 25
    assert calibrate({"f": [FORMULAIC]}, [UNRELATED], n=5)["f"].longest_run == 1
    # A floor below the measured threshold changes nothing.
    got = calibrate({"f": [FORMULAIC]}, CONTROLS, n=5, percentile=100, min_run=3)
    assert got["f"].longest_run == 10 and got.min_run == 3


def test_well_estimated_needs_one_over_the_tail_fraction() -> None:
    one = calibrate({"prose": [PROSE]}, [UNRELATED], n=5)
    assert one["prose"].well_estimated is False and one["prose"].controls == 1
    many = [f"control number {i} says nothing about harbours or gulls" for i in range(150)]
    t = calibrate({"prose": [PROSE]}, many, n=5)
    assert t["prose"].well_estimated is True and t["prose"].controls == 150
    assert controls_needed(99) == 100 and controls_needed(99.9) == 1000
    assert controls_needed(0) == 1 and controls_needed(100) == math.inf


def test_controls_inside_a_source_are_named_in_a_warning() -> None:
    # Two of 100 "clean" controls are in the source: the 99th percentile lands on them, and the
    # run threshold rises above a 35-token leak, which the thresholds alone then pass as clean.
    words = [f"w{i}" for i in range(4100)]
    controls = [" ".join(words[i : i + 40]) for i in range(0, 4000, 40)]
    source = [" ".join(words[4000:4050]) + " " + controls[0], controls[1]]
    leak = " ".join(words[4000:4035]) + " and then an answer nobody had written"
    t = calibrate({"web": source}, controls, n=13)
    assert t["web"].well_estimated and t["web"].longest_run == 41
    policy = FlagPolicy(min_overlap=None, min_run=None, thresholds=t)
    e = scan([leak], {"web": source}, n=13, policy=policy).examples[0]
    assert e.longest_run == 35 and not e.flagged
    assert t.warnings == (
        "2 of 100 controls share a verbatim run of 30 tokens or more with source 'web' (a leak "
        "to contam scan's default --min-run): controls must be outside every source, and these "
        "lift its thresholds (run 41, overlap 1.000) toward the leaks they should flag",
    )
    # Innocent overlap (the template's run of 9 tokens) is no such warning.
    assert calibrate({"f": [FORMULAIC]}, CONTROLS, n=5).warnings == ()


def test_percentile_rules_through_calibrate() -> None:
    assert (percentile([1, 2, 3, 4], 0), percentile([1, 2, 3, 4], 100)) == (1.0, 4.0)
    assert percentile([0, 10], 50) == 5.0 and math.isnan(percentile([], 50))
    runs = np.array([1.0, 2.0, 3.0, 4.0])
    overlaps = np.array([0.1, 0.2, 0.3, 0.4])
    assert source_threshold(overlaps, runs, 0).longest_run == 2  # ceil(1) + 1
    assert source_threshold(overlaps, runs, 100).longest_run == 5
    assert source_threshold(overlaps, runs, 100).overlap_fraction == 0.4
    half = source_threshold(np.array([0.0, 1.0]), np.array([0.0, 10.0]), 50)
    assert half.longest_run == 6 and half.overlap_fraction == 0.5
    # NaN (an unscorable control) is left out, and not counted as a control.
    nan = source_threshold(np.array([0.2, np.nan]), np.array([4.0, np.nan]), 100)
    assert nan.controls == 1 and nan.longest_run == 5 and nan.overlap_fraction == 0.2
    with pytest.raises(ValueError):
        source_threshold(np.array([np.nan]), np.array([np.nan]), 50)
    with pytest.raises(UsageError, match="percentile"):
        calibrate({"p": [PROSE]}, CONTROLS, n=5, percentile=150)


def test_an_interpolated_run_a_hair_above_a_whole_number_adds_no_token() -> None:
    runs = np.full(101, 9.0)
    assert source_threshold(np.zeros(101), runs, 99).longest_run == 10


def test_no_controls_or_none_long_enough_is_a_usage_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="no records"):  # an empty file, named
        calibrate({"p": [PROSE]}, empty, n=5)
    with pytest.raises(UsageError, match="controls"):
        calibrate({"p": [PROSE]}, [], n=5)
    with pytest.raises(UsageError, match="supply longer controls or lower n"):
        calibrate({"p": [PROSE]}, ["too short", "also short"], n=5)


def test_short_controls_are_left_out_of_the_count() -> None:
    t = calibrate({"f": [FORMULAIC]}, [*CONTROLS, "short"], n=5, percentile=100)
    assert t["f"].controls == 2 and t["f"].longest_run == 10


def test_the_file_saves_loads_and_the_scan_applies_it(tmp_path: Path) -> None:
    t = calibrate({"formulaic": [FORMULAIC], "prose": [PROSE]}, CONTROLS, n=5, percentile=100)
    path = tmp_path / "t.json"
    t.save(path)
    back = load_thresholds(path)
    assert back == t and back.to_json() == path.read_bytes() == t.to_json()
    data = orjson.loads(path.read_bytes())
    assert data["schema"] == "contam.thresholds/1" and data["tool"]["name"] == "contam"
    assert data["normalization"] == {
        "unicode": "NFKC",
        "casefold": True,
        "tokens": "letters-digits-marks+segmented-scripts/2",
    }
    sources = {"formulaic": [FORMULAIC], "prose": [PROSE]}
    policy = FlagPolicy(min_overlap=None, min_run=None, thresholds=back)
    report = scan([FORMULA + " for question three", PROSE[:60]], sources, n=5, policy=policy)
    first, second = report.examples
    assert first.flagged and [(r.rule, r.source) for r in first.reasons] == [
        ("source-overlap", "formulaic")
    ]
    assert {(r.rule, r.source) for r in second.reasons} == {
        ("source-run", "prose"),
        ("source-overlap", "prose"),
    }
    assert any("not well estimated" in w for w in report.warnings)


def test_sources_are_kept_apart() -> None:
    sources = {"train": [TRAIN], "test": [TEST]}
    report = scan([TRAIN, TEST, UNRELATED], sources, n=5)
    train, test, other = report.examples
    assert (train.best_source, train.longest_run) == ("train", 14)
    assert (test.best_source, test.longest_run) == ("test", 12)
    assert other.best_source is None and other.longest_run == 0
    t = calibrate(sources, [UNRELATED, "the weather turned cold and grey over the hills"], n=5)
    assert set(t) == {"train", "test"} and all(v.longest_run == 1 for v in t.values())


def test_common_out_writes_the_ngrams_in_most_documents(tmp_path: Path) -> None:
    # "please show all working and" is in 8 documents, the sentence's 4 other 5-grams in 6.
    docs = [f"doc {i} {FORMULA}" for i in range(6)] + [f"{FORMULA[:30]} note {i}" for i in range(2)]
    out = tmp_path / "common.jsonl"
    calibrate({"web": docs}, CONTROLS, n=5, common_out=out, common_k=3)
    rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert rows == [  # most documents first, ties by text
        {"text": "please show all working and", "documents": 8},
        {"text": "all working and simplify your", "documents": 6},
        {"text": "and simplify your answer completely", "documents": 6},
    ]
    # What it wrote is a boilerplate collection: those n-grams no longer count.
    report = scan([FORMULA], {"web": docs}, n=5, ignore_from=(out,))
    ngram = report.examples[0].ngram
    assert ngram is not None and (ngram.total_ngrams, ngram.ignored_ngrams) == (2, 3)
    with pytest.raises(UsageError, match="JSONL"):
        calibrate({"web": docs}, CONTROLS, n=5, common_out=tmp_path / "common.txt")


_THRESHOLD = st.builds(
    SourceThreshold,
    st.one_of(st.none(), st.integers(1, 40)),
    st.one_of(st.none(), st.floats(0.0, 1.0)),
)
_RESULT = st.tuples(st.floats(0.0, 1.0), st.integers(0, 50))


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    thresholds=st.dictionaries(st.sampled_from(["a", "b", "c"]), _THRESHOLD, min_size=1),
    per_source=st.dictionaries(st.sampled_from(["a", "b", "c"]), _RESULT),
    overlap=st.floats(0.0, 1.0),
    run=st.integers(0, 60),
)
def test_raising_any_threshold_never_flags_more(
    data: st.DataObject,
    thresholds: dict[str, SourceThreshold],
    per_source: dict[str, tuple[float, int]],
    overlap: float,
    run: int,
) -> None:
    name = data.draw(st.sampled_from(sorted(thresholds)))
    t = thresholds[name]
    raised_run = None if t.longest_run is None else t.longest_run + data.draw(st.integers(0, 20))
    raised_ov = None if t.overlap_fraction is None else data.draw(st.floats(t.overlap_fraction, 1))
    raised = {**thresholds, name: SourceThreshold(raised_run, raised_ov, t.controls)}
    low = FlagPolicy(min_overlap=0.5, min_run=30, thresholds=thresholds)
    high = FlagPolicy(min_overlap=0.5, min_run=30, thresholds=raised)

    def rules(policy: FlagPolicy) -> set[tuple[str, str | None]]:
        found = policy.reasons(overlap=overlap, run=run, z=0.0, per_source=per_source)
        return {(r.rule, r.source) for r in found}

    assert rules(high) <= rules(low)
    # The global floors too: raising them never adds a reason.
    higher = FlagPolicy(min_overlap=min(1.0, 0.5 + overlap / 2), min_run=31, thresholds=raised)
    assert rules(higher) <= rules(high)
