"""The HTML report's inline style sheet and script, and the Content-Security-Policy that allows
exactly these two and nothing from any network.

The policy names the style sheet and the script by their sha256, so a ``<script>`` that got into
the page some other way (an unescaped fragment) does not run, and ``default-src 'none'`` forbids
every fetch, image, font, frame and connection; the page works opened from disk, offline.
"""

from __future__ import annotations

import base64
import hashlib

__all__ = ["CSP", "CSS", "SCRIPT"]

CSS = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --bad: #b3261e; --good: #1a7f37;
  --warn: #9a6700; --mark: #ffe08a; --card: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1200px; padding: 16px 24px 48px; color: var(--ink);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px;
  border-bottom: 1px solid var(--line); padding-bottom: 4px; } h3 { font-size: 15px; margin: 0; }
code, .mono, .text { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 12.5px; }
.verdict { font-size: 18px; font-weight: 600; padding: 10px 14px; border-radius: 6px;
  border: 1px solid var(--line); }
.verdict.bad { color: var(--bad); background: #ffebe9; border-color: #ffcecb; }
.verdict.good { color: var(--good); background: #dafbe1; border-color: #aceebb; }
.counts { display: flex; gap: 12px; margin: 12px 0; flex-wrap: wrap; }
.count { border: 1px solid var(--line); border-radius: 6px; padding: 6px 14px; min-width: 110px; }
.count b { display: block; font-size: 20px; } .count span { color: var(--muted); }
.count.bad b { color: var(--bad); }
.meta { display: grid; grid-template-columns: minmax(0, 1fr); gap: 4px; }
.wide { overflow-x: auto; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }
dl.kv dt { color: var(--muted); } dl.kv dd { margin: 0; overflow-wrap: anywhere; }
dl.facts { display: flex; flex-wrap: wrap; gap: 2px 20px; margin: 6px 0 0; }
dl.facts div { display: flex; gap: 6px; } dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; font-variant-numeric: tabular-nums; }
.warnings li { color: var(--warn); }
table { border-collapse: collapse; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 8px; text-align: left;
  vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.card { border: 1px solid var(--line); border-radius: 6px; margin: 14px 0; padding: 10px 14px;
  background: #fff; }
.card header { display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; }
.card .where, .muted { color: var(--muted); }
.tag { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 12px;
  background: #ffebe9; color: var(--bad); border: 1px solid #ffcecb; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; margin-top: 8px; }
@media (max-width: 800px) { .sides { grid-template-columns: 1fr; } }
.side { background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  padding: 8px 10px; min-width: 0; }
.side h4 { margin: 0 0 4px; font-size: 13px; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0 0; }
mark { background: var(--mark); color: inherit; padding: 0 1px; border-radius: 2px; }
.figures { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 0; } figcaption { color: var(--muted); font-size: 12px; max-width: 480px; }
.controls { display: flex; gap: 16px; align-items: center; margin: 8px 0; flex-wrap: wrap; }
.controls input[type=search] { width: 320px; padding: 4px 8px; }
.scroll { max-height: 70vh; overflow: auto; border: 1px solid var(--line); border-radius: 6px; }
#examples thead th { position: sticky; top: 0; background: #fff; }
#examples th button { all: unset; cursor: pointer; font-weight: 600; }
#examples th[aria-sort=ascending] button::after { content: " \\25B2"; }
#examples th[aria-sort=descending] button::after { content: " \\25BC"; }
#examples td.reasons { min-width: 14em; }
#examples tr.flagged td:first-child { border-left: 3px solid var(--bad); }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
"""

SCRIPT = """
(function () {
  "use strict";
  var table = document.getElementById("examples");
  if (!table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var box = document.getElementById("filter");
  var only = document.getElementById("flagged-only");
  var shown = document.getElementById("shown");

  function key(row, col, numeric) {
    var v = row.cells[col].getAttribute("data-v");
    if (v === null || v === "") { return null; }
    if (!numeric) { return v.toLowerCase(); }
    var x = parseFloat(v);
    return isNaN(x) ? null : x;
  }

  function sortBy(col) {
    var th = heads[col];
    var numeric = th.getAttribute("data-type") === "num";
    var now = th.getAttribute("aria-sort");
    var first = th.getAttribute("data-first") === "desc" ? -1 : 1;
    var dir = now ? (now === "ascending" ? -1 : 1) : first;
    heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var keyed = rows.map(function (r, i) { return [key(r, col, numeric), i, r]; });
    keyed.sort(function (a, b) {
      if (a[0] === null || b[0] === null) {
        if (a[0] === b[0]) { return a[1] - b[1]; }
        return a[0] === null ? 1 : -1;
      }
      var c = a[0] < b[0] ? -1 : (a[0] > b[0] ? 1 : 0);
      return c * dir || a[1] - b[1];
    });
    keyed.forEach(function (k) { body.appendChild(k[2]); });
  }

  function filter() {
    var q = box.value.trim().toLowerCase();
    var flaggedOnly = only.checked;
    var n = 0;
    rows.forEach(function (r) {
      var ok = (!flaggedOnly || r.getAttribute("data-flagged") === "1") &&
        (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
      r.hidden = !ok;
      if (ok) { n += 1; }
    });
    shown.textContent = n + " of " + rows.length + " listed examples shown";
  }

  heads.forEach(function (th, col) {
    th.addEventListener("click", function () { sortBy(col); });
  });
  box.addEventListener("input", filter);
  only.addEventListener("change", filter);
  filter();
})();
"""


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


#: Nothing from a network; only this style sheet and this script; images only as data: URIs.
CSP = (
    f"default-src 'none'; style-src {_sha256(CSS)}; script-src {_sha256(SCRIPT)}; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
