"""Part (b) of ``scripts/fuzzy_eval.py``: the fuzzy detector's null scores on real text.

Clean real text against a large real-text corpus, both read from the English documentation of
Debian packages (the ``apt-get`` line in ``fuzzy_eval.py``'s docstring installs them; run it as
``python scripts/fuzzy_eval.py null``). :func:`read_text` strips each format's markup (HTML, POD,
man-page roff, reStructuredText), :func:`paragraphs` keeps the prose paragraphs, and
:func:`null` scores three eval sets and derives the ``min_fuzzy`` rule from them.
"""

from __future__ import annotations

import gzip
import html
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from fuzzy_scoring import exact_signals, fuzzy_scores

from contam_cli.engine.fuzzy import FuzzyConfig
from contam_cli.engine.fuzzy.results import FuzzyResults
from contam_cli.text import tokenize

SHOW = 8  # highest null scores printed, with their texts

EVAL_BODIES = ("python", "postgresql")
PYDOC = Path("/usr/share/doc/python3.11/html/_sources")
PGDOC = Path("/usr/share/doc/postgresql-doc-15/html")
CORPUS = {
    "kernel": (Path("/usr/share/doc/linux-doc-6.1/Documentation"), ("**/*.rst.gz", "**/*.txt.gz")),
    "perl": (Path("/usr/share/perl/5.36/pod"), ("*.pod",)),
    "postgresql": (PGDOC, ("*.html",)),
    "git": (Path("/usr/share/doc/git-doc"), ("*.txt",)),
    "debian-reference": (Path("/usr/share/debian-reference"), ("*.en.txt.gz",)),
    "debian-policy": (Path("/usr/share/doc/debian-policy"), ("*.txt.gz",)),
    "info": (Path("/usr/share/info"), ("*.info.gz", "*.info-*.gz")),
    "fortunes": (Path("/usr/share/games/fortunes"), ("*",)),
    "man": (Path("/usr/share/man"), ("man[14-8]/*.gz",)),
    "licenses": (Path("/usr/share/common-licenses"), ("*",)),
    "python": (PYDOC, ("**/*.rst.txt",)),
}
_ROFF = re.compile(r"\\f[A-Z0-9\[\]]|\\\(..|\\\*\(..|\\\*.|\\[&|^~%]|\\s[-+]?\d")
_POD = re.compile(r"[A-Z]<+\s*([^<>]*?)\s*>+")
_RST = re.compile(r":[a-z:]+:`~?!?([^`<]*?)(?:\s*<[^>]*>)?`|``([^`]*)``|`([^`<]*)[^`]*`_*")
_TAGS = re.compile(r"<(script|style)[^>]*>.*?</\1>|<[^>]+>", re.S)
_BLOCK = re.compile(r"</?(p|div|h[1-6]|li|tr|pre|dt|dd|table|br)[^>]*>", re.I)


def read_text(path: Path) -> str:
    """The prose of one documentation file, markup stripped (paragraphs: blank lines)."""
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    text = raw.decode("utf-8", "replace")
    name = path.name.removesuffix(".gz")
    if name.endswith(".html"):
        text = html.unescape(_TAGS.sub(" ", _BLOCK.sub("\n\n", text)))
    elif name.endswith(".pod"):
        text = _POD.sub(r"\1", re.sub(r"(?m)^=\w+.*$", "\n", text))
    elif re.search(r"\.\d\w*$", name) and "/man" in str(path):
        lines = [ln for ln in text.splitlines() if not ln.startswith((".", "'"))]
        text = _ROFF.sub("", "\n".join(lines)).replace("\\-", "-").replace("\\e", "\\")
    elif name.endswith((".rst", ".rst.txt")):
        text = _RST.sub(lambda m: next(g for g in m.groups() if g is not None), text)
    return text


def paragraphs(text: str, lo: int = 20, hi: int = 300) -> list[str]:
    """Prose paragraphs of `text`: lo..hi tokens, mostly words, no code or markup lines."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln.strip() for ln in block.splitlines()]
        if any(ln.startswith(("..", ">>>", "$ ", "#", "|", "+-", "==", "--")) for ln in lines):
            continue
        para = " ".join(lines)
        words = para.split()
        if not lo <= len(tokenize(para)) <= hi:
            continue
        if sum(w.strip(".,;:()'\"").isalpha() for w in words) < 0.8 * len(words):
            continue
        out.append(para)
    return out


#: Left out: the Python docs' licence pages (licence texts are in the corpus), fortune indexes,
#: and every other file of the eval bodies' Debian packages (PostgreSQL's man pages are built
#: from the same sources as its HTML docs, Python's info manual from its HTML docs). Man
#: sections 2 and 3 (the C library) are not read at all: Python's os, locale, time and curses
#: docs paraphrase them.
_SKIP = re.compile(r"^(license|copyright)\.rst\.txt$|\.(dat|u8)$")
_EVAL_PACKAGES = re.compile(r"^(python|postgresql|libpq)")


def _eval_package_files() -> set[str]:
    """Paths of every file installed by a package of an eval body (from dpkg's lists)."""
    lists = Path("/var/lib/dpkg/info").glob("*.list")
    return {
        line.strip()
        for p in lists
        if _EVAL_PACKAGES.match(p.name)
        for line in p.read_text(errors="replace").splitlines()
    }


def collect(names: Iterable[str]) -> Iterator[tuple[Path, str]]:
    """(path, text) of every file of the named bodies of documentation."""
    owned = _eval_package_files()
    for name in names:
        root, patterns = CORPUS[name]
        found = {p for pat in patterns for p in root.glob(pat) if p.is_file()}
        for p in sorted(found):
            mine = str(p) in owned or str(p.resolve()) in owned  # NOTE: man pages are links
            if not _SKIP.search(p.name) and (name in EVAL_BODIES or not mine):
                yield p, read_text(p)


def null_set(eval_name: str, k: int, rng: np.random.Generator) -> list[str]:
    """`k` paragraphs of one body of documentation."""
    paras = [para for _, text in collect([eval_name]) for para in paragraphs(text)]
    paras = list(dict.fromkeys(paras))  # NOTE: repeated paragraphs are one example
    pick = rng.choice(len(paras), size=min(k, len(paras)), replace=False)
    return [paras[i] for i in sorted(pick.tolist())]


def null(cfg: FuzzyConfig) -> dict[str, Any]:
    rng = np.random.default_rng(20240601)
    others = [n for n in CORPUS if n not in EVAL_BODIES]
    base = [(str(p), t) for p, t in collect(others)]
    runs = {}
    py = null_set("python", 2000, rng)
    pg = null_set("postgresql", 1000, rng)
    py_corpus = [*base, *((str(p), t) for p, t in collect(["postgresql"]))]
    pg_corpus = [*base, *((str(p), t) for p, t in collect(["python"]))]
    for label, examples, corpus in (
        ("python-2000", py, py_corpus),
        ("python-200", py[::10], py_corpus),
        ("postgresql-1000", pg, pg_corpus),
    ):
        names, docs = [n for n, _ in corpus], [t for _, t in corpus]
        mb = sum(len(d.encode()) for d in docs) / 1e6
        t0 = time.perf_counter()
        res = fuzzy_scores(examples, docs, cfg, names)
        secs = time.perf_counter() - t0
        exact = exact_signals(examples, docs, 8)["run8"]
        runs[label] = _null_summary(label, examples, res, exact, mb, secs, cfg)
    top = max(r["max"] for r in runs.values())
    rule = float(np.ceil(round((top + 0.05) / 0.05, 6)) * 0.05)
    print(f"maximum null score {top:.4f} -> min_fuzzy = ceil((max + 0.05) / 0.05) * 0.05 = {rule}")
    return {"runs": runs, "max_null": top, "threshold_rule": round(rule, 2)}


def _null_summary(
    label: str,
    examples: list[str],
    res: FuzzyResults,
    exact_run: np.ndarray,
    mb: float,
    secs: float,
    cfg: FuzzyConfig,
) -> dict[str, Any]:
    """Null scores: the scorable examples that share no 8-gram with the corpus (`exact_run`:
    their longest verbatim run, at n = 8). Like the positives (no 8-gram left), these are the
    examples exact n-grams cannot tell apart; one that shares an 8-gram is a quotation or a
    common phrase, and is shown apart with its scores."""
    quoted = exact_run >= 8
    null_mask = res.scorable & ~quoted
    s = res.score[null_mask]
    q = {f"p{p}": round(float(np.percentile(s, p)), 4) for p in (50, 90, 99, 99.9)}
    out = {
        "examples": int(res.scorable.sum()),
        "sharing_an_8gram": int((res.scorable & quoted).sum()),
        "their_max": round(float(res.score[res.scorable & quoted].max(initial=0)), 4),
        "null_examples": int(null_mask.sum()),
        "with_candidate": int(sum(1 for e in res.evidence if null_mask[e])),
        **q,
        "max": round(float(s.max()), 4),
        "null_flagged_at_default": int((s >= cfg.min_fuzzy).sum()),
        "corpus_mb": round(mb, 1),
        "fuzzy_mb_per_s": round(mb / secs, 1),
    }
    bins = ((20, 30), (30, 60), (60, 10**6))
    lengths = np.array([len(tokenize(t)) for t in examples])
    for lo, hi in bins:
        sel = null_mask & (lengths >= lo) & (lengths < hi)
        if sel.any():
            out[f"max_{lo}_{hi}_tokens"] = round(float(res.score[sel].max()), 4)
    print(f"{label}: {out}")
    score = np.where(null_mask, res.score, -1.0)
    for e in np.argsort(-score, kind="stable")[:SHOW].tolist():
        ev = res.evidence.get(e)
        n = len(tokenize(examples[e]))
        print(f"  {res.score[e]:.3f} ({n} tokens) eval: {examples[e][:160]!r}")
        if ev is not None:
            print(f"        corpus {ev.path}: {(ev.text or '')[:160]!r}")
    return out
