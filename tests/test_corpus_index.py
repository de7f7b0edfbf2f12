"""The persisted corpus index: same answers as streaming, provenance, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from conftest import CD
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import contam_cli.engine.corpus_index.build as ci_build
from contam_cli import FlagPolicy, scan
from contam_cli.cli import app
from contam_cli.engine.corpus_index import build_corpus_index, load_header
from contam_cli.engine.corpus_index.header import given_entry
from contam_cli.errors import InputError
from contam_cli.features.scan import ScanOptions, resolve_sources
from contam_cli.io.remote import Url
from contam_cli.text import DEFAULT_NORM

WORDS = st.sampled_from("the cat sat on a mat with hat bat rat dog".split())
DOC = st.lists(WORDS, min_size=0, max_size=25).map(" ".join)
runner = CliRunner()


def _build(files: list[Path], out: Path, n: int, positions: bool) -> None:
    sources = resolve_sources(
        {"web": files[:1], "books": files[1:]} if len(files) > 1 else files, ScanOptions(n=n)
    )
    build_corpus_index(
        sources,
        out,
        n=n,
        norm=DEFAULT_NORM,
        positions=positions,
        corpus_spec=ScanOptions().corpus_spec,
        force=True,
    )


def _write(d: Path, docs: list[str]) -> list[Path]:
    half = len(docs) // 2
    files = []
    for name, part in (("a.jsonl", docs[:half]), ("b.jsonl", docs[half:])):
        if part:
            (d / name).write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in part))
            files.append(d / name)
    return files


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    evals=st.lists(DOC, min_size=1, max_size=5),
    docs=st.lists(DOC, min_size=1, max_size=20),
    n=st.integers(2, 4),
)
def test_index_answers_like_streaming(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    evals: list[str],
    docs: list[str],
    n: int,
) -> None:
    monkeypatch.setattr(ci_build, "_BUCKET_TARGET", 64)  # many buckets: exercise the external sort
    d = tmp_path_factory.mktemp("c")
    files = _write(d, docs)
    sources = {"web": files[:1], "books": files[1:]} if len(files) > 1 else files
    stream = scan(evals, sources, n=n)
    for positions in (False, True):
        _build(files, d / f"idx{positions}", n, positions)
        got = scan(evals, index=d / f"idx{positions}", n=n)
        for a, b in zip(stream.examples, got.examples):
            assert (a.overlap_fraction, a.matched_ngrams, a.matched_sources) == (
                b.overlap_fraction,
                b.matched_ngrams,
                b.matched_sources,
            )
            for name, src in a.per_source.items():
                assert src.matched_ngrams == b.per_source[name].matched_ngrams
                if positions:  # exact runs, with the same evidence
                    assert src.longest_run == b.per_source[name].longest_run
                else:  # chained runs are never shorter than exact ones
                    assert b.per_source[name].longest_run >= src.longest_run
            if positions and a.evidence is not None:
                # NOTE: the whole evidence, file line and document id included.
                assert a.evidence == b.evidence
        assert got.config["runs"] == ("exact" if positions else "chained")


def test_chained_runs_are_labelled_and_can_exceed_exact_ones(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text(
        '{"text": "A B C"}\n{"text": "B C D"}\n', encoding="utf-8", newline="\n"
    )
    _build([tmp_path / "c.jsonl"], tmp_path / "idx", 3, positions=False)
    e = scan(
        ["A B C D"], index=tmp_path / "idx", n=3, policy=FlagPolicy(min_overlap=None, min_run=4)
    ).examples[0]
    assert e.longest_run == 4 and e.evidence is None


def test_fixture_through_the_cli_with_positions(tmp_path: Path) -> None:
    idx = tmp_path / "cd.idx"
    r = runner.invoke(
        app,
        ["index", "build", "-c", str(CD / "examples" / "corpus"), "-o", str(idx), "--positions"],
    )
    assert r.exit_code == 0, r.output
    r = runner.invoke(
        app, ["scan", str(CD / "examples" / "benchmark.jsonl"), "--index", str(idx), "--json"]
    )
    assert r.exit_code == 1, r.output
    data = json.loads(r.stdout)
    q1 = data["examples"][0]
    assert (q1["scores"]["overlap_fraction"], q1["scores"]["longest_run"]) == (1.0, 23)
    ev = q1["details"]["ngram"]["evidence"]
    assert ev["line"] == 3 and ev["text"].startswith("The capital")
    header = load_header(idx)
    assert header.n == 13 and header.positions and len(header.sources[0]["files"]) == 2
    assert all(len(f["sha256"]) == 64 for f in header.sources[0]["files"])
    info = runner.invoke(app, ["index", "info", str(idx)])
    assert info.exit_code == 0 and json.loads(info.stdout)["format"] == "contam.index/3"


def test_config_mismatch_is_a_clear_error(tmp_path: Path) -> None:
    idx = tmp_path / "i"
    runner.invoke(app, ["index", "build", "-c", str(CD / "examples" / "corpus"), "-o", str(idx)])
    bench = str(CD / "examples" / "benchmark.jsonl")
    r = runner.invoke(app, ["scan", bench, "--index", str(idx), "-n", "8"])
    assert r.exit_code == 2 and "n=13" in r.stderr and "n=8" in r.stderr
    r = runner.invoke(app, ["scan", bench, "--index", str(idx), "--no-casefold"])
    assert r.exit_code == 2 and "normalization" in r.stderr
    r = runner.invoke(app, ["scan", bench, "--index", str(tmp_path)])
    assert r.exit_code == 2 and "not a contam index" in r.stderr


def test_an_index_of_the_token_rule_before_marks_and_format_characters_is_refused(
    tmp_path: Path,
) -> None:
    # Built before "/2" (its header says so): its hashes of words holding a soft hyphen or a
    # combining mark are not the ones a scan computes now, so it is refused, in one line.
    idx = tmp_path / "i"
    corpus = str(CD / "examples" / "corpus")
    r = runner.invoke(app, ["index", "build", "-c", corpus, "-o", str(idx)])
    assert r.exit_code == 0, r.output
    header = idx / "header.json"
    data = json.loads(header.read_text(encoding="utf-8"))
    assert data["normalization"] == DEFAULT_NORM.describe()
    data["normalization"]["tokens"] = "letters-digits+segmented-scripts"
    header.write_text(json.dumps(data), encoding="utf-8")
    r = runner.invoke(app, ["scan", str(CD / "examples" / "benchmark.jsonl"), "--index", str(idx)])
    assert r.exit_code == 2 and r.stdout == "", r.output
    assert r.stderr.count("\n") == 1 and "letters-digits+segmented-scripts" in r.stderr
    assert "the index was built with normalization" in r.stderr


def test_refused_writes(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("some words here for the index", encoding="utf-8", newline="\n")
    r = runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(corpus / "idx")])
    assert r.exit_code == 2 and not (corpus / "idx").exists()
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine", encoding="utf-8", newline="\n")
    r = runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(other)])
    assert r.exit_code == 2 and "--force" in r.stderr
    r = runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(other), "--force"])
    assert r.exit_code == 2 and (other / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def _copy_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for p in (CD / "examples" / "corpus").iterdir():
        (corpus / p.name).write_bytes(p.read_bytes())
    return corpus


def test_a_scan_from_another_directory_keeps_full_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = _copy_corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["index", "build", "-c", "corpus", "-o", "idx", "--positions"])
    assert r.exit_code == 0, r.output
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    bench = str(CD / "examples" / "benchmark.jsonl")
    report = scan(bench, index=tmp_path / "idx")
    ev = report.examples[0].evidence
    assert ev.path == str(corpus / "doc_contaminated.txt") and ev.char_start >= 0
    assert ev.text.startswith("The capital") and not report.warnings
    assert report.stats["corpus_documents"] == 2


def test_an_index_moved_with_its_corpus_still_finds_the_files(tmp_path: Path) -> None:
    root = tmp_path / "old"
    root.mkdir()
    corpus = _copy_corpus(root)
    build = ["index", "build", "-c", str(corpus), "-o", str(root / "idx"), "--positions"]
    assert runner.invoke(app, build).exit_code == 0
    moved = tmp_path / "new"
    root.rename(moved)
    report = scan(CD / "examples" / "benchmark.jsonl", index=moved / "idx", verify=True)
    assert report.examples[0].evidence.text.startswith("The capital")
    assert report.inputs["corpus"][0]["verified"] is True


def test_verify_refuses_a_changed_or_missing_corpus_file(tmp_path: Path) -> None:
    corpus = _copy_corpus(tmp_path)
    idx = tmp_path / "idx"
    assert runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(idx)]).exit_code == 0
    bench = str(CD / "examples" / "benchmark.jsonl")
    ok = runner.invoke(app, ["scan", bench, "--index", str(idx), "--verify", "--json"])
    assert ok.exit_code == 1 and json.loads(ok.stdout)["inputs"]["corpus"][0]["verified"] is True
    plain = json.loads(runner.invoke(app, ["scan", bench, "--index", str(idx), "--json"]).stdout)
    assert plain["inputs"]["corpus"][0]["verified"] is None
    (corpus / "doc_clean.txt").write_text(
        "changed after the index was built", encoding="utf-8", newline="\n"
    )
    r = runner.invoke(app, ["scan", bench, "--index", str(idx), "--verify"])
    assert r.exit_code == 2 and "doc_clean.txt" in r.stderr and "changed" in r.stderr
    (corpus / "doc_clean.txt").unlink()
    r = runner.invoke(app, ["scan", bench, "--index", str(idx), "--verify"])
    assert r.exit_code == 2 and "missing" in r.stderr


def test_verify_refuses_a_file_added_below_a_corpus_directory(tmp_path: Path) -> None:
    # NOTE: a file added to a cached index's corpus directory was never looked at: --verify
    # checked the recorded files only and said "verified" (exit 0, the leak in the new file).
    corpus = _copy_corpus(tmp_path)
    (corpus / "doc_contaminated.txt").rename(tmp_path / "aside.txt")
    idx = tmp_path / "idx"
    build = ["index", "build", "-c", str(corpus), "-o", str(idx), "--exclude", "skip-*"]
    assert runner.invoke(app, build).exit_code == 0
    (roots,) = [s["roots"] for s in load_header(idx).sources]
    assert roots == [
        {"path": str(corpus), "relpath": "../corpus", "include": [], "exclude": ["skip-*"]}
    ]
    bench = str(CD / "examples" / "benchmark.jsonl")
    scan_args = ["scan", bench, "--index", str(idx), "--verify"]
    assert runner.invoke(app, scan_args).exit_code == 0
    (corpus / "notes.md").write_text("not a corpus format", encoding="utf-8")
    (corpus / "skip-me.txt").write_text("excluded at build", encoding="utf-8")
    assert runner.invoke(app, scan_args).exit_code == 0
    (corpus / "sub").mkdir()
    (tmp_path / "aside.txt").rename(corpus / "sub" / "new.txt")
    r = runner.invoke(app, scan_args)
    assert r.exit_code == 2, r.output
    assert f"{corpus / 'sub' / 'new.txt'}: in the corpus directory {corpus}" in r.stderr
    assert "added since it was built" in r.stderr
    # Without --verify (nothing hashed) the listing still names it: a warning, the scan runs.
    plain = runner.invoke(app, ["scan", bench, "--index", str(idx), "--json"])
    assert plain.exit_code == 0
    (warned,) = [w for w in json.loads(plain.stdout)["warnings"] if "not in the index" in w]
    assert "1 file(s) in its corpus directories are not in the index" in warned
    assert str(corpus / "sub" / "new.txt") in warned
    # Files named one by one: no directory to gain a file, so none recorded and no warning.
    files = ["index", "build", "-c", str(corpus / "doc_clean.txt"), "-o", str(tmp_path / "f")]
    assert runner.invoke(app, files).exit_code == 0
    assert [s["roots"] for s in load_header(tmp_path / "f").sources] == [[]]
    r = runner.invoke(app, ["scan", bench, "--index", str(tmp_path / "f"), "--verify"])
    assert r.exit_code == 0 and "warning" not in r.stderr
    # An index that does not say (built before, or by the library without roots) is named.
    _build([corpus / "doc_clean.txt"], tmp_path / "old", 13, False)
    r = runner.invoke(app, ["scan", bench, "--index", str(tmp_path / "old"), "--verify"])
    assert r.exit_code == 0 and "records no corpus directories" in r.stderr


def test_evidence_of_a_moved_corpus_file_is_a_warning_not_silence(tmp_path: Path) -> None:
    corpus = _copy_corpus(tmp_path)
    idx = tmp_path / "idx"
    build = ["index", "build", "-c", str(corpus), "-o", str(idx), "--positions"]
    assert runner.invoke(app, build).exit_code == 0
    (corpus / "doc_contaminated.txt").rename(tmp_path / "gone.txt")
    r = runner.invoke(app, ["scan", str(CD / "examples" / "benchmark.jsonl"), "--index", str(idx)])
    assert r.exit_code == 1 and "contam: warning:" in r.stderr and "not found" in r.stderr


def test_the_build_keeps_few_files_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    resource = pytest.importorskip("resource")
    monkeypatch.setattr(ci_build, "_BUCKET_TARGET", 1)  # 4,096 buckets
    docs = [" ".join(f"w{i * 7 + j}" for j in range(40)) for i in range(300)]
    files = _write(tmp_path, docs)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    try:
        _build(files, tmp_path / "idx", 5, positions=True)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    report = scan([docs[123]], index=tmp_path / "idx", n=5)
    assert report.examples[0].longest_run == 40


@pytest.mark.parametrize("name", ["s0.grams.u64", "s0.doc.u64", "s0.pos.u64", "s0.docs.npz"])
def test_a_truncated_index_file_is_an_error_naming_it(tmp_path: Path, name: str) -> None:
    idx = tmp_path / "idx"
    build = ["index", "build", "-c", str(CD / "examples" / "corpus"), "-o", str(idx), "--positions"]
    assert runner.invoke(app, build).exit_code == 0
    path = idx / name
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2 + 3])
    r = runner.invoke(app, ["scan", str(CD / "examples" / "benchmark.jsonl"), "--index", str(idx)])
    assert r.exit_code == 2, r.output
    assert name in r.stderr and "truncated or damaged" in r.stderr and "internal" not in r.stderr


def test_the_header_records_the_given_paths_resolved_and_urls_masked(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to(tmp_path / "a.txt")
    entry = given_entry([tmp_path / "link.txt", Url("https://u:secret@h/b/")])
    assert entry == {
        "paths": [str(tmp_path / "link.txt"), "https://***@h/b/"],
        "resolved": [str((tmp_path / "a.txt").resolve()), "https://***@h/b/"],
    }
    (tmp_path / "idx").mkdir()
    header = {"n": 3, "normalization": {}, "hash": "h", "positions": False, "tool_version": "0"}
    header["format"] = "contam.index/2"
    for bad in ({"paths": ["a"], "resolved": []}, {"paths": "a", "resolved": "a"}):
        header["sources"] = [{"name": "web", "files": [], "given": bad}]
        (tmp_path / "idx" / "header.json").write_bytes(orjson.dumps(header))
        with pytest.raises(InputError, match=r"header\.json.*bad given"):
            load_header(tmp_path / "idx").given_paths(tmp_path / "idx")
