"""build_report (contam report): joins, z-scores, the combined rule, AUCs, weights, deployment,
renames, labels, bad inputs, redaction, and the report's round trip and schema."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import orjson
import pytest
from conftest import CD, FIXTURES, assert_valid_report
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli import scan
from contam_cli.errors import ArgumentError, InputError, UsageError
from contam_cli.features.combine import Rename, build_report, parse_direction
from contam_cli.report import Report, iter_json, load_report, save_report

BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = CD / "examples" / "corpus"


def write_scores(path: Path, column: dict[str, list], ids: list[str] | None = None) -> Path:
    """A JSONL scores file: one record per id, one key per method (None: null)."""
    n = len(next(iter(column.values())))
    ids = ids or [f"e{i}" for i in range(n)]
    rows = [{"id": i, **{k: v[e] for k, v in column.items()}} for e, i in enumerate(ids)]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def write_labels(path: Path, labels: list[int], ids: list[str] | None = None) -> Path:
    ids = ids or [f"e{i}" for i in range(len(labels))]
    path.write_bytes(
        b"".join(orjson.dumps({"id": i, "label": v}) + b"\n" for i, v in zip(ids, labels))
    )
    return path


def combined(report: Report) -> list[float | None]:
    return [e.scores["combined"] for e in report.examples]


def stats(report: Report) -> dict:
    return report.stats["combination"]


@pytest.fixture(scope="module")
def scan_report() -> Report:
    return scan(str(BENCH), str(CORPUS))


# -- z-scores and the combined score -------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([5, 5, 5], [0.0, 0.0, 0.0]),
        ([1, 2, 3], [-1.2247, 0.0, 1.2247]),
        ([1, None, 2, 3], [-1.2247, None, 0.0, 1.2247]),
    ],
)
def test_zscores_through_the_combined_score(tmp_path: Path, values: list, expected: list) -> None:
    report = build_report([write_scores(tmp_path / "s.jsonl", {"m": values})])
    got = combined(report)
    assert [None if v is None else round(v, 4) for v in got] == expected
    assert report.summary()["unscorable"] == expected.count(None)


def test_single_method_flags_on_its_own_zscore(tmp_path: Path) -> None:
    report = build_report([write_scores(tmp_path / "s.jsonl", {"m": [0] * 9 + [10]})])
    flagged = report.flagged
    assert [e.id for e in flagged] == ["e9"]
    (reason,) = flagged[0].reasons
    assert (reason.rule, reason.detector, reason.threshold) == ("combined-zscore", "combined", 2.0)
    assert reason.value == pytest.approx(3.0)


# -- AUC -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "labels", "auc"),
    [
        ([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0], 1.0),
        ([0.5, 0.5, 0.5, 0.5], [1, 1, 0, 0], 0.5),
        ([0.9, 0.8, 0.1, 0.2], [1, 1, 1, 1], None),
    ],
)
def test_auc_through_build_report(
    tmp_path: Path, values: list, labels: list, auc: float | None
) -> None:
    report = build_report(
        [write_scores(tmp_path / "s.jsonl", {"m": values})],
        labels=write_labels(tmp_path / "l.jsonl", labels),
        bootstrap=200,
    )
    for name in ("m", "combined"):
        entry = stats(report)["methods"][name]
        assert entry["auc"] == auc
        if auc is None:
            assert entry["auc_low"] is None and entry["auc_high"] is None
        else:
            assert entry["auc_low"] <= auc <= entry["auc_high"]


def test_perplexity_lower_is_suspicious(tmp_path: Path) -> None:
    scores = write_scores(tmp_path / "s.jsonl", {"ppl": [90, 80, 20, 10]})
    labels = write_labels(tmp_path / "l.jsonl", [0, 0, 1, 1])
    lower = build_report([scores], labels=labels, directions={"ppl": "lower"})
    assert stats(lower)["methods"]["ppl"]["auc"] == 1.0
    assert stats(lower)["methods"]["ppl"]["direction"] == "lower"
    assert (
        build_report([scores], labels=labels).stats["combination"]["methods"]["ppl"]["auc"] == 0.0
    )


# -- weights -------------------------------------------------------------------------------------


def test_weight_by_auc_silences_the_noise(tmp_path: Path) -> None:
    good = [0.1, 0.2, 0.8, 0.9]
    scores = write_scores(tmp_path / "s.jsonl", {"good": good, "noise": good[::-1]})
    labels = write_labels(tmp_path / "l.jsonl", [0, 0, 1, 1])
    equal = build_report([scores], labels=labels)
    assert all(abs(v) < 1e-6 for v in combined(equal))
    assert stats(equal)["methods"]["good"]["weight"] == 0.5
    weighted = build_report([scores], labels=labels, weight_by_auc=True)
    methods = stats(weighted)["methods"]
    assert (methods["good"]["weight"], methods["noise"]["weight"]) == (1.0, 0.0)
    assert combined(weighted) == pytest.approx([-1.1314, -0.8485, 0.8485, 1.1314], abs=1e-4)
    assert any("optimistic" in w for w in weighted.warnings)


def test_weight_by_auc_needs_labels_and_a_method_above_chance(tmp_path: Path) -> None:
    scores = write_scores(tmp_path / "s.jsonl", {"m": [1, 2, 3, 4]})
    with pytest.raises(UsageError, match="--weight-by-auc needs --labels"):
        build_report([scores], weight_by_auc=True)
    labels = write_labels(tmp_path / "l.jsonl", [1, 1, 0, 0])
    with pytest.raises(UsageError, match="better than chance"):
        build_report([scores], labels=labels, weight_by_auc=True)


# -- deployment: precision at prevalence and the review queue ------------------------------------


def _deployment(tmp_path: Path, pos: tuple[int, int], neg: tuple[int, int], **kw: float) -> dict:
    """A method that flags (value 1 against 0) `pos[0]` of `pos[1]` positives and `neg[0]` of
    `neg[1]` negatives at threshold 0.5; the deployment rows of its report."""
    values = [1] * pos[0] + [0] * (pos[1] - pos[0]) + [1] * neg[0] + [0] * (neg[1] - neg[0])
    labels = [1] * pos[1] + [0] * neg[1]
    if len(set(values)) == 1:
        values = [0] * len(values)
    report = build_report(
        [write_scores(tmp_path / "s.jsonl", {"m": values})],
        labels=write_labels(tmp_path / "l.jsonl", labels),
        threshold=0.5,
        bootstrap=10,
        **kw,
    )
    rows = {r["method"]: r for r in stats(report)["deployment"]["rows"]}
    assert rows["m"] == rows["combined"] | {"method": "m"}
    return {"report": report, **rows["m"]}


def test_precision_at_prevalence_and_review_queue(tmp_path: Path) -> None:
    row = _deployment(tmp_path, (189, 200), (457, 1000), prevalence=0.01, documents=10_000)
    assert (row["recall"], row["fpr"]) == pytest.approx((0.945, 0.457))
    assert row["precision"] == pytest.approx(0.0204599, abs=1e-6)
    got = [row[k] for k in ("flagged", "true", "false", "missed")]
    assert got == pytest.approx([4618.8, 94.5, 4524.3, 5.5], abs=1e-6)
    deployment = stats(row["report"])["deployment"]
    assert (deployment["prevalence"], deployment["documents"]) == (0.01, 10_000)


def test_precision_one_and_null(tmp_path: Path) -> None:
    assert _deployment(tmp_path, (2, 5), (0, 10), prevalence=0.01)["precision"] == 1.0
    row = _deployment(tmp_path, (0, 5), (0, 10), prevalence=0.01)
    assert (row["recall"], row["fpr"], row["precision"]) == (0.0, 0.0, None)


def test_documents_default_to_the_examples(tmp_path: Path) -> None:
    row = _deployment(tmp_path, (2, 5), (0, 10), prevalence=0.5)
    assert stats(row["report"])["deployment"]["documents"] == 15


@pytest.mark.parametrize("prevalence", [1.5, -0.1])
def test_prevalence_out_of_range(tmp_path: Path, prevalence: float) -> None:
    scores = write_scores(tmp_path / "s.jsonl", {"m": [1, 2]})
    labels = write_labels(tmp_path / "l.jsonl", [1, 0])
    with pytest.raises(ArgumentError, match="prevalence"):
        build_report([scores], labels=labels, prevalence=prevalence)


def test_prevalence_and_documents_need_their_companions(tmp_path: Path) -> None:
    scores = write_scores(tmp_path / "s.jsonl", {"m": [1, 2]})
    with pytest.raises(UsageError, match="--prevalence needs --labels"):
        build_report([scores], prevalence=0.1)
    with pytest.raises(UsageError, match="--documents needs --prevalence"):
        build_report([scores], documents=10)


# -- joining inputs ------------------------------------------------------------------------------


def test_join_with_missing_ids_is_null_never_zero(tmp_path: Path, scan_report: Report) -> None:
    scores = write_scores(tmp_path / "s.jsonl", {"mink": [0.9, 0.1, 0.2]}, ["q1", "q3", "x9"])
    report = build_report([scan_report, scores])
    by_id = {e.id: e for e in report.examples}
    assert list(by_id) == ["q1", "q2", "q3", "q4", "q5", "x9"]
    assert by_id["q2"].scores["mink"] is None
    assert by_id["x9"].scores["longest_run"] is None
    assert by_id["x9"].scores["overlap_fraction"] is None
    assert by_id["x9"].eval_path == str(scores) and by_id["x9"].eval_line == 3
    assert by_id["q2"].details["combined"]["missing_from"] == [str(scores)]
    assert by_id["x9"].details["combined"]["missing_from"] == ["<input 1>"]
    inputs = stats(report)["inputs"]
    assert [(i["examples"], i["missing"]) for i in inputs] == [(5, 1), (3, 3)]
    methods = stats(report)["methods"]
    assert (methods["mink"]["scored"], methods["mink"]["missing"]) == (3, 3)
    assert (methods["longest_run"]["scored"], methods["longest_run"]["missing"]) == (5, 1)
    # Evidence and the fingerprint come from the scan.
    assert by_id["q1"].evidence is not None and by_id["q1"].evidence.length == 23
    assert by_id["q1"].fingerprint == scan_report.examples[0].fingerprint


def test_what_an_input_flagged_stays_flagged_with_its_reasons(
    tmp_path: Path, scan_report: Report
) -> None:
    scores = write_scores(
        tmp_path / "s.jsonl", {"m": [1, 1, 0, 0, 0]}, ["q1", "q2", "q3", "q4", "q5"]
    )
    report = build_report([scan_report, scores])
    # NOTE: z of 2 leaks among 5 is 1.22 < 2: the combined rule alone would pass them.
    assert [e.id for e in report.flagged] == ["q1", "q2"]
    assert [[r.rule for r in e.reasons] for e in report.flagged] == [["min-overlap"]] * 2
    assert report.examples[0].reasons == scan_report.examples[0].reasons
    assert report.config["input_rules"] is True and not report.warnings
    q1 = report.examples[0]
    assert [r["rule"] for r in q1.details["combined"]["input_reasons"]] == ["min-overlap"]
    assert q1.details["combined"]["input_reasons"][0]["input"] == "<input 1>"
    low = build_report([scan_report, scores], threshold=1.0)
    assert [[r.rule for r in e.reasons] for e in low.flagged] == [
        ["combined-zscore", "min-overlap"]
    ] * 2
    # The combined rule's own figures do not move with the inputs' flags.
    assert (
        report.stats["combination"]["methods"]
        == build_report([scan_report, scores], input_rules=False).stats["combination"]["methods"]
    )


def test_combined_only_flags_on_the_combined_rule_and_names_what_it_drops(
    tmp_path: Path, scan_report: Report
) -> None:
    scores = write_scores(
        tmp_path / "s.jsonl", {"m": [1, 1, 0, 0, 0]}, ["q1", "q2", "q3", "q4", "q5"]
    )
    report = build_report([scan_report, scores], input_rules=False)
    assert not report.contaminated and report.config["input_rules"] is False
    assert any("q1, q2" in w and "not flagged by the combined rule" in w for w in report.warnings)
    low = build_report([scan_report, scores], threshold=1.0, input_rules=False)
    assert [e.id for e in low.flagged] == ["q1", "q2"]
    assert {r.rule for e in low.flagged for r in e.reasons} == {"combined-zscore"}


@settings(max_examples=40, deadline=None)
@given(
    a=st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6)), min_size=1, max_size=12),
    b=st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6)), min_size=1, max_size=12),
    shift=st.integers(0, 6),
)
def test_join_keeps_every_score_and_combines_the_present_ones(
    tmp_path_factory: pytest.TempPathFactory, a: list, b: list, shift: int
) -> None:
    from contam_cli.stats import zscores

    d = tmp_path_factory.mktemp("join")
    ids_b = [f"e{i + shift}" for i in range(len(b))]
    report = build_report(
        [write_scores(d / "a.jsonl", {"a": a}), write_scores(d / "b.jsonl", {"b": b}, ids_b)]
    )
    table = report.examples
    index = {i: e for e, i in enumerate(table.ids)}
    got_a, got_b = table.scores["a"], table.scores["b"]
    for e, v in enumerate(a):
        assert math.isnan(got_a[index[f"e{e}"]]) if v is None else got_a[index[f"e{e}"]] == v
    for i, v in zip(ids_b, b):
        assert math.isnan(got_b[index[i]]) if v is None else got_b[index[i]] == v
    absent = [e for e, i in enumerate(table.ids) if i not in ids_b]
    assert np.isnan(got_b[absent]).all()
    z = np.vstack([zscores(got_a), zscores(got_b)])
    count = (~np.isnan(z)).sum(axis=0)
    total = np.where(np.isnan(z), 0.0, z).sum(axis=0)
    expected = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    got = table.scores["combined"]
    assert np.allclose(got, expected, equal_nan=True, atol=2e-6)


# -- method names --------------------------------------------------------------------------------


def test_duplicate_method_names_refused_unless_renamed(tmp_path: Path) -> None:
    a = write_scores(tmp_path / "a.jsonl", {"m": [1, 2, 3]})
    b = write_scores(tmp_path / "b.jsonl", {"m": [3, 2, 1]})
    with pytest.raises(UsageError, match=r"'m' is in both .*a\.jsonl and .*b\.jsonl"):
        build_report([a, b])
    for spec in ("2:m=m_b", f"{b}:m=m_b", "b.jsonl:m=m_b"):
        report = build_report([a, b], method_names=[spec])
        assert [m.name for m in report.methods] == ["combined", "m", "m_b"]
        assert report.examples[0].scores["m_b"] == 3.0
    with pytest.raises(UsageError, match="no input matches"):
        build_report([a, b], method_names=["3:m=x"])
    with pytest.raises(UsageError, match="has no method 'z'"):
        build_report([a, b], method_names=["2:z=x"])
    with pytest.raises(UsageError, match="more than one input"):
        build_report([a, b], method_names=["m=x"])


def test_rename_and_direction_specs() -> None:
    assert Rename.parse("dir/a:b.jsonl:m=n") == Rename("dir/a:b.jsonl", "m", "n")
    assert parse_direction("ppl=LOWER") == ("ppl", "lower")
    for bad in ("m", "=x", ":m=x", "m="):
        with pytest.raises(UsageError):
            Rename.parse(bad)
    with pytest.raises(UsageError):
        parse_direction("ppl=down")


def test_direction_for_an_unknown_method(tmp_path: Path) -> None:
    scores = write_scores(tmp_path / "s.jsonl", {"m": [1, 2]})
    with pytest.raises(UsageError, match="no such method"):
        build_report([scores], directions={"ppl": "lower"})


def test_a_method_named_combined_must_be_renamed(tmp_path: Path) -> None:
    scores = write_scores(tmp_path / "s.jsonl", {"combined": [1, 2]})
    with pytest.raises(UsageError, match="combined"):
        build_report([scores])
    report = build_report([scores], method_names=["combined=old"])
    assert [m.name for m in report.methods] == ["combined", "old"]


# -- labels --------------------------------------------------------------------------------------


def test_labels_in_no_input_are_counted_and_listed(tmp_path: Path) -> None:
    scores = write_scores(tmp_path / "s.jsonl", {"m": [1, 2, 3, 4]})
    ids = ["e0", "e1", "e2", *(f"u{i}" for i in range(25))]
    labels = write_labels(tmp_path / "l.jsonl", [1, 0, 0, *([1] * 25)], ids)
    report = build_report([scores], labels=labels, bootstrap=10)
    got = stats(report)["labels"]
    assert (got["positives"], got["negatives"], got["unlabelled"]) == (1, 2, 1)
    assert got["not_in_inputs"] == [f"u{i}" for i in range(20)]
    assert got["not_in_inputs_count"] == 25
    assert [e.details.get("label") for e in report.examples] == [
        {"label": 1},
        {"label": 0},
        {"label": 0},
        None,
    ]
    assert any(
        "25 labelled id(s) are in no input" in w and "and 5 more" in w for w in report.warnings
    )


def test_label_spellings_and_csv(tmp_path: Path) -> None:
    scores = write_scores(tmp_path / "s.jsonl", {"m": [1, 2, 3, 4]})
    labels = tmp_path / "l.jsonl"
    labels.write_text(
        '{"id": "e0", "contaminated": true}\n{"id": "e1", "leaked": "false"}\n'
        '{"id": "e2", "label": 0}\n',
        encoding="utf-8",
        newline="\n",
    )
    assert stats(build_report([scores], labels=labels, bootstrap=5))["labels"]["positives"] == 1
    csv = tmp_path / "l.csv"
    csv.write_text("id,label\ne0,1\ne1,TRUE\ne2,0\n", encoding="utf-8", newline="\n")
    assert stats(build_report([scores], labels=csv, bootstrap=5))["labels"]["positives"] == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"id": "e0", "label": 2}\n', r"l\.jsonl:1: label 2 is not 0/1"),
        ('{"id": "e0"}\n', r"l\.jsonl:1: none of the label keys"),
        (
            '{"id": "e0", "label": 1}\n\n{"id": "e0", "label": 0}\n',
            r"l\.jsonl:3: duplicate id 'e0' \(first on line 1\)",
        ),
    ],
)
def test_bad_labels(tmp_path: Path, text: str, message: str) -> None:
    scores = write_scores(tmp_path / "s.jsonl", {"m": [1, 2]})
    labels = tmp_path / "l.jsonl"
    labels.write_text(text, encoding="utf-8", newline="\n")
    with pytest.raises(InputError, match=message):
        build_report([scores], labels=labels)


# -- bad inputs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "s.jsonl",
            '{"id": "a", "m": 1}\n{"id": "b", "m": "high"}\n',
            r"s\.jsonl:2: score 'm' is 'high'",
        ),
        (
            "s.jsonl",
            '{"id": "a", "m": 1}\n{"id": "b", "m": true}\n',
            r"s\.jsonl:2: score 'm' is a boolean",
        ),
        ("s.jsonl", '{"id": "a", "m": [1]}\n', r"s\.jsonl:1: score 'm' is list"),
        (
            "s.jsonl",
            '{"id": "a", "m": 1}\n{"id": "a", "m": 2}\n',
            r"s\.jsonl:2: duplicate id 'a' \(first on line 1\)",
        ),
        ("s.jsonl", '{"m": 1}\n', r's\.jsonl:1: no "id"'),
        ("s.jsonl", '{"id": "a", "m": 1}\n{"id": "b", "m": 1\n', r"s\.jsonl:2: invalid JSON"),
        ("s.jsonl", "", r"s\.jsonl: no scores in this file"),
        ("s.json", '{\n  "name": "not a report"\n}\n', r"s\.json: neither a contam report"),
        (
            "s.json",
            '{\n  "schema": "contam.report/2",\n  "methods": [\n',
            r"s\.json:4: invalid JSON report",
        ),
        ("s.json", '{"schema": "contam.report/9"}', r"unknown report schema"),
        ("s.csv", "id,m\na,1\nb,x\n", r"s\.csv:3: score 'm' is 'x'"),
        ("s.csv", "id,m\na,1\na,2\n", r"s\.csv:3: duplicate id 'a' \(first on line 2\)"),
        ("s.csv", 'id,m\n"a\nb",1\nc,inf\n', r"s\.csv:4: score 'm' is inf"),
        ("s.csv", "id,m\na,1,2\n", r"s\.csv:2: 3 cells, but the header has 2"),
    ],
)
def test_bad_inputs_name_file_and_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="\n")
    with pytest.raises(InputError, match=message):
        build_report([path])


def test_csv_scores_with_nulls(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_text("id,a,b\nx,1,\ny,2,NA\nz,3,0.5\n", encoding="utf-8", newline="\n")
    report = build_report([path])
    assert [e.scores["b"] for e in report.examples] == [None, None, 0.5]
    assert [m.detector for m in report.methods] == ["combined", "input", "input"]


def test_no_inputs_and_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no input"):
        build_report([])
    with pytest.raises(ArgumentError):
        build_report("scan.json")  # type: ignore[arg-type]
    scores = write_scores(tmp_path / "s.jsonl", {"m": [1, 2]})
    with pytest.raises(ArgumentError, match="threshold"):
        build_report([scores], threshold=math.nan)
    with pytest.raises(ArgumentError, match="bootstrap"):
        build_report([scores], bootstrap=0)


# -- the report ----------------------------------------------------------------------------------


def test_round_trip_schema_and_determinism(tmp_path: Path, scan_report: Report) -> None:
    kw = {
        "labels": FIXTURES / "report" / "labels.jsonl",
        "directions": {"perplexity": "lower"},
        "prevalence": 0.01,
        "documents": 10_000,
        "bootstrap": 100,
    }
    report = build_report([scan_report, FIXTURES / "report" / "scores.jsonl"], **kw)
    path = tmp_path / "combined.json"
    save_report(report, path)
    data = path.read_bytes()
    assert load_report(path) == report
    doc = assert_valid_report(data)
    assert doc["command"] == "report"
    assert set(doc["summary"]["combination"]) == {
        "threshold",
        "weight_by_auc",
        "input_rules",
        "inputs",
        "methods",
        "labels",
        "deployment",
    }
    again = build_report([scan_report, FIXTURES / "report" / "scores.jsonl"], **kw)
    assert b"".join(iter_json(again)) == data
    # A combined report is itself an input (its combined score renamed).
    nested = build_report([path], method_names=["combined=first"])
    assert nested.examples[0].scores["first"] == report.examples[0].scores["combined"]


def test_redact_drops_every_text(tmp_path: Path, scan_report: Report) -> None:
    from dataclasses import replace

    from contam_cli.engine.options import ScanOptions
    from contam_cli.features.eval_texts import attach_eval_texts

    with_texts = attach_eval_texts(scan_report, str(BENCH), ScanOptions())
    assert with_texts.examples.texts
    scores = FIXTURES / "report" / "scores.jsonl"
    plain = build_report([with_texts, scores])
    assert "Canberra" in b"".join(iter_json(plain)).decode()
    for report in (
        build_report([with_texts, scores], redact=True),
        build_report([replace(with_texts, redact=True), scores]),
    ):
        assert report.redact and not report.examples.texts
        assert all(ev.text is None for ev in report.examples.ngram.evidence.values())
        assert "Canberra" not in b"".join(iter_json(report)).decode()


def test_redact_drops_texts_other_detectors_quote() -> None:
    from contam_cli.report import ExampleTable, Method

    guided = {"guided": {"precision": 1.0, "recall": 0.9, "completion": "Canberra was built"}}
    probe = Report(
        examples=ExampleTable(
            ids=["q1", "q2"],
            eval_paths=["e.jsonl"] * 2,
            eval_lines=[1, 2],
            fingerprints=["0" * 32] * 2,
            methods=(Method("guided_f1", "probe", "higher"),),
            scores={"guided_f1": [0.9, 0.1]},
            details={"probe": {0: guided}},
        ),
        command="probe",
    )
    kept = build_report([probe])
    assert kept.examples[0].details["probe"] == guided
    gone = build_report([probe], redact=True)
    assert gone.examples[0].details["probe"]["guided"] == {**guided["guided"], "completion": None}
    assert "Canberra" not in b"".join(iter_json(gone)).decode()


def test_a_control_percentile_gets_no_vote_of_its_own(tmp_path: Path) -> None:
    # NOTE: a probe run with --controls gives each method X a column X:control_pct, X's rank
    # among the controls: counted as a method, it gave X a second, equal vote.
    x = [0.1, 0.9, 0.4, 0.2, 0.7]
    pct = [10.0, 99.0, 60.0, 20.0, 95.0]
    other = [3.0, 1.0, 2.0, 5.0, 4.0]
    scores = write_scores(tmp_path / "s.jsonl", {"x": x, "x:control_pct": pct, "other": other})
    labels = write_labels(tmp_path / "l.jsonl", [0, 1, 0, 0, 1])
    report = build_report([scores], labels=labels, bootstrap=10)
    methods = report.stats["combination"]["methods"]
    assert {k: v["weight"] for k, v in methods.items() if k != "combined"} == {
        "x": 0.5,
        "x:control_pct": 0.0,
        "other": 0.5,
    }
    assert methods["x:control_pct"]["auc"] == methods["x"]["auc"] == 1.0  # still measured
    without = build_report([write_scores(tmp_path / "t.jsonl", {"x": x, "other": other})])
    assert (
        report.examples.scores["combined"].tolist() == without.examples.scores["combined"].tolist()
    )
    by_auc = build_report([scores], labels=labels, weight_by_auc=True, bootstrap=10)
    assert by_auc.stats["combination"]["methods"]["x:control_pct"]["weight"] == 0.0


def test_a_method_of_one_value_is_named_in_a_warning(tmp_path: Path) -> None:
    scores = write_scores(tmp_path / "s.jsonl", {"flat": [0, 0, 0, 0], "m": [1, 2, 3, 9]})
    report = build_report([scores])
    assert any("method 'flat' gave every example the same score (0)" in w for w in report.warnings)
    assert not any("'m'" in w for w in report.warnings)
    labels = write_labels(tmp_path / "l.jsonl", [0, 0, 0, 1])
    weighed = build_report([scores], labels=labels, weight_by_auc=True, bootstrap=10)
    assert not any("same score" in w for w in weighed.warnings)  # its AUC 0.5 gives it weight 0
