"""contam impact, the library: clean versus full scores with intervals, matching, results files."""

from __future__ import annotations

import csv
import doctest
import importlib
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli import scan
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import ArgumentError, InputError, UsageError
from contam_cli.features.combine import build_report
from contam_cli.features.impact import Impact, Level, impact, parse_levels
from contam_cli.features.impact.matching import text_fingerprints
from contam_cli.report import NGRAM_METHODS, ExampleTable, NgramColumns, Reason, Report
from contam_cli.text import NormConfig
from contam_cli.text.fingerprint import text_fingerprint

MODULES = ["values", "levels", "results", "matching", "compute"]
NORMAL_WIDTH = 2 * 1.96 * math.sqrt(0.25 / 80)  # 0.219
OVERLAP = Reason("min-overlap", 0.9, 0.5)


def report_of(
    n: int,
    reasons: Mapping[int, Sequence[Reason]],
    *,
    overlap: Sequence[float] | None = None,
    run: Sequence[float] | None = None,
    best: Mapping[int, str] | None = None,
    ids: Sequence[str] | None = None,
    lines: Sequence[int | None] | None = None,
) -> Report:
    """A hand-made n-gram report; NaN in ``overlap`` makes an example unscorable."""
    ov = np.array(
        overlap if overlap is not None else [0.9 if e in reasons else 0.0 for e in range(n)]
    )
    rn = np.array(run if run is not None else np.where(np.isnan(ov), np.nan, ov * 40))
    table = ExampleTable(
        ids=list(ids) if ids is not None else [str(e) for e in range(n)],
        eval_paths=["eval.jsonl"] * n,
        eval_lines=list(lines) if lines is not None else [None] * n,
        fingerprints=[f"{e:032x}" for e in range(n)],
        methods=NGRAM_METHODS,
        scores={"longest_run": rn, "overlap_fraction": ov},
        reasons=reasons,
        ngram=NgramColumns.build(
            scorable=~np.isnan(ov),
            n_tokens=[40] * n,
            total_ngrams=[28] * n,
            matched_ngrams=np.nan_to_num(ov * 28).astype(int),
            zscore=[0.0] * n,
            best_source=best or {},
        ),
    )
    return Report(table)


def records(values: Sequence[float], ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    names = ids if ids is not None else [str(i) for i in range(len(values))]
    return [{"id": k, "correct": v} for k, v in zip(names, values)]


# 100 examples: 20 flagged, all correct; 80 clean, 40 of them correct.
CORRECT = [1.0] * 60 + [0.0] * 40
EXAMPLE = report_of(100, dict.fromkeys(range(20), (OVERLAP,)))


def test_doctests() -> None:
    for name in MODULES:
        module = importlib.import_module(f"contam_cli.features.impact.{name}")
        result = doctest.testmod(module)
        assert result.failed == 0, name


def test_acceptance_numbers_of_the_example() -> None:
    result = impact(EXAMPLE, records(CORRECT), levels="none")
    s = result.overall
    assert (s.full.n, s.clean.n, s.flagged.n, s.unscorable.n) == (100, 80, 20, 0)
    assert (s.full.value, s.clean.value, s.flagged.value) == pytest.approx((0.60, 0.50, 1.00))
    assert s.full_minus_clean.value == pytest.approx(0.10)
    assert s.flagged_minus_clean.value == pytest.approx(0.50)
    assert s.clean.interval is not None
    low, high = s.clean.interval
    assert low < 0.5 < high
    assert abs((high - low) - NORMAL_WIDTH) <= 0.1 * NORMAL_WIDTH
    assert s.full_minus_clean.interval is not None
    assert 0.0 < s.full_minus_clean.interval[0] < 0.1 < s.full_minus_clean.interval[1]
    assert s.p_value == pytest.approx(1 / 10_001)  # no relabelling reaches 20 of 20 correct
    assert result.score_field == "correct" and result.metric == "accuracy"


def test_same_seed_same_intervals() -> None:
    def run(seed: int) -> Impact:
        return impact(EXAMPLE, records(CORRECT), bootstrap=2000, seed=seed)

    assert run(3) == run(3)
    assert run(3).overall != run(4).overall  # (80 values: one interval alone may coincide)


def test_no_difference_gives_a_calibrated_permutation_p_value() -> None:
    reasons = dict.fromkeys(range(20), (OVERLAP,))
    report = report_of(100, reasons)
    above = 0
    for trial in range(100):
        outcomes = (np.random.default_rng(5000 + trial).random(100) < 0.5).astype(float)
        result = impact(report, records(outcomes.tolist()), bootstrap=500, seed=trial, levels=())
        p = result.overall.p_value
        assert p is not None and 1 / 501 <= p <= 1.0
        above += p > 0.05
    assert above >= 90


def test_unscorable_examples_are_neither_clean_nor_flagged() -> None:
    overlap = [0.9, 0.9, 0.0, 0.0, 0.0, math.nan, math.nan]
    report = report_of(7, {0: (OVERLAP,), 1: (OVERLAP,)}, overlap=overlap)
    result = impact(report, records([1, 1, 0, 1, 0, 1, 1]), levels="overlap>=0.5")
    for s in (result.overall, result.levels[0].split):
        assert (s.full.n, s.flagged.n, s.clean.n, s.unscorable.n) == (7, 2, 3, 2)
        assert s.clean.value == pytest.approx(1 / 3) and s.unscorable.value == 1.0
        assert s.full.value == pytest.approx(5 / 7)


def test_missing_ids_both_ways_are_counted_and_listed() -> None:
    report = report_of(6, {0: (OVERLAP,)})
    rows = records([1, 0, 1, 1], ids=["0", "1", "2", "zz"])
    result = impact(report, rows, levels=())
    m = result.matching
    assert (m.report_examples, m.results_records, m.matched) == (6, 4, 3)
    assert m.report_only == ("3", "4", "5") and m.results_only == ("zz",)
    assert result.overall.full.n == 3


def test_no_overlap_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no id of the results is in the report.*--match"):
        impact(report_of(3, {}), records([1, 0], ids=["a", "b"]))


def test_duplicate_result_ids_name_both_lines(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", records([1, 0, 1], ids=["0", "1", "0"]))
    with pytest.raises(InputError, match=r"r\.jsonl:3: duplicate id '0' \(first at line 1\)"):
        impact(report_of(3, {}), path)


def write_jsonl(path: Path, rows: Sequence[Mapping[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_csv_and_jsonl_results_agree(tmp_path: Path) -> None:
    ids = [str(i) for i in range(100)]
    jsonl = write_jsonl(tmp_path / "r.jsonl", records(CORRECT, ids))
    as_csv = write_csv(
        tmp_path / "r.csv", ["id", "correct"], [[i, int(v)] for i, v in zip(ids, CORRECT)]
    )
    a, b = impact(EXAMPLE, jsonl, bootstrap=500), impact(EXAMPLE, as_csv, bootstrap=500)
    assert a.overall == b.overall and a.levels == b.levels
    assert (a.results_path, b.results_path) == (str(jsonl), str(as_csv))


@pytest.mark.parametrize(
    "name, content, message",
    [
        pytest.param(
            "r.jsonl",
            b'{"id": "0", "acc": 1}\n{"id": "1", "acc": \n',
            "r.jsonl:2: invalid JSON",
            id="json",
        ),
        pytest.param(
            "r.jsonl",
            b'{"id": "0", "acc": 1}\n\n[1, 2]\n',
            "r.jsonl:3: a results record must be",
            id="array",
        ),
        pytest.param(
            "r.jsonl",
            b'{"id": "0", "acc": 1}\n{"id": "1", "ok": 1}\n',
            "r.jsonl:2: no field 'acc'",
            id="field",
        ),
        pytest.param(
            "r.jsonl",
            b'{"id": "0", "acc": 0.5}\n',
            "r.jsonl:1: 'acc' is 0.5, but --metric accuracy",
            id="not 0/1",
        ),
        pytest.param(
            "r.jsonl", b'{"id": "0", "acc": null}\n', "r.jsonl:1: 'acc' is null", id="null"
        ),
        pytest.param("r.jsonl", b'{"acc": 1}\n', "r.jsonl:1: no id", id="no id"),
        pytest.param(
            "r.jsonl", b'{"id": "0", "pass": 1}\n', "r.jsonl:1: no outcome field", id="no outcome"
        ),
        pytest.param(
            "r.jsonl", b'{"id": "0", "acc": 1}\n\xff\n', "r.jsonl:2: invalid UTF-8", id="utf-8"
        ),
        pytest.param(
            "r.csv",
            b"id,acc\n0,1\n1,1,0\n",
            "r.csv:3: 3 fields, but the header has 2",
            id="csv fields",
        ),
        pytest.param("r.csv", b'id,acc\n0,1\n"1,1\n', "r.csv:3: invalid CSV", id="csv quote"),
        pytest.param("r.csv", b"id,acc\n0,1\n1,yes\n", "r.csv:3: 'acc' is 'yes'", id="csv value"),
        pytest.param(
            "r.csv",
            b"id,id\n0,1\n",
            "r.csv:1: the header names the column 'id' twice",
            id="csv header",
        ),
        pytest.param("r.csv", b"id,acc\n0,1\n\xfe\n", "r.csv:3: invalid UTF-8", id="csv utf-8"),
        pytest.param("r.csv", b"id,acc\n", "r.csv: no results records", id="empty"),
        pytest.param("r.tsv", b"id\tacc\n", "r.tsv: unknown results format", id="suffix"),
    ],
)
def test_a_bad_results_file_names_its_file_and_line(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        impact(report_of(3, {}), path)
    text = str(info.value)
    assert text.startswith(str(tmp_path)) and "\n" not in text
    assert message in text


def test_outcome_fields_are_found_in_order_or_named(tmp_path: Path) -> None:
    rows = [{"id": str(i), "score": 0.25 * i, "exact_match": i % 2, "f1": 0.5} for i in range(4)]
    report = report_of(4, {0: (OVERLAP,)})
    assert impact(report, rows, levels=()).score_field == "exact_match"
    graded = impact(report, rows, metric="mean", score_field="score", levels=())
    assert graded.overall.full.value == pytest.approx(0.375)
    assert impact(report, rows, metric="mean", score_field="f1", levels=()).score_field == "f1"
    with pytest.raises(InputError, match="'score' is 0.25, but --metric accuracy"):
        impact(report, rows, score_field="score")


def test_id_field_and_csv_booleans(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "r.csv", ["name", "ok"], [["q0", "true"], ["q1", "False"]])
    report = report_of(2, {}, ids=["q0", "q1"])
    result = impact(report, path, id_field="name", score_field="ok", levels=())
    assert result.overall.full.value == 0.5


# -- lm-evaluation-harness --log_samples ----------------------------------------------------

QUESTIONS = [
    "Which planet of the solar system has the most known moons in orbit today?",
    "What is the boiling point of pure water at sea level in degrees Celsius?",
    "Who painted the ceiling of the Sistine Chapel between 1508 and 1512?",
    "How many sides does a regular dodecagon have, counting each edge once?",
    "Which element has the chemical symbol Fe on the periodic table of elements?",
    "In which year did the first crewed landing on the Moon take place?",
    "What is the longest river in South America by total length in kilometres?",
    "Which composer wrote the opera The Magic Flute near the end of his life?",
]
LEAKED = {1, 4, 6}


def lm_eval_rows(
    correct: Sequence[int], filters: Sequence[str] = ("none",)
) -> list[dict[str, Any]]:
    """Rows as lm-evaluation-harness --log_samples writes them for a generative task."""
    rows = []
    for doc_id, (question, ok) in enumerate(zip(QUESTIONS, correct)):
        for name in filters:
            doc = {"question": question, "answer": "Saturn"}
            rows.append(
                {
                    "doc_id": doc_id,
                    "doc": doc,
                    "target": "Saturn",
                    "arguments": {"gen_args_0": {"arg_0": f"Q: {question}\nA:", "arg_1": {}}},
                    "resps": [["Saturn" if ok else "Jupiter"]],
                    "filtered_resps": ["Saturn" if ok else "Jupiter"],
                    "filter": name,
                    "metrics": ["exact_match"],
                    "doc_hash": "0" * 64,
                    "prompt_hash": "1" * 64,
                    "target_hash": "2" * 64,
                    "exact_match": float(ok),
                }
            )
    return rows


@pytest.fixture(scope="module")
def scanned() -> Report:
    corpus = [f"crawl page. {QUESTIONS[e]} more text follows here." for e in sorted(LEAKED)]
    report = scan(QUESTIONS, corpus, n=8)
    assert report.examples.flagged.nonzero()[0].tolist() == sorted(LEAKED)
    return report


CORRECT_LM = [1 if e in LEAKED else e % 2 for e in range(len(QUESTIONS))]


@pytest.mark.parametrize("match", ["id", "fingerprint"])
def test_lm_eval_log_samples_by_id_and_by_fingerprint(
    scanned: Report, tmp_path: Path, match: str
) -> None:
    path = write_jsonl(
        tmp_path / "samples_quiz_2024-01-01T00-00-00.jsonl", lm_eval_rows(CORRECT_LM)
    )
    # NOTE: the scan read bare questions; lm-eval's doc holds question and answer, so matching by
    # fingerprint names the text field the scan read.
    fields = ["question"] if match == "fingerprint" else []
    result = impact(scanned, path, match=match, text_fields=fields, bootstrap=500)  # type: ignore[arg-type]
    assert result.matching.matched == 8 and not result.matching.report_only
    assert result.score_field == "exact_match" and result.lm_eval_filter == "none"
    assert (result.overall.flagged.n, result.overall.flagged.value) == (3, 1.0)
    assert result.overall.clean.value == pytest.approx(3 / 5)  # clean 0, 2, 3, 5, 7


def test_fingerprint_matching_needs_the_scanned_text(scanned: Report, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", lm_eval_rows(CORRECT_LM))
    with pytest.raises(UsageError, match="no record of .* has the text of a report example"):
        impact(scanned, path, match="fingerprint")


def test_fingerprints_of_a_combined_report_keep_the_scans_normalization(tmp_path: Path) -> None:
    # NOTE: contam report recorded no normalization, so the texts were hashed casefolded: the
    # examples in capitals of a --no-casefold scan were unmatched (4 of 8).
    questions = [q.upper() if e % 2 else q for e, q in enumerate(QUESTIONS)]
    corpus = [f"crawl page. {questions[e]} more text follows here." for e in sorted(LEAKED)]
    options = ScanOptions(n=8, norm=NormConfig(casefold=False))
    scanned = scan(questions, corpus, options=options)
    combined = build_report([scanned])
    assert combined.config["normalization"] == scanned.config["normalization"]
    rows = lm_eval_rows(CORRECT_LM)
    for row, question in zip(rows, questions):
        row["doc"]["question"] = question
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    result = impact(combined, path, match="fingerprint", text_fields=["question"], bootstrap=200)
    assert result.matching.matched == 8 and not result.matching.results_only
    assert (result.overall.flagged.n, result.overall.flagged.value) == (3, 1.0)


def test_lm_eval_filters_are_chosen_not_mixed(scanned: Report, tmp_path: Path) -> None:
    rows = lm_eval_rows(CORRECT_LM, filters=("strict-match", "flexible-extract"))
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    with pytest.raises(UsageError, match="2 lm-eval filters.*--filter flexible-extract"):
        impact(scanned, path)
    result = impact(scanned, path, lm_filter="strict-match", bootstrap=200)
    assert result.matching.results_records == 8 and result.lm_eval_filter == "strict-match"
    with pytest.raises(UsageError, match="no record of the lm-eval filter 'x'.*'strict-match'"):
        impact(scanned, path, lm_filter="x")


def test_metrics_list_names_the_outcome_field(scanned: Report) -> None:
    rows = [
        {"doc_id": r["doc_id"], "doc": r["doc"], "metrics": ["pass@1"], "pass@1": r["exact_match"]}
        for r in lm_eval_rows(CORRECT_LM)
    ]
    assert impact(scanned, rows, bootstrap=200).score_field == "pass@1"


def test_lm_eval_doc_ids_never_meet_line_numbers(tmp_path: Path) -> None:
    report = report_of(8, {1: (OVERLAP,)}, ids=[str(k) for k in range(1, 9)], lines=range(1, 9))
    path = write_jsonl(tmp_path / "s.jsonl", lm_eval_rows(CORRECT_LM))
    with pytest.raises(UsageError, match="line numbers .*from 0.*--match fingerprint"):
        impact(report, path)
    forced = impact(report, path, id_field="doc_id", bootstrap=200)  # an explicit choice
    assert forced.matching.matched == 7


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=12))
def test_batched_fingerprints_are_text_fingerprints(texts: list[str]) -> None:
    for norm in (NormConfig(), NormConfig(nfkc=False, casefold=False)):
        assert text_fingerprints(texts, norm) == [text_fingerprint(t, norm) for t in texts]


# -- breakdowns and levels -------------------------------------------------------------------


def test_breakdown_by_rule_and_by_source() -> None:
    run_reason = Reason("min-run", 40, 30)
    test_split = Reason("source-run", 35, 20, source="test_split")
    reasons = {0: (OVERLAP, run_reason), 1: (OVERLAP,), 2: (test_split,), 3: (run_reason,)}
    best = {0: "web", 1: "web", 2: "test_split", 3: "test_split"}
    report = report_of(10, reasons, best=best)
    result = impact(report, records([1, 1, 1, 0, 0, 1, 0, 1, 0, 0]), levels=(), bootstrap=300)
    rules = {s.name: (s.group.n, s.group.value) for s in result.by_rule}
    assert rules == {"min-overlap": (2, 1.0), "min-run": (2, 0.5), "source-run": (1, 1.0)}
    assert [s.name for s in result.by_rule] == ["min-overlap", "min-run", "source-run"]
    sources = {s.name: s.group.n for s in result.by_source}
    assert sources == {"web": 2, "test_split": 2}
    web = next(s for s in result.by_source if s.name == "web")
    assert web.minus_clean.value == pytest.approx(1.0 - 2 / 6)
    assert all(s.kind == "source" for s in result.by_source)


def test_levels_flag_by_threshold() -> None:
    overlap = [1.0, 0.85, 0.6, 0.3, 0.1, 0.0, math.nan, 0.5]
    run = [50, 40, 30, 20, 13, 0, math.nan, 29]
    report = report_of(8, {0: (OVERLAP,), 1: (OVERLAP,)}, overlap=overlap, run=run)
    outcomes = [1, 1, 1, 0, 1, 0, 1, 0]
    result = impact(report, records(outcomes), levels=["overlap>=0.8,0.2", "run>=30"])
    got = [
        (r.level.label, r.split.flagged.n, r.split.clean.n, r.split.unscorable.n)
        for r in result.levels
    ]
    assert got == [
        ("overlap >= 0.2", 5, 2, 1),
        ("overlap >= 0.8", 2, 5, 1),
        ("run >= 30", 3, 4, 1),
    ]
    assert impact(report, records(outcomes)).levels[0].level == Level("overlap_fraction", 0.2)


def test_same_subset_same_interval_across_levels() -> None:
    result = impact(EXAMPLE, records(CORRECT), levels="overlap>=0.5,0.9", bootstrap=1000)
    assert result.levels[0].split == result.overall == result.levels[1].split


@pytest.mark.parametrize(
    "spec, message",
    [
        ("overlap>0.5", "expected overlap>=T"),
        ("overlap>=1.5", "lies in \\(0, 1\\]"),
        ("run>=12.5", "whole number"),
        ("run>=a", "not a number"),
        ("zscore>=2", "expected overlap>=T"),
    ],
)
def test_bad_levels(spec: str, message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        parse_levels(spec)


def test_levels_need_their_score() -> None:
    from contam_cli.report.values import Method

    table = ExampleTable.from_results([], [Method("combined", "combined")])  # no longest_run
    with pytest.raises(UsageError, match="needs the report's longest_run scores"):
        impact(Report(table), records([1]), levels="run>=13")


def test_a_report_no_detector_judged_is_refused() -> None:
    from contam_cli.report.values import Method

    probed = ExampleTable.from_results([], [Method("perplexity", "probe", "lower")])
    with pytest.raises(UsageError, match=r"never judged for contamination \(detectors: probe\)"):
        impact(Report(probed), records([1]))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"metric": "median"}, "metric"),
        ({"match": "name"}, "match"),
        ({"bootstrap": 0}, "resamples"),
        ({"seed": -1}, "seed"),
        ({"confidence": 95}, "confidence level"),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentError, match=message):
        impact(EXAMPLE, records(CORRECT), **kwargs)


def test_report_from_a_path(tmp_path: Path) -> None:
    from contam_cli.report import save_report

    path = tmp_path / "scan.json"
    save_report(EXAMPLE, path)
    result = impact(path, records(CORRECT), bootstrap=300, levels=())
    assert result.report_path == str(path) and result.overall.clean.value == 0.5
    with pytest.raises(ArgumentError, match="report"):
        impact(42, records(CORRECT))  # type: ignore[arg-type]


def test_fingerprints_of_inputs_disagreeing_on_normalization_are_refused(tmp_path: Path) -> None:
    # NOTE: the combined report recorded no normalization, so the texts were hashed with the
    # default one and the --no-casefold input's examples in capitals silently went unmatched.
    questions = [q.upper() if e % 2 else q for e, q in enumerate(QUESTIONS)]
    corpus = [f"crawl page. {questions[e]} more text follows here." for e in sorted(LEAKED)]
    folded = scan(questions, corpus, options=ScanOptions(n=8))
    cased = scan(questions, corpus, options=ScanOptions(n=8, norm=NormConfig(casefold=False)))
    renames = ["2:longest_run=run2", "2:overlap_fraction=ov2"]
    combined = build_report([folded, cased], method_names=renames)
    assert "normalization" not in combined.config
    rows = lm_eval_rows(CORRECT_LM)
    for row, question in zip(rows, questions):
        row["doc"]["question"] = question
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    with pytest.raises(UsageError, match=r"disagree on normalization \(<input 1>: .*casefold"):
        impact(combined, path, match="fingerprint", text_fields=["question"])
    by_id = impact(combined, path, bootstrap=200)
    assert by_id.matching.matched == 8
