"""The report value: one columnar model for every detector, its JSON written piece by piece, read
back by load_report, and ranked."""

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

import contam_cli.report.persist as persist
from contam_cli import FlagPolicy, SourceThreshold, scan
from contam_cli.cli import app
from contam_cli.engine.evidence import Evidence
from contam_cli.features.ngram_report import plain_reasons, round6
from contam_cli.render import iter_json, render_json, render_table
from contam_cli.report import (
    NGRAM_METHODS,
    ExampleResult,
    ExampleTable,
    Method,
    NgramColumns,
    Reason,
    Report,
    SourceResult,
    load_report,
    report_from_dict,
    save_report,
)
from contam_cli.text.fingerprint import fingerprint, fingerprints

ONE_SHOT = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
SOURCES = ["corpus", "web", "ü-source", 'q"uote, comma']
#: Short texts with what JSON has to escape: quotes, backslashes, newlines, controls, non-ASCII.
TEXT = st.text(alphabet=st.sampled_from('ab ,"\\\n\t\x00é€😀'), max_size=6)
PROBE_METHODS = (
    Method("min_k_plus_plus", "probe", "higher"),
    Method("perplexity", "probe", "lower"),
)


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
    rule=st.sampled_from(["min-overlap", "min-run", "zscore", "source-run", "min-fuzzy"]),
    value=st.floats(-10, 200, allow_nan=False),
    threshold=st.floats(0, 100, allow_nan=False),
    source=st.none() | st.sampled_from(SOURCES),
    detector=st.sampled_from(["ngram", "fuzzy", "combined"]),
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
json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(-1e6, 1e6) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


def _column(draw: st.DrawFn, strategy: st.SearchStrategy[Any], n: int) -> list[Any]:
    return draw(st.lists(strategy, min_size=n, max_size=n))


@st.composite
def tables(draw: st.DrawFn, max_size: int = 10, ngram: bool | None = None) -> ExampleTable:
    """Random tables: n-gram details or not, other detectors' scores and sparse details."""
    n = draw(st.integers(0, max_size))
    with_ngram = draw(st.booleans()) if ngram is None else ngram
    methods = (NGRAM_METHODS if with_ngram else ()) + draw(
        st.sampled_from([(), PROBE_METHODS, PROBE_METHODS[:1]])
    )
    scorable = _column(draw, st.booleans() | st.just(True), n)
    scores: dict[str, list[float]] = {}
    for m in methods:
        values = _column(draw, runs if m.integer else overlaps, n)
        gaps = _column(draw, st.booleans(), n)
        keep = scorable if m.detector == "ngram" else [not g for g in gaps]
        scores[m.name] = [float(v) if k else np.nan for v, k in zip(values, keep)]
    rows = sorted(draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n))) if n else []
    reasons = {e: tuple(draw(st.lists(reason, max_size=3))) for e in rows}
    cols = None
    if with_ngram:
        cols = NgramColumns.build(
            scorable=scorable,
            n_tokens=_column(draw, st.integers(0, 10**6), n),
            total_ngrams=_column(draw, st.integers(0, 10**6), n),
            matched_ngrams=_column(draw, st.integers(0, 10**6), n),
            ignored_ngrams=_column(draw, st.integers(0, 100), n),
            zscore=_column(draw, st.floats(-1e6, 1e6), n),
            best_source={e: draw(st.none() | st.sampled_from(SOURCES)) for e in rows},
            per_source={
                e: draw(st.dictionaries(st.sampled_from(SOURCES), source_result, max_size=3))
                for e in rows
            },
            evidence={e: draw(st.none() | evidence) for e in rows},
        )
    details = {"fuzzy": {e: draw(json_value) for e in rows if draw(st.booleans())}}
    return ExampleTable(
        ids=_column(draw, TEXT, n),
        eval_paths=_column(draw, st.sampled_from(["e.jsonl", "dir/é v.jsonl"]), n),
        eval_lines=_column(draw, st.none() | st.integers(1, 10**6), n),
        fingerprints=_column(draw, st.text("0123456789abcdef", min_size=32, max_size=32), n),
        methods=methods,
        scores=scores,
        reasons=reasons,
        ngram=cols,
        details=details,
        texts={e: draw(st.none() | TEXT) for e in rows},
    )


def _report(table: ExampleTable, redact: bool = False, **more: Any) -> Report:
    return Report(
        examples=table,
        config={"n": 13, "policy": {"min_overlap": 0.5, "zscore": None}, "name": 'é\n"x"'},
        inputs={"eval": [{"path": "e.jsonl", "sha256": None, "records": len(table)}]},
        tool_version="9.9",
        redact=redact,
        stats={"scorable": 1, "overlap_mean": 0.1, "overlap_std": None},
        warnings=("a warning", 'with "quotes"\n'),
        **more,
    )


def _redacted(report: Report) -> Report:
    """What a redacted report reads back as: evidence texts are not in its JSON."""
    return report_from_dict(orjson.loads(_one_shot(report)))


@settings(max_examples=80, deadline=None)
@given(tables(), st.booleans(), st.integers(1, 4))
def test_json_pieces_are_the_one_shot_dump_and_load_report_gives_the_report_back(
    table: ExampleTable, redact: bool, slice_examples: int
) -> None:
    report = _report(table, redact)
    expected = _one_shot(report)
    assert b"".join(iter_json(report, slice_examples=slice_examples)) == expected
    assert render_json(report).encode() == expected
    back = report_from_dict(orjson.loads(expected))
    if redact:
        assert back == _redacted(report) and _one_shot(back) == expected
    else:
        assert back == report
    assert back.summary() == report.summary()


@settings(max_examples=40, deadline=None)
@given(tables())
def test_a_table_round_trips_through_its_results(table: ExampleTable) -> None:
    again = ExampleTable.from_results(list(table), table.methods)
    assert again == table
    assert list(again) == list(table) and len(again) == len(table)


def _old_key(e: ExampleResult) -> tuple[bool, int, float]:
    """The n-gram ranking contam always had (applied with a stable sort to scorable examples)."""
    return (not e.flagged, -(e.longest_run or 0), -(e.overlap_fraction or 0.0))


@settings(max_examples=50, deadline=None)
@given(tables(max_size=25, ngram=True))
def test_ranking_of_scan_reports_keeps_the_order_of_the_old_sort(table: ExampleTable) -> None:
    table = table.subset(np.arange(len(table)))
    only_ngram = ExampleTable(
        ids=table.ids,
        eval_paths=table.eval_paths,
        eval_lines=table.eval_lines,
        fingerprints=table.fingerprints,
        methods=NGRAM_METHODS,
        scores={m.name: table.scores[m.name] for m in NGRAM_METHODS},
        reasons=table.reasons,
        ngram=table.ngram,
    )
    report = _report(only_ngram)
    expected = sorted((e for e in report.examples if e.scorable), key=_old_key)
    assert report.ranked() == expected


def test_ranking_follows_each_methods_direction() -> None:
    results = [
        ExampleResult(str(i), "e.jsonl", i, f"{i:032x}", {"perplexity": p, "min_k": k})
        for i, (p, k) in enumerate([(50.0, 0.1), (10.0, 0.1), (None, None), (10.0, 0.9)])
    ]
    methods = (Method("perplexity", "probe", "lower"), Method("min_k", "probe", "higher"))
    report = _report(ExampleTable.from_results(results, methods))
    assert [e.id for e in report.ranked()] == ["3", "1", "0"]
    assert [e.id for e in report.unscorable] == ["2"]
    assert report.summary() == {"examples": 4, "flagged": 0, "clean": 3, "unscorable": 1}


@settings(max_examples=25, deadline=None)
@given(tables())
def test_table_is_a_read_only_sequence_of_results(table: ExampleTable) -> None:
    objects = tuple(table)
    n = len(objects)
    assert table[::-1] == objects[::-1] and table[1::2] == objects[1::2]
    if n:
        assert table[-1] == objects[-1] and table[0] == objects[0]
        assert table.take([n - 1, 0, n - 1]) == [objects[-1], objects[0], objects[-1]]
        first = table[0]
        first.per_source["added"] = SourceResult(1, 1.0, 1)
        assert table[0] == objects[0]  # each access builds a fresh result
        assert table.subset([n - 1, 0]) == ExampleTable.from_results(
            [objects[-1], objects[0]], table.methods
        )
    with pytest.raises(IndexError):
        table[n]
    for col in table.scores.values():
        with pytest.raises(ValueError):
            col[:1] = 7


def test_an_empty_report() -> None:
    report = _report(ExampleTable.from_results([], NGRAM_METHODS))
    expected = _one_shot(report)
    assert expected.endswith(b'"examples": []\n}\n')
    assert render_json(report).encode() == expected
    assert report_from_dict(orjson.loads(expected)) == report
    assert report.ranked() == [] and report.flagged == () and not report.contaminated
    assert report.summary() == {"examples": 0, "flagged": 0, "clean": 0, "unscorable": 0}


def test_a_table_refuses_inconsistent_columns() -> None:
    with pytest.raises(ValueError, match="methods"):
        ExampleTable(
            ids=["a"], eval_paths=["e"], eval_lines=[1], fingerprints=["f"],
            methods=(Method("x", "input"),), scores={"y": [1.0]},
        )  # fmt: skip
    with pytest.raises(ValueError, match="duplicate"):
        ExampleTable.from_results([], (Method("x", "input"), Method("x", "probe")))
    with pytest.raises(ValueError):
        Method("x", "input", "sideways")  # type: ignore[arg-type]


def test_columns_orjson_cannot_write_on_one_line_take_the_general_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert persist._scalars([1, None, "a,\n  b", 0.5]) == [b"1", b"null", b'"a,\\n  b"', b"0.5"]
    assert persist._scalars([{"a": 1}, [1, 2]]) is None
    report = scan(["alpha beta gamma delta", "x y"], ["so alpha beta gamma delta"], n=3)
    expected = _one_shot(report)
    monkeypatch.setattr(persist, "_scalars", lambda values: None)
    assert render_json(report).encode() == expected


def test_scan_reports_round_trip_with_evidence_sources_redaction_and_unscorable(
    tmp_path: Path,
) -> None:
    leak = "the planted sentence sits right here in the corpus"
    evals = [leak, "an unrelated example with enough words", "short", "a " + leak[2:] + " too"]
    sources = {"web": ["x " + leak + " y", "other words"], "books": ["sentence sits right here"]}
    policy = FlagPolicy(min_overlap=0.0, thresholds={"books": SourceThreshold(longest_run=3)})
    for redact in (False, True):
        report = scan(evals, sources, n=3, policy=policy, redact=redact)
        path = tmp_path / f"r{redact}.json.gz"
        save_report(report, path)
        assert gzip.decompress(path.read_bytes()) == _one_shot(report)
        assert load_report(path) == report
        data = orjson.loads(_one_shot(report))
        ev = data["examples"][0]["details"]["ngram"]["evidence"]
        assert (ev["text"] is None) == redact
        assert load_report(path).examples[0].evidence.text == (None if redact else leak)


def test_a_hand_built_report_with_several_methods_round_trips(tmp_path: Path) -> None:
    results = [
        ExampleResult(
            "q1", "b.jsonl", 1, fingerprint(b"q1" * 8), {"min_k_plus_plus": 0.5, "perplexity": 9.5},
            reasons=(Reason("combined-zscore", 2.5, 2.0, None, "combined"),),
            details={"probe": {"tokens": 12, "top_k": None}},
        ),
        ExampleResult("q2", "b.jsonl", 2, fingerprint(b"q2" * 8), {"min_k_plus_plus": None}),
    ]  # fmt: skip
    report = Report(
        examples=ExampleTable.from_results(results, PROBE_METHODS),
        config={"model": "ngram-lm:x"},
        command="probe",
    )
    save_report(report, tmp_path / "p.json")
    back = load_report(tmp_path / "p.json")
    assert back == report and back.command == "probe"
    assert back.examples[0].details == {"probe": {"tokens": 12, "top_k": None}}
    assert back.examples[1].scores == {"min_k_plus_plus": None, "perplexity": None}
    assert [e.id for e in back.flagged] == ["q1"] and back.method("perplexity").direction == "lower"


def test_load_report_names_the_file_and_what_is_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    for text, message in (
        ("{", "bad.json:1: invalid JSON"),
        ("[]", "not a contam report"),
        ('{"schema": "other/1"}', "unknown report schema"),
        ('{"schema": "contam.report/2"}', "not a valid contam report"),
    ):
        bad.write_text(text, encoding="utf-8", newline="\n")
        with pytest.raises(Exception, match=message):
            load_report(bad)
    with pytest.raises(Exception, match="no such file|cannot read"):
        load_report(tmp_path / "missing.json")


def test_reports_of_the_first_schema_are_read(tmp_path: Path) -> None:
    report = scan(CD / "derived" / "mixed_examples.jsonl", [CD / "examples" / "corpus"])
    old = _as_scan_v1(orjson.loads(_one_shot(report)))
    (tmp_path / "v1.json").write_bytes(orjson.dumps(old))
    back = load_report(tmp_path / "v1.json")
    assert [(e.id, e.overlap_fraction, e.longest_run, e.flagged) for e in back.examples] == [
        (e.id, e.overlap_fraction, e.longest_run, e.flagged) for e in report.examples
    ]
    assert back.examples[1].evidence == report.examples[1].evidence


def _as_scan_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A report in the layout contam wrote before the report model (contam.scan/1)."""
    examples = []
    for e in data["examples"]:
        ng = e["details"]["ngram"]
        examples.append(
            {
                "id": e["id"], "eval": e["eval"], "flagged": e["flagged"],
                "reasons": [{k: r[k] for k in ("rule", "value", "threshold", "source")}
                            for r in e["reasons"]],
                "scorable": ng["scorable"], "n_tokens": ng["n_tokens"],
                "total_ngrams": ng["total_ngrams"], "matched_ngrams": ng["matched_ngrams"],
                "overlap_fraction": e["scores"]["overlap_fraction"],
                "longest_run": e["scores"]["longest_run"], "zscore": ng["zscore"],
                "best_source": ng["best_source"], "matched_sources": ng["matched_sources"],
                "per_source": ng["per_source"], "evidence": ng["evidence"],
                "fingerprint": e["fingerprint"],
            }
        )  # fmt: skip
    return {
        "schema": "contam.scan/1", "tool": data["tool"], "config": data["config"],
        "inputs": data["inputs"], "summary": data["summary"], "examples": examples,
    }  # fmt: skip


def test_every_rule_that_fires_is_a_reason() -> None:
    evals = ["one two three four five six", "one two three seven", "nine ten eleven twelve", "x"]
    policy = FlagPolicy(
        min_overlap=0.0,
        min_run=5,
        thresholds={
            "a": SourceThreshold(longest_run=4, overlap_fraction=0.5),
            "b": SourceThreshold(longest_run=4),
        },
    )
    report = scan(
        evals,
        {"a": ["one two three four five six"], "b": ["one two three seven"]},
        n=2,
        policy=policy,
    )
    first = report.examples[0]
    assert [(r.rule, r.source) for r in first.reasons] == [
        ("min-overlap", None), ("min-run", None), ("source-run", "a"), ("source-overlap", "a"),
    ]  # fmt: skip
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
    got = round6(np.array(values, dtype=np.float64), mask)
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
            FlagPolicy(min_run=1, zscore=1.0),
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
    for members, found in plain_reasons(policy, plain, overlap, run, z):
        got.update(dict.fromkeys(members, found))
    for e, (ov, rn, ze) in enumerate(rows):
        want = tuple(policy.reasons(overlap=ov, run=rn, z=ze, per_source={}))
        assert got.get(e, ()) == want


def test_batch_fingerprints_match_one_by_one() -> None:
    digests = [bytes([i]) * 16 for i in range(5)] + [b"", b"\0" * 40]
    for source in (None, "", "corpus", "ü"):
        assert fingerprints(digests, source) == [fingerprint(d, source) for d in digests]
    assert fingerprint(digests[0]) != fingerprint(digests[0], "")


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
    assert _one_shot(load_report(out)) == written
    result = CliRunner().invoke(
        app, ["scan", bench, "--corpus", corpus, "--report", str(packed), "--no-fail"]
    )
    assert result.exit_code == 0, result.output
    assert gzip.decompress(packed.read_bytes()) == written


def test_table_renders_every_report(tmp_path: Path) -> None:
    report = scan(CD / "derived" / "mixed_examples.jsonl", [CD / "examples" / "corpus"])
    text = render_table(report)
    assert text.splitlines()[-1] == "4 examples: 2 flagged, 1 clean, 1 unscorable"
