"""Measure the fuzzy detector: paraphrased leaks, a real-text null distribution, and speed.

    # (b) needs English documentation from Debian packages (once, as root; about 100 MB):
    apt-get install -y python3.11-doc linux-doc-6.1 perl-doc postgresql-doc-15 git-doc \\
        debian-reference-en debian-policy gnu-standards fortunes
    python scripts/fuzzy_eval.py labelled              # (a) recall, false positives, AUC, 10 seeds
    python scripts/fuzzy_eval.py null                  # (b) null scores of real text, threshold
    python -m contam_cli.features.bench.generate --out /tmp/bench100 --mb 100
    python scripts/fuzzy_eval.py speed --data /tmp/bench100   # (c) MB/s, fuzzy next to exact
    python scripts/fuzzy_eval.py all --data /tmp/bench100 --json fuzzy_eval.json
    python scripts/fuzzy_eval.py limits                # (d) what it misses, measured

(a) uses ``contam_cli.features.bench.labelled.generate_labelled(seed)``: positives of kind
``paraphrase_hard`` (25-35% of words replaced by synonyms or swapped with a neighbour, no 8-gram
left), negatives every label-0 kind (clean, near_miss, boilerplate); with the n-gram signals of
the exact engine on the same data for comparison.

(b) Clean real text against a large real-text corpus: eval examples are paragraphs of one
body of documentation, the corpus every other installed body (man pages, kernel, Perl,
PostgreSQL, git, Debian and GNU manuals, fortunes, licences), so no example was copied into the
corpus except by quotation. The null is the examples that share no 8-gram with the corpus
(like the positives, which have none left): one that does is a quotation or holds a common
phrase, and is reported apart. Three eval sets: 2,000 and 200 Python-doc paragraphs (a small eval
set gives less informative weights) and 1,000 PostgreSQL-doc paragraphs (against a corpus with
the Python docs in and PostgreSQL's out). The threshold rule: ``min_fuzzy`` = the maximum null
score over all three, plus a margin of 0.05, rounded up to a multiple of 0.05. The highest
scores are printed with their text, to check they are innocent.

(d) What it misses: per seed, 25 examples of the text model (60 words) per disguise, each
planted once in a document of filler (300 words each side): reworded as in (a); a share of the
words replaced by synonyms (50%, 70%); 60% of the words left out (a crude summary); the two
halves swapped, or the three thirds in reverse order (clause reordering); 10, 30, 60 or 120
unrelated words inserted in the middle. Per disguise, the mean, lowest and highest score and the
share flagged at ``min_fuzzy``, over 10 seeds.

(c) One process (one core): the exact engine (Accumulator) and the fuzzy detector
(FuzzyAccumulator, which tokenizes for itself) on the same pre-read batches, and the whole
exact ``scan()``, in MB (1e6 bytes of document text) per second.
"""

from __future__ import annotations

import argparse
import gzip
import html
import re
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from contam_cli.engine import Accumulator, DocBatch, build_eval_index, iter_batches
from contam_cli.engine.fuzzy import FuzzyAccumulator, FuzzyConfig, build_fuzzy_index
from contam_cli.engine.fuzzy.results import FuzzyResults
from contam_cli.io.model import Locator, Record
from contam_cli.text import Tokenizer, tokenize

SEEDS = range(10)
SHOW = 8  # highest null scores printed, with their texts
NEGATIVE = ("clean", "near_miss", "boilerplate")


def auc(pos: Iterable[float], neg: Iterable[float]) -> float:
    """Mann-Whitney AUC (ties count half)."""
    p, n = np.asarray(list(pos), float), np.asarray(list(neg), float)
    if len(p) == 0 or len(n) == 0:
        return float("nan")
    wins = (p[:, None] > n[None, :]).sum() + 0.5 * (p[:, None] == n[None, :]).sum()
    return float(wins / (len(p) * len(n)))


def fuzzy_scores(
    examples: list[str],
    docs: list[str],
    cfg: FuzzyConfig,
    names: list[str] | None = None,
) -> FuzzyResults:
    """The fuzzy detector's results for `examples` against the documents `docs` (`names`:
    each document's path, for the evidence)."""
    tk = Tokenizer()
    index = build_fuzzy_index(examples, tokenizer=tk, config=cfg)
    acc = FuzzyAccumulator(len(examples), ["corpus"], cfg)
    for batch in iter_batches(_records(docs, names), 0, 1 << 20):
        acc.add_batch(index, tk, batch)
    return acc.results(index)


def exact_signals(examples: list[str], docs: list[str], n: int) -> dict[str, np.ndarray]:
    """The exact engine's overlap fraction and longest run (n-grams of `n` tokens)."""
    tk = Tokenizer()
    index = build_eval_index(examples, n, tokenizer=tk)
    acc = Accumulator(1, len(index.grams), index.n_examples, ["corpus"])
    for batch in iter_batches(_records(docs), 0, 1 << 20):
        acc.add_batch(index, tk, batch)
    overlap = acc.matched_any(index) / np.maximum(index.total_ngrams, 1)
    return {f"overlap{n}": overlap, f"run{n}": acc.best_len.max(axis=0).astype(float)}


def _records(docs: list[str], names: list[str] | None = None) -> Iterator[tuple[Record, int]]:
    for i, t in enumerate(docs):
        yield Record(str(i), t, Locator(names[i] if names else "<corpus>", record=i)), i


# -- (a) the labelled benchmark ------------------------------------------------------------------


def labelled(cfg: FuzzyConfig) -> dict[str, Any]:
    from contam_cli.features.bench.labelled import generate_labelled

    rows: list[dict[str, Any]] = []
    for seed in SEEDS:
        s = generate_labelled(seed)
        texts, docs = [e.text for e in s.examples], s.corpus_texts()
        kinds = np.array([e.kind for e in s.examples])
        score = fuzzy_scores(texts, docs, cfg).score
        signals = {**exact_signals(texts, docs, 13), **exact_signals(texts, docs, 8)}
        pos, neg = kinds == "paraphrase_hard", np.isin(kinds, NEGATIVE)
        flagged = score >= cfg.min_fuzzy
        row = {
            "seed": seed,
            "positives": int(pos.sum()),
            "negatives": int(neg.sum()),
            "recall": float(flagged[pos].mean()),
            "false_positives": int(flagged[neg].sum()),
            "auc": auc(score[pos], score[neg]),
            "max_negative": float(np.nanmax(score[neg])),
            "min_positive": float(np.nanmin(score[pos])),
            "fp_by_kind": {k: int(flagged[kinds == k].sum()) for k in NEGATIVE},
            "auc_vs_clean": auc(score[pos], score[kinds == "clean"]),
            "flagged_share": {str(k): float(flagged[kinds == k].mean()) for k in np.unique(kinds)},
            **{f"auc_{k}": auc(v[pos], v[neg]) for k, v in signals.items()},
        }
        rows.append(row)
        print(
            f"seed {seed}: recall {row['recall']:.3f}  FP {row['false_positives']}"
            f"/{row['negatives']}  AUC {row['auc']:.3f}  (max negative {row['max_negative']:.3f},"
            f" min positive {row['min_positive']:.3f}; n-gram AUC overlap13"
            f" {row['auc_overlap13']:.3f} run13 {row['auc_run13']:.3f}"
            f" overlap8 {row['auc_overlap8']:.3f})"
        )
    summary: dict[str, Any] = {k: float(np.mean([r[k] for r in rows])) for k in ("recall", "auc")}
    summary["false_positives"] = int(sum(r["false_positives"] for r in rows))
    summary.update({k: float(np.mean([r[k] for r in rows])) for k in rows[0] if "auc_" in k})
    summary["flagged_share"] = {
        k: float(np.mean([r["flagged_share"][k] for r in rows])) for k in rows[0]["flagged_share"]
    }
    print(f"mean over {len(rows)} seeds: {summary}")
    return {"seeds": rows, "summary": summary}


# -- (b) real text -------------------------------------------------------------------------------

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


# -- (c) speed -----------------------------------------------------------------------------------


def speed(data: Path, cfg: FuzzyConfig, numpy_mb: float) -> dict[str, Any]:
    from contam_cli.features.scan import scan
    from contam_cli.io import iter_text_batches

    texts = [orjson.loads(line)["text"] for line in (data / "eval.jsonl").open("rb")]
    shards = sorted((data / "corpus").glob("*.jsonl"))
    t0 = time.perf_counter()
    batches = [
        DocBatch(0, tb.texts, np.array(tb.offsets, dtype=np.int64), tb.record)
        for p in shards
        for tb in iter_text_batches(p)
    ]
    read = time.perf_counter() - t0
    mb = sum(len(r) for b in batches for r in b.raw) / 1e6
    out: dict[str, Any] = {"corpus_mb": round(mb, 1), "eval_examples": len(texts)}
    out["read_mb_per_s"] = round(mb / read, 1)
    for accel in (True, False):
        part = batches if accel else _prefix(batches, numpy_mb)
        part_mb = sum(len(r) for b in part for r in b.raw) / 1e6
        tag = "numba" if accel else "numpy"
        exact, fuzzy = _engine_times(texts, part, cfg, accel)
        out[f"exact_{tag}_mb_per_s"] = round(part_mb / exact, 1)
        out[f"fuzzy_{tag}_mb_per_s"] = round(part_mb / fuzzy, 1)
        out[f"both_{tag}_mb_per_s"] = round(part_mb / (exact + fuzzy), 1)
        print(
            f"{tag} on {part_mb:.1f} MB: exact {part_mb / exact:.1f} MB/s, fuzzy"
            f" {part_mb / fuzzy:.1f} MB/s, both {part_mb / (exact + fuzzy):.1f} MB/s"
        )
    t0 = time.perf_counter()
    scan(data / "eval.jsonl", data / "corpus", hash_corpus=False)
    out["exact_scan_mb_per_s"] = round(mb / (time.perf_counter() - t0), 1)
    print(f"exact scan() end to end: {out['exact_scan_mb_per_s']} MB/s")
    return out


def _prefix(batches: list[DocBatch], mb: float) -> list[DocBatch]:
    out, size = [], 0
    for b in batches:
        if size >= mb * 1e6:
            break
        out.append(b)
        size += sum(len(r) for r in b.raw)
    return out


def _engine_times(
    texts: list[str], batches: list[DocBatch], cfg: FuzzyConfig, accel: bool
) -> tuple[float, float]:
    tk = Tokenizer(accel=accel)
    index = build_eval_index(texts, 13, tokenizer=tk)
    fidx = build_fuzzy_index(texts, tokenizer=tk, config=cfg)
    warm = batches[:1]  # NOTE: compiled kernels load on first use; not part of the rate
    for b in warm:
        Accumulator(1, len(index.grams), index.n_examples, ["c"]).add_batch(index, tk, b)
        FuzzyAccumulator(len(texts), ["c"], cfg).add_batch(fidx, tk, b)
    acc = Accumulator(1, len(index.grams), index.n_examples, ["c"])
    t0 = time.perf_counter()
    for b in batches:
        acc.add_batch(index, tk, b)
    exact = time.perf_counter() - t0
    facc = FuzzyAccumulator(len(texts), ["c"], cfg)
    t0 = time.perf_counter()
    for b in batches:
        facc.add_batch(fidx, tk, b)
    return exact, time.perf_counter() - t0


# -- (d) what it misses --------------------------------------------------------------------------

DISGUISES = (
    "reworded",
    "synonyms 50%",
    "synonyms 70%",
    "60% left out",
    "halves swapped",
    "thirds reversed",
    "10 inserted",
    "30 inserted",
    "60 inserted",
    "120 inserted",
)


def _disguise(way: str, draft: Any, model: Any, thesaurus: Any, rng: np.random.Generator) -> str:
    from contam_cli.features.bench import edits

    words = draft.text(model).split(" ")
    half = len(words) // 2
    if way == "reworded":
        return edits.reword_hard(draft, model, thesaurus, rng).text(model)
    if way.startswith("synonyms"):
        share = int(way.split()[1].rstrip("%")) / 100
        return edits.substitute(draft, thesaurus, rng, share).text(model)
    if way == "60% left out":
        keep = np.sort(rng.choice(len(words), size=round(0.4 * len(words)), replace=False))
        return " ".join(words[k] for k in keep)
    if way == "halves swapped":
        return " ".join(words[half:] + words[:half])
    if way == "thirds reversed":
        a, b = len(words) // 3, 2 * len(words) // 3
        return " ".join(words[b:] + words[a:b] + words[:a])
    k = int(way.split()[0])
    filler = model.prose(rng, np.array([k]))[0].split(" ")[:k]
    return " ".join(words[:half] + filler + words[half:])


def limits(cfg: FuzzyConfig) -> dict[str, Any]:
    from contam_cli.features.bench.edits import Thesaurus
    from contam_cli.features.bench.textmodel import TextModel

    per = 25
    scores: dict[str, list[float]] = {w: [] for w in DISGUISES}
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        model = TextModel.build(rng)
        thesaurus = Thesaurus.build(model, rng)
        drafts = model.drafts(rng, np.full(per * len(DISGUISES), 60))
        ways = [w for w in DISGUISES for _ in range(per)]
        docs = [
            " ".join(
                [
                    *model.prose(rng, np.array([300])),
                    _disguise(w, d, model, thesaurus, rng),
                    *model.prose(rng, np.array([300])),
                ]
            )
            for w, d in zip(ways, drafts)
        ]
        got = fuzzy_scores([d.text(model) for d in drafts], docs, cfg).score
        for w, v in zip(ways, got.tolist()):
            scores[w].append(v)
    out = {}
    for w, v in scores.items():
        a = np.array(v)
        out[w] = {
            "examples": len(a),
            "mean": round(float(a.mean()), 3),
            "min": round(float(a.min()), 3),
            "max": round(float(a.max()), 3),
            "flagged": round(float((a >= cfg.min_fuzzy).mean()), 3),
        }
        print(f"{w:>15}: {out[w]}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("labelled", "null", "speed", "limits", "all"))
    ap.add_argument("--data", type=Path, help="a directory from bench.generate (speed)")
    ap.add_argument("--numpy-mb", type=float, default=10.0, help="MB for the numpy-only rate")
    ap.add_argument("--json", type=Path, help="also write the results here")
    a = ap.parse_args(argv)
    cfg = FuzzyConfig()
    print(f"config: {cfg.describe()}")
    out: dict[str, Any] = {"config": cfg.describe()}
    if a.what in ("labelled", "all"):
        out["labelled"] = labelled(cfg)
    if a.what in ("null", "all"):
        out["null"] = null(cfg)
    if a.what in ("limits", "all"):
        out["limits"] = limits(cfg)
    if a.what in ("speed", "all"):
        if a.data is None:
            ap.error("speed needs --data DIR (python -m contam_cli.features.bench.generate)")
        out["speed"] = speed(a.data, cfg, a.numpy_mb)
    if a.json:
        opts = orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY
        a.json.write_bytes(orjson.dumps(out, option=opts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
