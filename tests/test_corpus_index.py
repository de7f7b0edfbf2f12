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
from contam_cli.features.scan import ScanOptions, resolve_sources
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
                assert (a.evidence.text, a.evidence.path) == (b.evidence.text, b.evidence.path)
        assert got.config["runs"] == ("exact" if positions else "chained")


def test_chained_runs_are_labelled_and_can_exceed_exact_ones(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text('{"text": "A B C"}\n{"text": "B C D"}\n')
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
    assert info.exit_code == 0 and json.loads(info.stdout)["format"] == "contam.index/2"


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


def test_refused_writes(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("some words here for the index")
    r = runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(corpus / "idx")])
    assert r.exit_code == 2 and not (corpus / "idx").exists()
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    r = runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(other)])
    assert r.exit_code == 2 and "--force" in r.stderr
    r = runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(other), "--force"])
    assert r.exit_code == 2 and (other / "keep.txt").read_text() == "mine"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
