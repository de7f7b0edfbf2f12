"""`contam index build --engine ray`: on a local Ray of 2 CPUs the index directory is the serial
build's, byte for byte (the fixtures; a corpus in many shards, with and without positions); an
input error surfaces with its file and line and nothing is left behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CD
from index_oracle import build, make_corpus, tree
from typer.testing import CliRunner

ray = pytest.importorskip(
    "ray", reason="the Ray engine needs its extra: pip install 'contam-cli[ray]'"
)

import contam_cli.engine.corpus_index.build as ci_build  # noqa: E402
import contam_cli.engine.shards as shards  # noqa: E402
from contam_cli.cli import app  # noqa: E402
from contam_cli.engine.executor import InProcess  # noqa: E402
from contam_cli.engine.ray_executor import RayExecutor  # noqa: E402

pytestmark = pytest.mark.slow  # NOTE: starting Ray takes seconds
runner = CliRunner()


@pytest.mark.parametrize("positions", [False, True])
def test_ray_builds_the_serial_index_on_many_shards(
    cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, positions: bool
) -> None:
    # NOTE: the workers do not see these patches: what they change is planned in the driver.
    monkeypatch.setattr(shards, "SHARD_BYTES", 4000)
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", 4000)
    monkeypatch.setattr(ci_build, "_BUCKET_TARGET", 16)
    monkeypatch.setattr(ci_build, "_SPILL_BYTES", 3000)
    monkeypatch.setattr(ci_build, "_REDUCE_BYTES", 5000)
    given = make_corpus(tmp_path / "corpus")
    build(given, tmp_path / "serial", positions, executor=InProcess())
    build(given, tmp_path / "ray", positions, executor=RayExecutor(max_in_flight=3))
    assert tree(tmp_path / "ray") == tree(tmp_path / "serial")


def test_the_cli_on_ray_builds_the_serial_index_of_the_fixtures(
    cluster: None, tmp_path: Path
) -> None:
    corpus = str(CD / "examples" / "corpus")
    for name, extra in (("serial", ["--jobs", "1"]), ("ray", ["--engine", "ray"])):
        args = ["index", "build", "-c", corpus, "-o", str(tmp_path / name), "--positions", *extra]
        r = runner.invoke(app, args)
        assert r.exit_code == 0, r.output
    assert tree(tmp_path / "ray") == tree(tmp_path / "serial")


def test_a_bad_line_on_ray_is_exit_2_naming_it_and_nothing_is_left(
    cluster: None, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.jsonl").write_bytes(b'{"text": "one two three"}\n{"text": broken\n')
    r = runner.invoke(app, ["index", "build", "-c", str(corpus), "-o", str(tmp_path / "idx"),
                            "--engine", "ray"])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "a.jsonl:2:" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]
