"""The benchmark generator (determinism, plants, labels) and bench_scan's report comparison."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import orjson
import pytest

from contam_cli.features.bench.generate import category_counts, generate, normalize_plain
from contam_cli.text import tokenize as tokens

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_scan.py"
CJK = re.compile("[\u3040-\u30ff\u4e00-\u9fff]")


def _jsonl(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    a, b = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    generate(a, mb=0.3, n_eval=60)
    generate(b, mb=0.3, n_eval=60)
    return a, b


@pytest.fixture(scope="module")
def data(runs: tuple[Path, Path]) -> dict:
    out = runs[0]
    docs = {d["id"]: d["text"] for p in sorted((out / "corpus").glob("*.jsonl")) for d in _jsonl(p)}
    evals = {e["id"]: e["text"] for e in _jsonl(out / "eval.jsonl")}
    return {
        "out": out,
        "docs": docs,
        "evals": evals,
        "labels": _jsonl(out / "labels.jsonl"),
        "meta": orjson.loads((out / "meta.json").read_bytes()),
    }


def _planted(data: dict, category: str) -> list[tuple[str, str, dict]]:
    """(eval text, corpus document, label) for each example of ``category``."""
    return [
        (data["evals"][lab["id"]], data["docs"][lab["doc"]], lab)
        for lab in data["labels"]
        if lab["category"] == category
    ]


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_same_seed_gives_byte_identical_files(runs: tuple[Path, Path]) -> None:
    a, b = (_files(r) for r in runs)
    assert a.keys() == b.keys() and "meta.json" in a and "corpus/shard_00000.jsonl" in a
    assert a == b


def test_corpus_size_and_meta(data: dict) -> None:
    shards = list((data["out"] / "corpus").glob("shard_*.jsonl"))
    size = sum(p.stat().st_size for p in shards)
    assert data["meta"]["corpus"]["bytes"] == size
    assert 0.3e6 <= size < 0.3e6 + 20_000
    assert data["meta"]["corpus"]["documents"] == len(data["docs"])


@pytest.mark.parametrize(
    "n_eval, frac, expected",
    [
        (60, None, {"full": 5, "full_norm": 1, "partial40": 3, "near12": 3, "clean": 48}),
        (1000, None, {"full": 80, "full_norm": 20, "partial40": 50, "near12": 50, "clean": 800}),
        (100, 0.5, {"full": 20, "full_norm": 5, "partial40": 13, "near12": 12, "clean": 50}),
        (10, 1.0, {"full": 4, "full_norm": 1, "partial40": 3, "near12": 2, "clean": 0}),
        (10, 0.0, {"full": 0, "full_norm": 0, "partial40": 0, "near12": 0, "clean": 10}),
    ],
)
def test_category_counts(n_eval: int, frac: float | None, expected: dict[str, int]) -> None:
    assert category_counts(n_eval, frac) == expected


def test_labels_match_requested_counts(data: dict, tmp_path: Path) -> None:
    assert Counter(lab["category"] for lab in data["labels"]) == category_counts(60)
    assert data["meta"]["counts"] == category_counts(60)
    meta = generate(tmp_path, mb=0.05, n_eval=40, planted_frac=0.5)
    labels = _jsonl(tmp_path / "labels.jsonl")
    assert Counter(lab["category"] for lab in labels) == meta["counts"] == category_counts(40, 0.5)


def test_labels_cover_every_eval_id_once(data: dict) -> None:
    ids = [lab["id"] for lab in data["labels"]]
    assert sorted(ids) == sorted(data["evals"]) and len(set(ids)) == len(ids)
    for lab in data["labels"]:
        assert lab["planted"] == (lab["category"] != "clean")
        assert lab["expected_flag"] == (lab["category"] in ("full", "full_norm", "partial40"))
        assert (lab["doc"] is None) == (lab["category"] == "clean")


def test_full_examples_occur_verbatim(data: dict) -> None:
    planted = _planted(data, "full")
    assert planted
    for text, doc, _ in planted:
        assert f" {text} " in doc


def test_full_norm_examples_occur_normalized(data: dict) -> None:
    for text, doc, _ in _planted(data, "full_norm"):
        assert normalize_plain(text) != text
        assert f" {normalize_plain(text)} " in doc


@pytest.mark.parametrize("category, words", [("partial40", 40), ("near12", None)])
def test_spans_occur_and_cannot_extend(data: dict, category: str, words: int | None) -> None:
    planted = _planted(data, category)
    assert planted
    for text, doc, lab in planted:
        s, e = lab["span_words"]
        eval_words = text.split(" ")
        span = " ".join(eval_words[s:e])
        at = doc.find(f" {span} ")
        assert at > 0, lab
        assert e - s == words if words else len(tokens(span)) == 12
        left, right = doc[:at].rsplit(" ", 1)[-1], doc[at + len(span) + 2 :].split(" ", 1)[0]
        assert tokens(left)[-1] != tokens(eval_words[s - 1])[-1]
        assert tokens(right)[0] != tokens(eval_words[e])[0]


def test_corpus_has_non_ascii_and_cjk(data: dict) -> None:
    text = "".join(data["docs"].values())
    punctuation = set("“”’—")
    assert any(ord(c) > 127 and c not in punctuation and not CJK.match(c) for c in text)
    assert CJK.search(text)
    assert any(re.search("[“”’—]", t) for t in data["evals"].values())


def test_eval_examples_are_30_to_120_words(data: dict) -> None:
    for text in data["evals"].values():
        assert 30 <= len(tokens(text)) <= 125  # a few words hold two tokens ("don't")


# ---------------------------------------------------------------------------------------------
# scripts/bench_scan.py


@pytest.fixture(scope="module")
def bench_scan() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_scan", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_scan"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _report(*examples: tuple[str, bool, float | None, int | None]) -> dict:
    return {
        "examples": [
            {"id": i, "flagged": f, "overlap_fraction": o, "longest_run": r}
            for i, f, o, r in examples
        ]
    }


REF = _report(("e0", True, 1.0, 40), ("e1", False, 0.0, 0), ("e2", False, None, None))


def test_compare_reports_agree(bench_scan: ModuleType) -> None:
    mine = _report(("e2", False, None, None), ("e0", True, 1.0 + 1e-12, 40), ("e1", False, 0.0, 0))
    assert bench_scan.compare_reports(mine, REF) == []


@pytest.mark.parametrize(
    "mine, expected",
    [
        (
            _report(("e0", False, 1.0, 40), ("e1", False, 0.0, 0), ("e2", False, None, None)),
            ["e0: flagged"],
        ),
        (
            _report(("e0", True, 0.9, 40), ("e1", False, 0.0, 0), ("e2", False, None, None)),
            ["e0: overlap_fraction"],
        ),
        (
            _report(("e0", True, 1.0, 41), ("e1", False, 0.0, 0), ("e2", False, 0.0, None)),
            ["e0: longest_run", "e2: overlap_fraction"],
        ),
        (
            _report(("e0", True, 1.0, 40), ("e9", False, 0.0, 0), ("e2", False, None, None)),
            ["e1: missing", "e9: not in"],
        ),
    ],
)
def test_compare_reports_disagree(bench_scan: ModuleType, mine: dict, expected: list[str]) -> None:
    diffs = bench_scan.compare_reports(mine, REF)
    assert [d[: len(e)] for d, e in zip(diffs, expected)] == expected and len(diffs) == len(
        expected
    ), diffs


FAKE_CONTAM = """
import sys
if "--jobs" in sys.argv:
    print("Error: No such option: --jobs", file=sys.stderr)
    sys.exit(2)
open(sys.argv[sys.argv.index("--report") + 1], "w").write('{"examples": []}')
"""


def test_contam_without_jobs_option_falls_back(
    bench_scan: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "fake_contam.py"
    fake.write_text(FAKE_CONTAM, encoding="utf-8", newline="\n")

    def command(bench: object, report: Path, jobs: int | None) -> list[str]:
        cmd = [sys.executable, str(fake), "--report", str(report)]
        return cmd if jobs is None else [*cmd, "--jobs", str(jobs)]

    tools = sys.modules["bench_tools"]  # NOTE: imported by bench_scan, which runs the tools
    monkeypatch.setattr(tools, "contam_command", command)
    bench = bench_scan.Bench(tmp_path, tmp_path, tmp_path, [], 1, tmp_path)
    notes: list[str] = []
    rows = tools.run_contam(bench, [1, 0], notes)
    assert [r.tool for r in rows] == ["`contam scan` (no `--jobs` option)"]
    rows[0].load_report()
    assert rows[0].error is None and rows[0].report == {"examples": []}
    assert rows[0].run.wall > 0 and rows[0].run.max_rss_mb > 0
    assert len(notes) == 1 and "skipped" in notes[0]


@pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="bench_index needs the fast extra"
)
def test_bench_index_runs_on_generated_data(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = SCRIPT.with_name("bench_index.py")
    spec = importlib.util.spec_from_file_location("bench_index", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    args = [str(runs[0]), "--corpus-mb", "0.2", "--rounds", "1", "--splits", "1/26,20/20"]
    assert module.main(args) == 0
    out = capsys.readouterr().out
    assert "60 examples" in out and "pass" in out and "(the scan's)" in out
    assert "buckets of 1 then 26 bits" in out and "buckets of 20 then 20 bits" in out
    assert (module.occurrence_sort.COARSE_BITS, module.occurrence_sort.SPLIT_BITS) == (10, 26)


def _script(name: str, *args: str) -> str:
    """Run scripts/`name` in a fresh process (it wraps library functions as it measures)."""
    import subprocess

    out = subprocess.run(
        [sys.executable, str(SCRIPT.with_name(name)), *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=SCRIPT.parents[1],
    )
    return out.stdout


def test_profile_scan_times_every_stage(runs: tuple[Path, Path]) -> None:
    out = _script("profile_scan.py", str(runs[0]), "--shards", "2")
    for stage in ("eval side", "read corpus", "tokenize (all)", "index probe", "report"):
        assert f"| {stage}" in out, out


def test_timeline_scan_splits_the_pass_from_the_rest(runs: tuple[Path, Path]) -> None:
    data = runs[0]
    out = _script("timeline_scan.py", str(data / "eval.jsonl"), str(data / "corpus"), "--jobs", "1")
    assert "corpus pass starts:" in out and "corpus pass:" in out, out
    assert re.search(r"process \d+: \d+ shards", out) and "shard time, all processes:" in out
    assert "FLAGGED" not in out  # the command's own table is not mixed in


def test_profile_eval_side_prints_each_phase_with_its_kernel_time(runs: tuple[Path, Path]) -> None:
    data = runs[0]
    out = _script("profile_eval_side.py", str(data / "eval.jsonl"), str(data / "corpus"))
    assert "| phase | wall s | CPU s | of which kernel s |" in out, out
    for phase in ("eval side: read, index", "corpus pass", "report: eval texts read again"):
        row = next(line for line in out.splitlines() if line.startswith(f"| {phase} |"))
        cpu, kernel = (float(x) for x in row.split("|")[3:5])
        assert 0 <= kernel <= cpu + 0.01, row


def test_bench_jobs_prints_both_settings_and_their_speedups(runs: tuple[Path, Path]) -> None:
    out = _script("bench_jobs.py", str(runs[0]), "--runs", "1")
    assert "`contam scan --jobs 1` against `--jobs 2`" in out, out
    for setting in ("hashed", "--no-corpus-hash"):
        row = next(line for line in out.splitlines() if line.startswith(f"| {setting} |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        walls = [float(c.split()[0]) for c in (cells[1], cells[2])]
        assert all(w > 0 for w in walls), row
        ratio = walls[0] / walls[1]  # NOTE: of the printed walls, rounded to 0.01 s
        slack = ratio * (0.005 / walls[0] + 0.005 / walls[1]) + 0.005
        assert float(cells[3].rstrip("×")) == pytest.approx(ratio, abs=slack), row
        cpu = [float(c.split()[0]) for c in (cells[4], cells[5])]  # every process's CPU time
        assert all(c > 0 for c in cpu), row


def test_bench_jobs_refuses_a_directory_without_bench_data(tmp_path: Path) -> None:
    import subprocess

    script = SCRIPT.with_name("bench_jobs.py")
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "no eval.jsonl and corpus/" in proc.stderr
