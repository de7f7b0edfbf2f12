"""The report as columns (ExampleTable), the JSON written piece by piece, and the ranking."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from conftest import CD
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import contam_cli.render.json as render_json_module
from contam_cli import FlagPolicy, SourceThreshold, scan
from contam_cli.cli import app
from contam_cli.engine import Evidence
from contam_cli.features.scan import _plain_reasons, _round6
from contam_cli.policy import Reason
from contam_cli.render import iter_json, render_json, render_table, write_json
from contam_cli.report import (
    ExampleResult,
    ExampleTable,
    Report,
    SourceResult,
    fingerprint,
    fingerprints,
)

ONE_SHOT = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
SOURCES = ["corpus", "web", "ü-source", 'q"uote, comma']
#: Short texts with what JSON has to escape: quotes, backslashes, newlines, controls, non-ASCII.
TEXT = st.text(alphabet=st.sampled_from('ab ,"\\\n\t\x00é€😀'), max_size=6)


def _old_key(e: ExampleResult) -> tuple[bool, int, float]:
    """The sort key ranked() always had (applied with a stable sort to scorable examples)."""
    return (not e.flagged, -(e.longest_run or 0), -(e.overlap_fraction or 0.0))


def _one_shot(report: Report) -> bytes:
    """The reference bytes: one orjson dump of the whole report dict."""
    return orjson.dumps(report.to_dict(), option=ONE_SHOT)


evidence = st.builds(
    Evidence,
    source=st.sampled_from(SOURCES),
    path=st.none() | TEXT,
    line=st.none() | st.integers(1, 10**6),
    record=st.none() | st.integers(0, 10**6),
    doc_id=st.none() | TEXT,
    byte_offset=st.none() | st.integers(0, 10**9),
    char_start=st.integers(-1, 10**4),
    char_end=st.integers(-1, 10**4),
    doc_token=st.integers(0, 10**4),
    eval_token=st.integers(0, 10**4),
    length=st.integers(1, 500),
    text=st.none() | TEXT,
)
reason = st.builds(
    Reason,
    rule=st.sampled_from(["min-overlap", "min-run", "zscore", "source-threshold"]),
    value=st.floats(-10, 200, allow_nan=False),
    threshold=st.floats(0, 100, allow_nan=False),
    source=st.none() | st.sampled_from(SOURCES),
)
source_result = st.builds(
    SourceResult,
    matched_ngrams=st.integers(1, 1000),
    overlap_fraction=st.floats(0, 1),
    longest_run=st.integers(0, 500),
)
#: Few distinct values, so that rankings have ties to break by input order.
overlaps = st.sampled_from([0.0, 0.25, 1 / 3, 1.0]) | st.floats(0, 1)
runs = st.integers(0, 3) | st.integers(0, 10**6)


@st.composite
def examples(draw: st.DrawFn, max_size: int = 10) -> tuple[ExampleTable, tuple[ExampleResult, ...]]:
    """The same random examples as an ExampleTable and as ExampleResult objects built directly."""
    n = draw(st.integers(0, max_size))
    cols: dict[str, list[Any]] = {
        "ids": draw(st.lists(TEXT, min_size=n, max_size=n)),
        "eval_paths": draw(
            st.lists(st.sampled_from(["e.jsonl", "dir/é v.jsonl"]), min_size=n, max_size=n)
        ),
        "eval_lines": draw(st.lists(st.none() | st.integers(1, 10**6), min_size=n, max_size=n)),
        "n_tokens": draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n)),
        "total_ngrams": draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n)),
        "matched_ngrams": draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n)),
        "scorable": draw(st.lists(st.booleans() | st.just(True), min_size=n, max_size=n)),
        "overlap": draw(st.lists(overlaps, min_size=n, max_size=n)),
        "longest_run": draw(st.lists(runs, min_size=n, max_size=n)),
        "zscore": draw(st.lists(st.floats(-1e6, 1e6), min_size=n, max_size=n)),
        "fingerprints": draw(
            st.lists(st.text("0123456789abcdef", min_size=32, max_size=32), min_size=n, max_size=n)
        ),
    }
    detail = draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n)) if n else set()
    reasons, best, per_source, ev = {}, {}, {}, {}
    for e in sorted(detail):
        reasons[e] = tuple(draw(st.lists(reason, max_size=3)))
        best[e] = draw(st.none() | st.sampled_from(SOURCES))
        per_source[e] = draw(st.dictionaries(st.sampled_from(SOURCES), source_result, max_size=3))
        ev[e] = draw(st.none() | evidence)
    table = ExampleTable(
        **{
            k: np.array(v) if k not in ("ids", "eval_paths", "eval_lines", "fingerprints") else v
            for k, v in cols.items()
        },
        reasons=reasons,
        best_source=best,
        per_source=per_source,
        evidence=ev,
    )
    objects = []
    for e in range(n):
        s = cols["scorable"][e]
        ps = per_source.get(e, {})
        objects.append(
            ExampleResult(
                id=cols["ids"][e],
                eval_path=cols["eval_paths"][e],
                eval_line=cols["eval_lines"][e],
                n_tokens=cols["n_tokens"][e],
                total_ngrams=cols["total_ngrams"][e],
                matched_ngrams=cols["matched_ngrams"][e],
                overlap_fraction=cols["overlap"][e] if s else None,
                longest_run=cols["longest_run"][e] if s else None,
                zscore=cols["zscore"][e] if s else None,
                flagged=bool(reasons.get(e)),
                reasons=reasons.get(e, ()),
                best_source=best.get(e),
                matched_sources=tuple(ps),
                per_source=dict(ps),
                evidence=ev.get(e),
                fingerprint=cols["fingerprints"][e],
            )
        )
    return table, tuple(objects)


def _reports(
    table: ExampleTable, objects: tuple[ExampleResult, ...], redact: bool
) -> tuple[Report, Report]:
    config = {"n": 13, "policy": {"min_overlap": 0.5, "zscore": None}, "name": 'é\n"x"'}
    inputs = {"eval": [{"path": "e.jsonl", "sha256": None, "records": len(objects)}]}
    stats = {"scorable": 1, "overlap_mean": 0.1, "overlap_std": None}
    return (
        Report(table, config, inputs, "9.9", redact, stats),
        Report(objects, config, inputs, "9.9", redact, stats),
    )


@settings(max_examples=50, deadline=None)
@given(examples(), st.booleans(), st.integers(1, 4))
def test_table_reports_equal_object_reports_and_their_json_is_the_one_shot_dump(
    data: tuple[ExampleTable, tuple[ExampleResult, ...]], redact: bool, slice_examples: int
) -> None:
    table, objects = data
    columnar, plain = _reports(table, objects, redact)
    assert table == objects and objects == table and tuple(table) == objects
    assert columnar.to_dict() == plain.to_dict()
    expected = _one_shot(plain)
    assert render_json(columnar).encode() == expected
    assert render_json(plain).encode() == expected
    for report in (columnar, plain):
        assert b"".join(iter_json(report, slice_examples=slice_examples)) == expected
    assert columnar.summary() == plain.summary()
    assert columnar.flagged == plain.flagged == tuple(e for e in objects if e.flagged)
    assert columnar.unscorable == plain.unscorable == tuple(e for e in objects if not e.scorable)
    assert columnar.contaminated == plain.contaminated == any(e.flagged for e in objects)
    assert render_table(columnar, clean_rows=3, flagged_rows=2) == render_table(
        plain, clean_rows=3, flagged_rows=2
    )


@settings(max_examples=50, deadline=None)
@given(examples(max_size=25))
def test_ranked_keeps_the_order_of_the_old_sort(
    data: tuple[ExampleTable, tuple[ExampleResult, ...]],
) -> None:
    table, objects = data
    expected = sorted((e for e in objects if e.scorable), key=_old_key)
    for report in _reports(table, objects, redact=False):
        assert report.ranked() == expected
        assert [objects[i] for i in report.ranked_indices()] == expected


@settings(max_examples=25, deadline=None)
@given(examples())
def test_table_is_a_read_only_sequence_of_results(
    data: tuple[ExampleTable, tuple[ExampleResult, ...]],
) -> None:
    table, objects = data
    n = len(objects)
    assert len(table) == n and list(table) == list(objects)
    assert table[::-1] == objects[::-1] and table[1::2] == objects[1::2]
    if n:
        assert table[-1] == objects[-1] and table[0] == objects[0]
        assert table.take([n - 1, 0, n - 1]) == [objects[-1], objects[0], objects[-1]]
        first = table[0]
        first.per_source["added"] = SourceResult(1, 1.0, 1)
        assert table[0] == objects[0]  # each access builds a fresh result
    with pytest.raises(IndexError):
        table[n]
    with pytest.raises(IndexError):
        table.take([n])
    with pytest.raises(ValueError):
        table.n_tokens[:1] = 7
    assert table != list(objects)  # like a tuple, not equal to a list


def test_empty_reports() -> None:
    table = ExampleTable(
        ids=[],
        eval_paths=[],
        eval_lines=[],
        n_tokens=np.zeros(0),
        total_ngrams=np.zeros(0),
        matched_ngrams=np.zeros(0),
        scorable=np.zeros(0, bool),
        overlap=np.zeros(0),
        longest_run=np.zeros(0),
        zscore=np.zeros(0),
        fingerprints=[],
    )
    for examples_ in (table, ()):
        report = Report(examples_, {"n": 13}, {"eval": []}, "1.0")
        expected = orjson.dumps(report.to_dict(), option=ONE_SHOT)
        assert expected.endswith(b'"examples": []\n}\n')
        assert render_json(report).encode() == expected
        assert report.ranked() == [] and report.flagged == () and not report.contaminated
        assert report.summary() == {"examples": 0, "flagged": 0, "clean": 0, "unscorable": 0}


def test_columns_orjson_cannot_write_on_one_line_take_the_general_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert render_json_module._scalars([1, None, "a,\n  b", 0.5]) == [
        b"1",
        b"null",
        b'"a,\\n  b"',
        b"0.5",
    ]
    assert render_json_module._scalars([{"a": 1}, [1, 2]]) is None
    report = scan(["alpha beta gamma delta", "x y"], ["so alpha beta gamma delta"], n=3)
    expected = _one_shot(report)
    monkeypatch.setattr(render_json_module, "_scalars", lambda values: None)
    assert render_json(report).encode() == expected


def test_scan_json_with_evidence_sources_redaction_and_unscorable(tmp_path: Path) -> None:
    leak = "the planted sentence sits right here in the corpus"
    evals = [leak, "an unrelated example with enough words", "short", "a " + leak[2:] + " too"]
    sources = {"web": ["x " + leak + " y", "other words"], "books": ["sentence sits right here"]}
    policy = FlagPolicy(min_overlap=0.0, thresholds={"books": SourceThreshold(longest_run=3)})
    for redact in (False, True):
        report = scan(evals, sources, n=3, policy=policy, redact=redact)
        assert isinstance(report.examples, ExampleTable)
        assert render_json(report).encode() == _one_shot(report)
        with open(tmp_path / "r.json", "wb") as fh:
            write_json(report, fh)
        assert (tmp_path / "r.json").read_bytes() == _one_shot(report)
        data = orjson.loads(_one_shot(report))
        assert [e.to_dict(redact) for e in report.examples] == data["examples"]
        assert (data["examples"][0]["evidence"]["text"] is None) == redact


def test_flag_rules_and_fingerprints_per_example_as_before() -> None:
    evals = ["one two three four five six", "one two three seven", "nine ten eleven twelve", "x"]
    policy = FlagPolicy(
        min_overlap=0.0, min_run=5, thresholds={"b": SourceThreshold(longest_run=4)}
    )
    report = scan(
        evals,
        {"a": ["one two three four five six"], "b": ["one two three seven"]},
        n=2,
        policy=policy,
    )
    for e in report.examples:
        by_source = {k: (v.overlap_fraction, v.longest_run) for k, v in e.per_source.items()}
        want = (
            ()
            if not e.scorable
            else tuple(
                policy.reasons(
                    overlap=e.overlap_fraction, run=e.longest_run, z=0.0, per_source=by_source
                )
            )
        )
        assert e.reasons == want and e.flagged == bool(want)
        assert e.matched_sources == tuple(e.per_source)
        assert (e.best_source is None) == (not e.longest_run)
    # min_overlap=0 flags the examples that match nothing too
    assert [e.flagged for e in report.examples] == [True, True, True, False]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from([0.0, -0.0, 1e-9, -1e-9, 1.25e-05, 0.1234565, 2.5e-7, 1.0000005])
        | st.floats(-50, 50),
        max_size=30,
    ),
    st.data(),
)
def test_zscores_round_like_python(values: list[float], data: st.DataObject) -> None:
    mask = np.array(
        data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values))), dtype=bool
    )
    got = _round6(np.array(values, dtype=np.float64), mask)
    want = [round(v, 6) if m else 0.0 for v, m in zip(values, mask)]
    assert np.array(want).view(np.int64).tolist() == got.view(np.int64).tolist()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0, 1),
            st.integers(0, 40),
            st.sampled_from([0.0, 1.5, -0.25]) | st.floats(-5, 5),
        ),
        max_size=30,
    ),
    st.sampled_from(
        [
            FlagPolicy(),
            FlagPolicy(min_overlap=0.0),
            FlagPolicy(min_run=0, zscore=1.0),
            FlagPolicy(min_overlap=None, min_run=None, zscore=-1.0),
        ]
    ),
)
def test_shared_flag_rules_give_each_example_its_own_reasons(
    rows: list[tuple[float, int, float]], policy: FlagPolicy
) -> None:
    overlap = np.array([r[0] for r in rows], dtype=np.float64)
    run = np.array([r[1] for r in rows], dtype=np.int64)
    z = np.array([r[2] for r in rows], dtype=np.float64)
    plain = np.arange(len(rows))[::-1]
    got: dict[int, tuple[Reason, ...]] = {}
    for members, found in _plain_reasons(policy, plain, overlap, run, z):
        got.update(dict.fromkeys(members, found))
    for e, (ov, rn, ze) in enumerate(rows):
        want = tuple(policy.reasons(overlap=ov, run=rn, z=ze, per_source={}))
        assert got.get(e, ()) == want


def test_batch_fingerprints_match_one_by_one() -> None:
    digests = [bytes([i]) * 16 for i in range(5)] + [b"", b"\0" * 40]
    for source in (None, "", "corpus", "ü"):
        assert fingerprints(digests, source) == [fingerprint(d, source) for d in digests]


def test_cli_report_file_and_stdout_are_the_same_bytes(tmp_path: Path) -> None:
    bench = str(CD / "derived" / "mixed_examples.jsonl")
    corpus = str(CD / "examples" / "corpus")
    out, packed = tmp_path / "r.json", tmp_path / "r.json.gz"
    result = CliRunner().invoke(
        app, ["scan", bench, "--corpus", corpus, "--report", str(out), "--json", "--no-fail"]
    )
    assert result.exit_code == 0, result.output
    written = out.read_bytes()
    assert result.stdout_bytes == written
    # The canonical layout: loading and dumping again in one go gives the same bytes.
    assert orjson.dumps(orjson.loads(written), option=ONE_SHOT) == written
    assert json.loads(written)["summary"]["examples"] == 4
    result = CliRunner().invoke(
        app, ["scan", bench, "--corpus", corpus, "--report", str(packed), "--no-fail"]
    )
    assert result.exit_code == 0, result.output
    assert gzip.decompress(packed.read_bytes()) == written
