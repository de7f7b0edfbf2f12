"""Reports for the renderer tests: a real scan of the bundled fixtures, and hand-made probe,
combined, hostile (markup in every field) and empty reports."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from functools import cache
from pathlib import Path
from types import ModuleType

import numpy as np

from contam_cli import scan
from contam_cli.engine.evidence import Evidence
from contam_cli.engine.options import ScanOptions
from contam_cli.features.eval_texts import attach_eval_texts
from contam_cli.report import NGRAM_METHODS, ExampleTable, Method, NgramColumns, Reason, Report
from contam_cli.report.values import SourceResult

# NOTE: not from conftest: tests/render has a conftest of its own, which that name finds here.
ROOT = Path(__file__).resolve().parents[2]
CD = ROOT / "fixtures" / "contamination_detector"
BENCHMARK = CD / "examples" / "benchmark.jsonl"
CORPUS = CD / "examples" / "corpus"
MIXED = CD / "derived" / "mixed_examples.jsonl"
#: Words of the fixture's leaked examples, which a redacted page must not hold.
PLANTED = ("Canberra", "photon", "Melbourne", "three hundred million")
HOSTILE = '<script>alert("x")</script>'
HOSTILE_TEXT = "Leak </mark><script>alert(1)</script> & <b>bold</b> here ok"


@cache
def scan_report(eval_path: Path = BENCHMARK, redact: bool = False) -> Report:
    """The bundled fixture scanned, with its eval texts attached; `redact`: the same report
    marked redacted while the texts are still in its table (the renderer must leave them out)."""
    report = scan(str(eval_path), str(CORPUS))
    report = attach_eval_texts(report, str(eval_path), ScanOptions())
    return replace(report, redact=True) if redact else report


def hostile_report(redact: bool = False) -> Report:
    """Markup in an id, a text, an evidence text, a source name, a path and a warning."""
    text = HOSTILE_TEXT
    ev = Evidence(HOSTILE, "dir/<x>.txt", 2, 0, HOSTILE, None, 0, 16, 0, 0, 3, "Leak </mark><scr")
    table = ExampleTable(
        ids=[HOSTILE, "plain"],
        eval_paths=['ev"al<x>.jsonl', "eval.jsonl"],
        eval_lines=[1, None],
        fingerprints=["a" * 32, "b" * 32],
        methods=NGRAM_METHODS,
        scores={"longest_run": [3, 0], "overlap_fraction": [1.0, 0.0]},
        reasons={0: [Reason("min-overlap", 1.0, 0.5), Reason("source-run", 3, 2, HOSTILE)]},
        ngram=NgramColumns.build(
            scorable=[True, True],
            n_tokens=[9, 5],
            total_ngrams=[1, 1],
            matched_ngrams=[1, 0],
            zscore=[1.0, -1.0],
            best_source={0: HOSTILE},
            per_source={0: {HOSTILE: SourceResult(1, 1.0, 3), "other": SourceResult(1, 0.5, 2)}},
            evidence={0: ev},
        ),
        texts={0: text},
    )
    config = {"n": 3, "normalization": {"unicode": "NFKC", "casefold": True}, "note": HOSTILE}
    return Report(
        examples=table, config=config, inputs={}, redact=redact, warnings=(f"warn {HOSTILE}",)
    )


def probe_report() -> Report:
    """A probe's report: perplexity (lower is suspicious), Min-K%++, no n-gram details, no
    texts, one example neither method could score."""
    methods = (
        Method("min_k_plus_plus", "probe", "higher", description="Min-K%++"),
        Method("perplexity", "probe", "lower", description="perplexity"),
    )
    n = 6
    table = ExampleTable(
        ids=[f"p{i}" for i in range(n)],
        eval_paths=["probe.jsonl"] * n,
        eval_lines=list(range(1, n + 1)),
        fingerprints=[f"{i:032x}" for i in range(n)],
        methods=methods,
        scores={
            "min_k_plus_plus": [0.5, -0.2, 1.5, np.nan, 0.1, -1.0],
            "perplexity": [12.5, 40.0, 3.25, np.nan, 20.0, 12345.678],
        },
    )
    return Report(examples=table, config={"model": "ngram-lm:x.txt"}, command="probe")


def combined_report() -> Report:
    """A combined report (contam report): the combined score and its inputs' methods, labels on
    every example, the combination's stats with AUCs and a deployment view."""
    methods = (
        Method("combined", "combined", "higher", description="weighted mean z-score"),
        Method("overlap_fraction", "input", "higher"),
        Method("perplexity", "input", "lower"),
    )
    rng = np.random.default_rng(3)
    n = 40
    labels = (np.arange(n) % 4 == 0).astype(int)
    combined = labels * 1.5 + rng.normal(0, 0.6, n)
    overlap = np.clip(labels * 0.6 + rng.normal(0.1, 0.2, n), 0, 1)
    perplexity = 30 - labels * 8 + rng.normal(0, 5, n)
    perplexity[5] = np.nan
    flagged = np.flatnonzero(combined >= 1.0)
    table = ExampleTable(
        ids=[f"c{i:02d}" for i in range(n)],
        eval_paths=["mixed.jsonl"] * n,
        eval_lines=[None if i == 7 else i + 1 for i in range(n)],
        fingerprints=[f"{i + 100:032x}" for i in range(n)],
        methods=methods,
        scores={"combined": combined, "overlap_fraction": overlap, "perplexity": perplexity},
        reasons={
            int(e): [Reason("combined-zscore", float(combined[e]), 1.0, detector="report")]
            for e in flagged
        },
        details={"label": {i: {"label": int(labels[i])} for i in range(n)}},
    )
    combination = {
        "threshold": 1.0,
        "weight_by_auc": True,
        "inputs": [{"path": "scan.json"}, {"path": "probe.json"}],
        "methods": {
            "overlap_fraction": {
                "detector": "ngram", "direction": "higher", "weight": 0.6, "scored": 40,
                "missing": 0, "auc": 0.93, "auc_low": 0.85, "auc_high": 0.99,
            },
            "perplexity": {
                "detector": "probe", "direction": "lower", "weight": 0.4, "scored": 39,
                "missing": 1, "auc": 0.81, "auc_low": 0.66, "auc_high": 0.93,
            },
        },
        "labels": {"path": "labels.jsonl", "positives": 10, "negatives": 30},
        "deployment": {
            "prevalence": 0.01,
            "documents": 100000,
            "rows": [
                {"method": "combined", "recall": 0.9, "fpr": 0.05, "precision": 0.1538,
                 "flagged": 5850.0, "true": 900.0, "false": 4950.0, "missed": 100.0},
            ],
        },
    }  # fmt: skip
    return Report(examples=table, command="report", stats={"combination": combination}, config={})


def empty_report() -> Report:
    """A scan report of no examples."""
    table = ExampleTable(
        ids=[],
        eval_paths=[],
        eval_lines=[],
        fingerprints=[],
        methods=NGRAM_METHODS,
        scores={"longest_run": [], "overlap_fraction": []},
        ngram=NgramColumns.build(
            scorable=[], n_tokens=[], total_ngrams=[], matched_ngrams=[], zscore=[]
        ),
    )
    return Report(examples=table)


@cache
def bench_module() -> ModuleType:
    """scripts/bench_html.py, whose ``synthetic_report`` makes reports of any size."""
    path = ROOT / "scripts" / "bench_html.py"
    spec = importlib.util.spec_from_file_location("bench_html", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def all_reports() -> dict[str, Report]:
    """Every kind of report a renderer must handle, by name."""
    return {
        "scan": scan_report(),
        "scan-redacted": scan_report(redact=True),
        "mixed": scan_report(MIXED),
        "hostile": hostile_report(),
        "hostile-redacted": hostile_report(redact=True),
        "probe": probe_report(),
        "combined": combined_report(),
        "empty": empty_report(),
    }
