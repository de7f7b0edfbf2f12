"""The HTML report: one self-contained page for people, from any report.

The page holds a header (verdict, counts, config, inputs, warnings), the pictures, the flagged
examples in full (the top ``top``; a count for the rest) with each leaked span highlighted in the
eval text beside its corpus evidence, the combination's tables for a combined report, an optional
impact panel, and a table of the listed examples that sorts by any column and filters.

Self-contained: inline CSS, a small inline script, inline SVG, and a Content-Security-Policy
that forbids every network load, so it works opened from disk and offline. Deterministic: the
same report gives the same bytes. Every value from the report is escaped; with ``report.redact``
the page holds no eval or corpus text (ids, hashes and offsets only). Bounded: a report of any
size gives the top examples in full, a table of at most ``TABLE_ROWS`` rows and down-sampled
pictures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import orjson

from contam_cli.render.html_assets import CSP, CSS, SCRIPT
from contam_cli.render.html_charts import combination_section, figures_section
from contam_cli.render.html_examples import flagged_section
from contam_cli.render.html_parts import el, esc, short_hash, void
from contam_cli.render.html_table import TABLE_ROWS, examples_table, listed_rows
from contam_cli.render.table import short_path
from contam_cli.report import SCHEMA, Report

__all__ = ["DEFAULT_TOP", "render_html"]

#: Flagged examples shown in full by default.
DEFAULT_TOP = 50
#: Files listed per input source at most (the JSON report lists all).
MAX_FILES = 20
#: Characters of one config value shown at most.
MAX_VALUE = 200


def render_html(
    report: Report,
    *,
    top: int = DEFAULT_TOP,
    impact: str | None = None,
    table_rows: int = TABLE_ROWS,
) -> str:
    """The report as one self-contained HTML page (see the module docstring).

    `top`: flagged examples shown in full, most suspicious first. `impact`: an HTML fragment
    (e.g. from ``contam impact``'s renderer, which escapes its own values) put in as a section
    as it is. `table_rows`: examples listed in the table at most.
    """
    ranked = report.ranked_indices()
    mask = report.flagged_mask()
    # NOTE: ranking holds the scorable examples; a flagged one no method scored comes last.
    flagged = (
        ranked[mask[ranked]].tolist() + np.flatnonzero(mask & ~report.scorable_mask()).tolist()
    )
    listed, scorable = listed_rows(report, table_rows)
    carded = set(flagged[: max(0, top)])
    title = f"{_name(report)}: {_verdict_text(report)}"
    body = [
        _header(report),
        figures_section(report),
        flagged_section(report, flagged, top),
        combination_section(report),
        _impact(impact),
        examples_table(report, listed, scorable, carded),
        el("footer", esc(f"contam {report.tool_version} · report schema {SCHEMA}")),
    ]
    head = "".join(
        [
            void("meta", charset="utf-8"),
            void("meta", http_equiv="Content-Security-Policy", content=CSP),
            void("meta", name="viewport", content="width=device-width, initial-scale=1"),
            void("meta", name="referrer", content="no-referrer"),
            void("meta", name="generator", content=f"contam {report.tool_version}"),
            # NOTE: an empty data: icon, so a browser does not look for /favicon.ico.
            void("link", rel="icon", href="data:,"),
            el("title", esc(title)),
            el("style", CSS),
        ]
    )
    page = el("head", head) + el("body", "\n".join(b for b in body if b) + el("script", SCRIPT))
    return "<!DOCTYPE html>\n" + el("html", page, lang="en") + "\n"


def _name(report: Report) -> str:
    """``contam scan report``; the combination's is ``contam report``."""
    return "contam report" if report.command == "report" else f"contam {report.command} report"


def _verdict_text(report: Report) -> str:
    s = report.summary()
    if s["flagged"]:
        return f"contamination found: {s['flagged']:,} of {s['examples']:,} examples flagged"
    # NOTE: "nothing flagged", not "clean": a probe's scores mean little without controls.
    text = f"nothing flagged in {s['examples']:,} examples"
    if s["unscorable"]:
        text += f" ({s['unscorable']:,} unscorable: not evidence of being clean)"
    return text


def _header(report: Report) -> str:
    s = report.summary()
    verdict = _verdict_text(report)
    counts = "".join(
        el(
            "div",
            el("b", f"{s[k]:,}") + el("span", k),
            class_="count bad" if k == "flagged" and s[k] else "count",
        )
        for k in ("examples", "flagged", "clean", "unscorable")
    )
    meta = el(
        "div",
        el("div", el("h3", "Config") + _config(report))
        + el("div", el("h3", "Inputs") + el("div", _inputs(report.inputs), class_="wide")),
        class_="meta",
    )
    warnings = ""
    if report.warnings:
        items = "".join(el("li", esc(w)) for w in report.warnings)
        warnings = el("h3", f"Warnings ({len(report.warnings)})") + el(
            "ul", items, class_="warnings"
        )
    parts = [
        el("h1", esc(_name(report))),
        el(
            "p",
            esc(verdict[0].upper() + verdict[1:]),
            class_="verdict " + ("bad" if s["flagged"] else "good"),
            role="status",
        ),
        el("div", counts, class_="counts"),
        meta,
        warnings,
    ]
    return el("header", "".join(parts), id="summary")


def _config(report: Report) -> str:
    config = dict(report.config)
    pairs = [
        ("command", report.command),
        ("tool", f"contam {report.tool_version}"),
        ("redacted", "yes: no eval or corpus text" if report.redact else "no"),
        ("methods", ", ".join(f"{m.name} ({m.direction})" for m in report.methods) or "none"),
    ]
    if "n" in config:
        pairs.append(("n", _short(config.pop("n"))))
    norm = config.pop("normalization", None)
    if isinstance(norm, Mapping):
        casefold = "casefold" if norm.get("casefold") else "no casefold"
        parts = [str(norm.get("unicode", "?")), casefold, *_present(norm.get("tokens"))]
        pairs.append(("normalization", ", ".join(parts)))
    policy = config.pop("policy", None)
    if isinstance(policy, Mapping):
        pairs.append(("policy", _policy(policy)))
    pairs += _flat(config)
    return el("dl", "".join(el("dt", esc(k)) + el("dd", esc(v)) for k, v in pairs), class_="kv")


def _present(v: Any) -> list[str]:
    return [] if v is None else [str(v)]


def _policy(policy: Mapping[str, Any]) -> str:
    rules = []
    for key, label in (("min_overlap", "overlap ≥"), ("min_run", "run ≥"), ("zscore", "z ≥")):
        if key in policy:
            v = policy[key]
            rules.append(f"{label} {_short(v)}" if v is not None else f"{key} off")
    per_source = policy.get("source_thresholds") or {}
    if per_source:
        rules.append("per source: " + _short(per_source))
    known = {"min_overlap", "min_run", "zscore", "source_thresholds"}
    rules += [f"{k} {_short(v)}" for k, v in policy.items() if k not in known]
    return "; ".join(rules) or "–"


def _flat(d: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Nested mappings as dotted keys with short values."""
    out: list[tuple[str, str]] = []
    for k, v in d.items():
        if isinstance(v, Mapping) and v:
            out += _flat(v, f"{prefix}{k}.")
        else:
            out.append((f"{prefix}{k}", _short(v)))
    return out


def _short(v: Any) -> str:
    if isinstance(v, str):
        text = v
    elif v is None:
        text = "–"
    else:
        text = orjson.dumps(v, default=str, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


def _inputs(inputs: Mapping[str, Any]) -> str:
    rows: list[str] = []
    for kind, items in inputs.items():
        for item in items if isinstance(items, list) else [items]:
            rows += _input_rows(str(kind), item)
    if not rows:
        return el("p", "None recorded.", class_="muted")
    head = el("tr", el("th", "input") + el("th", "file") + el("th", "sha256") + el("th", "facts"))
    return el("table", el("thead", head) + el("tbody", "".join(rows)))


def _input_rows(kind: str, item: Any) -> list[str]:
    if not isinstance(item, Mapping):
        return [_input_row(kind, _short(item), None, "")]
    name = item.get("path") or item.get("index") or item.get("name") or ""
    skip = {"path", "index", "name", "sha256", "files", "relpath"}
    facts = ", ".join(f"{k} {_fact(v)}" for k, v in item.items() if k not in skip)
    files = item.get("files")
    if isinstance(files, list):
        facts = ", ".join(x for x in (facts, f"{len(files):,} files") if x)
    out = [_input_row(kind, short_path(str(name)) if name else "", item.get("sha256"), facts)]
    if isinstance(files, list):
        for f in files[:MAX_FILES]:
            if isinstance(f, Mapping):
                size = f"{f['bytes']:,} bytes" if isinstance(f.get("bytes"), int) else ""
                out.append(
                    _input_row("", short_path(str(f.get("path", ""))), f.get("sha256"), size)
                )
        if len(files) > MAX_FILES:
            out.append(_input_row("", f"… {len(files) - MAX_FILES:,} more files", None, ""))
    return out


def _fact(v: Any) -> str:
    """A fact about an input: counts with thousands separators."""
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return _short(v)


def _input_row(kind: str, name: str, sha: Any, facts: str) -> str:
    return el(
        "tr",
        el("td", esc(kind))
        + el("td", esc(name), class_="mono")
        + el("td", esc(short_hash(sha)) if sha else "", class_="mono", title=sha or None)
        + el("td", esc(facts)),
    )


def _impact(impact: str | None) -> str:
    if not impact:
        return ""
    return el("section", el("h2", "Impact on the eval results") + impact, id="impact")
