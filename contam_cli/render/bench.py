"""What ``contam bench`` prints: Markdown tables for a README, and JSON (``contam.bench/1``).

Pure functions of a :class:`~contam_cli.features.bench.runner.BenchResult`. The Markdown has,
over every leak kind and hard negative (view ``all``): AUC per leak kind, recall and FPR at each
signal's rule (mean ± population sd over seeds), recall per leak kind, the deployment table;
then the same signals on the seed project's make-up (view ``seed``: verbatim, partial and
paraphrased leaks against clean examples only), and the calibrated thresholds. The JSON holds
every number of the result: keys in a fixed order, floats rounded to 12 places, ``null`` (never
NaN or infinity) for a value that does not exist; the same result gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import orjson

from contam_cli.features.bench.labelled import NEGATIVE_KINDS, POSITIVE_KINDS
from contam_cli.features.bench.runner import DETECTORS, BenchResult
from contam_cli.features.bench.summary import VIEWS, Row, Stat, View
from contam_cli.stats import ReviewQueue

__all__ = [
    "BENCH_SCHEMA",
    "bench_command",
    "bench_to_dict",
    "render_bench_json",
    "render_bench_markdown",
]

BENCH_SCHEMA = "contam.bench/1"
"""The layout version of the JSON; bumped on any incompatible change."""
_DECIMALS = 12
_NEGATIVES = ("clean", *NEGATIVE_KINDS)


def bench_command(result: BenchResult) -> str:
    """The command line that reruns `result` (its options, the defaults left out)."""
    c, s = result.config, result.config.settings
    parts = [
        "contam bench",
        f"--seeds {c.seeds}",
        f"--prevalence {c.prevalence:g}",
        f"--documents {c.documents:g}",
        f"--n {','.join(map(str, c.ns))}",
    ]
    # NOTE: every detector that can run is the default; a run of fewer names them, so that the
    # line reruns the same rows.
    default = {d.name for d in DETECTORS if c.model is not None or not d.needs_model}
    if set(c.detectors) != default:
        parts.append(f"--detectors {','.join(c.detectors)}")
    if s.ignore_common != 20:
        parts.append(f"--ignore-common {s.ignore_common}")
    if c.model is not None:
        parts.append(f"--model {c.model.get('spec', c.model.get('provider'))}")
        parts.append(f"--methods {','.join(s.methods)}")
    return " ".join(parts)


# -- Markdown --------------------------------------------------------------------------------


def render_bench_markdown(result: BenchResult) -> str:
    """The README tables (module docstring), ending in a newline."""
    lines = [*_head(result), *_auc(result), *_rules(result), *_recall(result)]
    lines += [*_deployment(result, "all"), *_seed_view(result), *_thresholds(result)]
    return "\n".join(lines) + "\n"


def _head(r: BenchResult) -> list[str]:
    c, s = r.config, r.config.settings
    kinds = ", ".join(f"{r.examples_per_seed.get(k, 0)} {k}" for k in ("clean", *POSITIVE_KINDS))
    hard = ", ".join(f"{r.examples_per_seed.get(k, 0)} {k}" for k in NEGATIVE_KINDS)
    docs = sorted(set(r.corpus_documents))
    out = [
        "## contam bench",
        "",
        f"`{bench_command(r)}` (contam {r.version})",
        "",
        f"Seeds 0-{c.seeds - 1}. Per seed: {kinds}; hard negatives {hard}; a corpus of "
        f"{'/'.join(map(str, docs))} documents; {c.controls} controls of the same text model, "
        "planted nowhere (for calibration and the probe's percentiles).",
        f"AUC: mean over seeds. Recall and FPR: mean ± sd (population) over seeds, at each "
        f"signal's rule. z-score rule at {s.zscore:g}; boilerplate suppression at "
        f"`--ignore-common {s.ignore_common}`; calibration at the {s.percentile:g}th percentile.",
    ]
    if c.model is not None:
        out.append(f"Probe model: {_model(c.model)}; methods {', '.join(s.methods)}.")
    out += [f"- {note}" for note in r.notes]
    return out


def _model(described: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in described.items() if isinstance(v, (str, int)))


def _auc(r: BenchResult) -> list[str]:
    headers = ["n", "signal", *POSITIVE_KINDS, "overall"]
    rows = [
        [
            _n(row),
            row.signal,
            *(_rate(row.views["all"].auc[k].mean) for k in (*POSITIVE_KINDS, "overall")),
        ]
        for row in r.rows
    ]
    title = "### AUC per leak kind (each kind against every clean example and hard negative)"
    return _table(title, headers, rows, 2)


def _rules(r: BenchResult) -> list[str]:
    headers = ["n", "signal", "rule", "recall", "FPR", *(f"FPR {k}" for k in _NEGATIVES)]
    rows = []
    for row in r.rows:
        v = row.views["all"]
        rates = [_pm(row.rate[k]) for k in _NEGATIVES]
        rows.append([_n(row), row.signal, row.rule, _pm(v.recall), _pm(v.fpr), *rates])
    return _table("### Recall and false-positive rate at each rule", headers, rows, 3)


def _recall(r: BenchResult) -> list[str]:
    headers = ["n", "signal", *POSITIVE_KINDS]
    rows = [
        [_n(row), row.signal, *(_rate(row.rate[k].mean) for k in POSITIVE_KINDS)] for row in r.rows
    ]
    return _table("### Recall per leak kind", headers, rows, 2)


def _deployment(r: BenchResult, view: str) -> list[str]:
    c = r.config
    headers = ["n", "signal", "flagged", "real", "false", "missed", "precision"]
    rows = [[_n(row), row.signal, *_queue(row.views[view].queue)] for row in r.rows]
    title = f"### Deployment: {c.documents:,.0f} documents at {c.prevalence:g} contamination" + (
        " (the seed's make-up)" if view == "seed" else ""
    )
    out = _table(title, headers, rows, 2)
    return [*out, "", *_best(r.rows, view)]


def _best(rows: Sequence[Row], view: str) -> list[str]:
    """The best raw AUC, and the best setting at the prevalence (highest precision, then the
    most leaks found), as the seed's script says them."""
    scored = [(row, row.views[view]) for row in rows if row.views[view].auc["overall"].mean]
    out = []
    if scored:
        row, v = max(scored, key=lambda p: p[1].auc["overall"].mean or 0.0)
        out.append(
            f"Best raw AUC: {row.label} ({_rate(v.auc['overall'].mean)}), with FPR "
            f"{_rate(v.fpr.mean)} at its rule."
        )
    usable = [(row, q) for row in rows if (q := row.views[view].queue) and q.precision and q.true]
    if usable:
        row, q = max(usable, key=lambda p: (round(p[1].precision or 0.0, 3), p[1].true))
        out.append(
            f"Best at this prevalence: {row.label}: precision {_rate(q.precision)}, "
            f"{q.true:,.1f} real leaks found, {q.false:,.1f} false flags."
        )
    return out


def _seed_view(r: BenchResult) -> list[str]:
    kinds = VIEWS[1].positives
    headers = ["n", "signal", *kinds, "overall", "recall", "FPR"]
    rows = []
    for row in r.rows:
        v = row.views["seed"]
        aucs = [_rate(v.auc[k].mean) for k in (*kinds, "overall")]
        rows.append([_n(row), row.signal, *aucs, _pm(v.recall), _pm(v.fpr)])
    title = f"### The seed project's make-up: {VIEWS[1].description}"
    return [*_table(title, headers, rows, 2), *_deployment(r, "seed")]


def _thresholds(r: BenchResult) -> list[str]:
    rows = [row for row in r.rows if row.info]
    if not rows:
        return []
    names = sorted({k for row in rows for k in row.info})
    data = [
        [_n(row), row.signal, *(_pm(row.info[k]) if k in row.info else "–" for k in names)]
        for row in rows
    ]
    return _table(
        "### What calibration chose (mean ± sd over seeds)", ["n", "signal", *names], data, 2
    )


def _table(title: str, headers: list[str], rows: list[list[str]], left: int) -> list[str]:
    align = ["---"] * left + ["--:"] * (len(headers) - left)
    out = ["", title, "", _line(headers), _line(align)]
    return out + [_line(row) for row in rows]


def _line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _n(row: Row) -> str:
    return "–" if row.n is None else str(row.n)


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _pm(s: Stat) -> str:
    if s.mean is None:
        return "–"
    digits = 1 if abs(s.mean) >= 2 else 3
    return f"{s.mean:.{digits}f} ± {(s.sd or 0.0):.{digits}f}"


def _queue(q: ReviewQueue | None) -> list[str]:
    if q is None:
        return ["–"] * 5
    counts = [f"{x:,.0f}" for x in (q.flagged, q.true, q.false, q.missed)]
    return [*counts, _rate(q.precision)]


# -- JSON ------------------------------------------------------------------------------------


def bench_to_dict(result: BenchResult) -> dict[str, Any]:
    """The ``contam.bench/1`` document: fixed key order, no NaN or infinity (null instead)."""
    c, s = result.config, result.config.settings
    generator = {k: v for k, v in asdict(c.generator).items() if k not in ("seed", "kinds")}
    return {
        "schema": BENCH_SCHEMA,
        "tool": {"name": "contam", "version": result.version},
        "command": bench_command(result),
        "config": {
            "seeds": list(range(c.seeds)),
            "prevalence": _float(c.prevalence),
            "documents": _float(c.documents),
            "ns": list(c.ns),
            "detectors": list(c.detectors),
            "min_overlap": _float(s.min_overlap),
            "min_run": s.min_run,
            "zscore": _float(s.zscore),
            "ignore_common": s.ignore_common,
            "percentile": _float(s.percentile),
            "controls": c.controls,
            "model": c.model,
            "methods": list(s.methods),
            "generator": _plain(generator),
        },
        "examples_per_seed": dict(result.examples_per_seed),
        "corpus_documents": list(result.corpus_documents),
        "views": {
            v.name: {
                "positives": list(v.positives),
                "negatives": list(v.negatives),
                "description": v.description,
            }
            for v in VIEWS
        },
        "rows": [_row_dict(row) for row in result.rows],
        "notes": list(result.notes),
    }


def render_bench_json(result: BenchResult) -> str:
    """:func:`bench_to_dict` as indented JSON text, ending in a newline."""
    return orjson.dumps(bench_to_dict(result), option=orjson.OPT_INDENT_2).decode() + "\n"


def _row_dict(row: Row) -> dict[str, Any]:
    return {
        "n": row.n,
        "detector": row.detector,
        "signal": row.signal,
        "rule": row.rule,
        "views": {name: _view_dict(v) for name, v in row.views.items()},
        "rate": {k: _stat(v) for k, v in row.rate.items()},
        "mean_score": {k: _stat(v) for k, v in row.mean_score.items()},
        "unscorable": _stat(row.unscorable),
        "info": {k: _stat(v) for k, v in row.info.items()},
    }


def _view_dict(v: View) -> dict[str, Any]:
    q = v.queue
    queue = None
    if q is not None:
        queue = {
            k: _float(getattr(q, k)) for k in ("flagged", "true", "false", "missed", "precision")
        }
    return {
        "auc": {k: _stat(s) for k, s in v.auc.items()},
        "recall": _stat(v.recall),
        "fpr": _stat(v.fpr),
        "deployment": queue,
    }


def _stat(s: Stat) -> dict[str, Any]:
    return {"mean": _float(s.mean), "sd": _float(s.sd), "seeds": s.seeds}


def _plain(value: Any) -> Any:
    """Tuples as lists and floats rounded, recursively (for the generator's parameters)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return _float(value) if isinstance(value, float) else value


def _float(value: float | None) -> float | None:
    """A JSON number: rounded, None for a missing or non-finite value.

    >>> _float(0.6 - 0.5), _float(math.inf), _float(None)
    (0.1, None, None)
    """
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), _DECIMALS)
