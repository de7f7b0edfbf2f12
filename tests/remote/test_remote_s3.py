"""Remote corpora against a real S3 protocol: moto's server, started on a free localhost port.

A scan of an S3 prefix gives the report of the same files on disk (the examples, findings and
evidence byte for byte; only the inputs' file records differ: URL, size and ETag instead of a
sha256), with byte-range shards, local worker processes and the Ray engine; a missing bucket or
prefix, and an object that cannot be read or changed since it was listed, are errors naming it;
no credential reaches a report or an output."""

from __future__ import annotations

import gzip
import hashlib
import logging
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

pytest.importorskip("s3fs", reason="needs the extra: pip install 'contam-cli[remote]'")
moto_server = pytest.importorskip(
    "moto.server", reason="the S3 tests need moto's server: pip install 'moto[server]'"
)

import contam_cli.engine.shards as shards  # noqa: E402
import contam_cli.io.remote as remote  # noqa: E402
from contam_cli import InputError, clean_corpus, scan  # noqa: E402
from contam_cli.engine.corpus_index import build_corpus_index  # noqa: E402
from contam_cli.engine.executor import InProcess, LocalProcesses  # noqa: E402
from contam_cli.engine.options import ScanOptions  # noqa: E402
from contam_cli.features.scan import resolve_sources  # noqa: E402
from contam_cli.io.batches import iter_text_batches  # noqa: E402
from contam_cli.io.discover import list_files  # noqa: E402
from contam_cli.io.remote import RemoteFile, Url  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CD = FIXTURES / "contamination_detector"
DECONTAM = FIXTURES / "decontam_example"
BUCKET = "contam-remote-test"
SECRET = "contam-test-secret-5f0c1d"
KEY_ID = "contam-test-key-id-77ab"
WORDS = "the cat sat on a mat with hat bat rat dog fox ran far and near".split()
#: (eval, local corpus, its key in the bucket, scan options)
CASES = [
    (CD / "examples/benchmark.jsonl", CD / "examples/corpus", "cd/corpus/", {}),
    (CD / "derived/mixed_examples.jsonl", CD / "examples/corpus", "cd/corpus/", {}),
    (DECONTAM / "eval.jsonl", DECONTAM / "train_chat.jsonl", "decontam/train_chat.jsonl", {"n": 8}),
]


@dataclass
class S3:
    fs: Any
    endpoint: str
    generated: Path
    evals: list[str]

    def url(self, key: str) -> str:
        return f"s3://{BUCKET}/{key}"

    def put(self, key: str, data: bytes) -> str:
        self.fs.pipe(f"{BUCKET}/{key}", data)
        return self.url(key)


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3]:
    """moto's S3 server on a free port, the environment pointing at it (dummy credentials, no
    AWS config file), the fixtures and a generated corpus uploaded."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    with pytest.MonkeyPatch.context() as mp:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
            mp.delenv(name, raising=False)
        nowhere = str(tmp_path_factory.mktemp("aws") / "none")
        mp.setenv("AWS_CONFIG_FILE", nowhere)
        mp.setenv("AWS_SHARED_CREDENTIALS_FILE", nowhere)
        mp.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
        mp.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
        mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
        mp.setenv("AWS_ENDPOINT_URL_S3", endpoint)  # NOTE: botocore's own variable: no option
        import s3fs

        fs = s3fs.S3FileSystem(skip_instance_cache=True)
        if not fs.exists(BUCKET):  # NOTE: moto's backends are per process, not per server
            fs.mkdir(BUCKET)
        for local in [CD / "examples/corpus", DECONTAM]:
            prefix = "cd/corpus" if local.name == "corpus" else "decontam"
            for f in sorted(local.rglob("*")):
                if f.is_file():
                    fs.pipe(f"{BUCKET}/{prefix}/{f.relative_to(local).as_posix()}", f.read_bytes())
        generated = tmp_path_factory.mktemp("generated")
        evals = _generate(generated)
        for f in sorted(generated.rglob("*")):
            if f.is_file():
                fs.pipe(f"{BUCKET}/gen/{f.relative_to(generated).as_posix()}", f.read_bytes())
        yield S3(fs, endpoint, generated, evals)
    server.stop()


def _generate(d: Path) -> list[str]:
    """A corpus of a big JSONL file (many byte ranges with small shards), a gzipped one (a
    whole-file shard), one in a subfolder and a hidden one (skipped), with leaks planted."""
    rng = random.Random(7)
    evals = [" ".join(rng.choices(WORDS, k=24)) for _ in range(5)]

    def lines(count: int, leak_at: set[int]) -> bytes:
        out = []
        for i in range(count):
            text = " ".join(rng.choices(WORDS, k=rng.randint(5, 60)))
            if i in leak_at:
                text += " " + evals[i % len(evals)]
            out.append(orjson.dumps({"id": f"d{i}", "text": text}) + b"\n")
        return b"".join(out)

    (d / "sub").mkdir()
    (d / "big.jsonl").write_bytes(lines(600, {3, 150, 299, 450, 598}))
    (d / "packed.jsonl.gz").write_bytes(gzip.compress(lines(120, {60}), mtime=0))
    (d / "sub" / "more.jsonl").write_bytes(lines(80, {10, 79}))
    (d / ".hidden.jsonl").write_bytes(lines(5, {0, 1, 2, 3, 4}))
    return evals


@pytest.fixture
def small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "SHARD_BYTES", 4000)
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", 4000)


def comparable(report: Any, url: str | Path, local: Path) -> bytes:
    """The report's JSON without the corpus file records, the URL written as the local path."""
    d = report.to_dict()
    corpus = [{**s, "files": None} for s in d["inputs"]["corpus"]]
    d = {**d, "inputs": {**d["inputs"], "corpus": corpus}}
    return orjson.dumps(d).replace(str(url).rstrip("/").encode(), str(local).encode())


def check_files(report: Any, local: Path) -> None:
    """Each remote file's record: its URL, size and ETag (the MD5 of a one-part upload)."""
    files = [f for s in report.inputs["corpus"] for f in s["files"]]
    assert files and all(f["path"].startswith(f"s3://{BUCKET}/") for f in files)
    for f in files:
        rel = f["path"].split("/", 4)[-1].split("/", 1)[-1]
        data = (local / rel if local.is_dir() else local).read_bytes()
        assert (f["bytes"], f["sha256"]) == (len(data), None)
        assert f["etag"] == hashlib.md5(data).hexdigest()


@pytest.mark.parametrize("case", range(len(CASES)))
def test_a_scan_of_s3_gives_the_local_report(s3: S3, case: int) -> None:
    ev, local, key, kw = CASES[case]
    here = scan(ev, local, **kw)
    there = scan(ev, s3.url(key), **kw)
    assert comparable(there, s3.url(key), local) == comparable(here, local, local)
    check_files(there, local)
    assert [e.flagged for e in there.examples] == [e.flagged for e in here.examples]
    assert any(e.flagged for e in there.examples)


def test_byte_range_shards_read_ranges_of_the_object(s3: S3, small_shards: None) -> None:
    url = s3.url("gen/")
    sources = resolve_sources(url, ScanOptions())
    names = [f.rel for f in sources[0].paths if isinstance(f, RemoteFile)]
    assert names == ["big.jsonl", "packed.jsonl.gz", "sub/more.jsonl"]  # hidden one skipped
    planned = shards.plan_shards(0, sources[0])
    ranged = [sh for sh in planned if sh.items[0][2] is not None]
    assert len(ranged) > 5 and all(isinstance(sh.items[0][1], RemoteFile) for sh in ranged)
    whole = [sh for sh in planned if sh.items[0][2] is None]
    assert any(str(it[1]).endswith(".gz") for sh in whole for it in sh.items)
    here = scan(s3.evals, s3.generated, n=8, executor=InProcess())
    for executor in (InProcess(), LocalProcesses(2)):
        there = scan(s3.evals, url, n=8, executor=executor)
        assert comparable(there, url, s3.generated) == comparable(here, s3.generated, s3.generated)
    assert sum(e.flagged for e in here.examples) == 3


@pytest.mark.slow
def test_the_ray_engine_reads_s3_in_its_workers(s3: S3, small_shards: None) -> None:
    ray = pytest.importorskip("ray", reason="the Ray engine needs its extra")
    from contam_cli.engine.ray_executor import RayExecutor

    if ray.is_initialized():
        pytest.skip("a Ray started elsewhere runs in this process (its workers lack the endpoint)")
    url = s3.url("gen/")
    here = scan(s3.evals, s3.generated, n=8)
    # NOTE: the workers inherit this environment (the endpoint, the dummy credentials).
    ray.init("local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR")  # fmt: skip
    try:
        there = scan(s3.evals, url, n=8, executor=RayExecutor())
        case = CASES[0]
        fixture = scan(case[0], s3.url(case[2]), executor=RayExecutor())
    finally:
        ray.shutdown()
    assert comparable(there, url, s3.generated) == comparable(here, s3.generated, s3.generated)
    assert comparable(fixture, s3.url(case[2]), case[1]) == comparable(
        scan(case[0], case[1]), case[1], case[1]
    )


def test_a_missing_bucket_or_prefix_is_an_error_naming_it(s3: S3) -> None:
    ev = CASES[0][0]
    for url in ("s3://no-such-bucket-contam/x/", s3.url("no/such/prefix/"), s3.url("nope.jsonl")):
        with pytest.raises(InputError, match=url.replace(".", r"\.")):
            scan(ev, url)


def test_an_object_that_cannot_be_read_fails_the_scan(s3: S3) -> None:
    import boto3

    client = boto3.client("s3")
    data = (CD / "examples/corpus/doc_clean.txt").read_bytes()
    s3.put("cold/a.txt", data)
    client.put_object(Bucket=BUCKET, Key="cold/b.txt", Body=data, StorageClass="GLACIER")
    with pytest.raises(InputError, match=r"s3://contam-remote-test/cold/b\.txt: cannot read"):
        scan(CASES[0][0], s3.url("cold/"))


def test_an_object_changed_after_listing_is_refused(
    s3: S3, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = s3.put("changing/a.jsonl", b'{"text": "one two three four"}\n' * 200)
    (listed,) = list_files(url)
    assert isinstance(listed, RemoteFile) and listed.size == 6200
    s3.put("changing/a.jsonl", b'{"text": "one two three fout"}\n' * 200)  # same size
    with pytest.raises(InputError, match=r"a\.jsonl: changed since it was listed \(ETag"):
        list(iter_text_batches(listed))
    (listed,) = list_files(url)
    monkeypatch.setattr(remote, "READ_BLOCK", 100)  # NOTE: so that reading takes many requests
    with remote.open_object(listed) as fh:
        assert fh.read(100) == b'{"text": "one two three fout"}\n' * 3 + b'{"text"'
        s3.put("changing/a.jsonl", b'{"text": "one two three four"}\n' * 200)
        with pytest.raises(InputError, match=r"a\.jsonl: changed while it was read"):
            fh.read(1000)


def test_a_corpus_clean_of_s3_writes_the_local_clean(s3: S3, tmp_path: Path) -> None:
    rule = {"window": 20, "min_piece": 40}
    ev = CASES[0][0]
    here = clean_corpus(ev, CD / "examples/corpus", tmp_path / "here", **rule)
    there = clean_corpus(ev, s3.url("cd/corpus/"), tmp_path / "there", **rule)
    files = {p.name for p in (tmp_path / "here").iterdir()}
    assert files == {p.name for p in (tmp_path / "there").iterdir()}
    for name in files - {".contam-manifest.json"}:
        assert (tmp_path / "here" / name).read_bytes() == (tmp_path / "there" / name).read_bytes()
    assert here.totals == there.totals and there.changed
    assert {f.input for f in there.files} == {s3.url(f"cd/corpus/{f.output}") for f in there.files}


def test_an_index_built_from_s3_answers_like_the_local_one(s3: S3, tmp_path: Path) -> None:
    ev, local, key, _ = CASES[0]
    opts = ScanOptions()
    for name, corpus in (("here", local), ("there", s3.url(key))):
        build_corpus_index(
            resolve_sources(corpus, opts), tmp_path / name, n=13, norm=opts.norm,
            positions=False, corpus_spec=opts.corpus_spec,
        )  # fmt: skip
    here, there = (scan(ev, index=tmp_path / name) for name in ("here", "there"))
    strip = {"inputs": None}
    assert orjson.dumps({**here.to_dict(), **strip}) == orjson.dumps({**there.to_dict(), **strip})
    header = orjson.loads((tmp_path / "there" / "header.json").read_bytes())
    for f in header["sources"][0]["files"]:
        assert f["path"].startswith("s3://") and f["sha256"] is None and f["etag"]


def test_no_credential_reaches_a_report(s3: S3) -> None:
    ev, local, key, kw = CASES[0]
    text = orjson.dumps(scan(ev, s3.url(key), **kw).to_dict())
    assert SECRET.encode() not in text and KEY_ID.encode() not in text
    assert s3.endpoint.encode() not in text


def test_urls_in_a_list_are_url_values(s3: S3) -> None:
    ev, local, key, kw = CASES[0]
    both = scan(ev, [Url(s3.url(key)), CD / "examples/benchmark.jsonl"], **kw)
    paths = [f["path"] for f in both.inputs["corpus"][0]["files"]]
    assert paths[-1] == str(CD / "examples/benchmark.jsonl") and paths[0].startswith("s3://")


# -- the command line ----------------------------------------------------------------------------


def _cli_keeps_urls() -> bool:
    """Whether the CLI hands URLs to the library (Typer's Path would turn s3:// into s3:/)."""
    import typing

    from contam_cli.cli import common, options

    corpus_type = typing.get_args(options.CorpusOpt)[0]
    named = common.corpus_argument(None, ["web=s3://b/p/"])["web"][0]
    return corpus_type == (list[str] | None) and isinstance(named, str)


cli = pytest.mark.skipif(
    not _cli_keeps_urls(), reason="the CLI keeps URLs once cli/options.py and cli/common.py do"
)


def run(*args: str) -> Any:
    from typer.testing import CliRunner

    from contam_cli.cli import app

    return CliRunner().invoke(app, list(args))


@cli
def test_contam_scan_of_an_s3_prefix(s3: S3, tmp_path: Path) -> None:
    ev, local, key, _ = CASES[0]
    out = run("scan", str(ev), "--corpus", s3.url(key), "--report", str(tmp_path / "r.json"))
    assert out.exit_code == 1, out.output
    assert f"{s3.url(key)}doc_contaminated.txt:3" in out.stdout
    assert SECRET not in out.output and KEY_ID not in out.output
    named = run("scan", str(ev), "--source", f"web={s3.url(key)}", "--json")
    assert named.exit_code == 1, named.output
    assert orjson.loads(named.stdout)["inputs"]["corpus"][0]["source"] == "web"
    report = (tmp_path / "r.json").read_bytes()
    assert SECRET.encode() not in report and b'"etag"' in report


@cli
def test_contam_exits_2_naming_a_missing_or_unreadable_object(s3: S3) -> None:
    ev = str(CASES[0][0])
    for url in ("s3://no-such-bucket-contam/data/", s3.url("no/such/prefix/")):
        out = run("scan", ev, "--corpus", url)
        assert out.exit_code == 2 and url in out.output, out.output
    s3.put("cold2/a.txt", (CD / "examples/corpus/doc_clean.txt").read_bytes())
    import boto3

    boto3.client("s3").put_object(
        Bucket=BUCKET, Key="cold2/b.txt", Body=b"x y z", StorageClass="DEEP_ARCHIVE"
    )
    out = run("scan", ev, "--corpus", s3.url("cold2/"))
    assert out.exit_code == 2 and s3.url("cold2/b.txt") in out.output, out.output


@cli
def test_contam_clean_and_index_build_of_an_s3_prefix(s3: S3, tmp_path: Path) -> None:
    ev, local, key, _ = CASES[0]
    args = ["--target", "corpus", "--window", "20", "--min-piece", "40"]
    here = run("clean", str(ev), "--corpus", str(local), "-o", str(tmp_path / "here"), *args)
    there = run("clean", str(ev), "--corpus", s3.url(key), "-o", str(tmp_path / "there"), *args)
    assert here.exit_code == there.exit_code == 1, there.output
    for p in (tmp_path / "here").iterdir():
        if p.name != ".contam-manifest.json":
            assert p.read_bytes() == (tmp_path / "there" / p.name).read_bytes()
    built = run("index", "build", "--corpus", s3.url(key), "-o", str(tmp_path / "idx"))
    assert built.exit_code == 0, built.output
    assert run("scan", str(ev), "--index", str(tmp_path / "idx")).exit_code == 1


@cli
def test_contam_without_the_extra_exits_2_naming_the_url(
    s3: S3, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "fsspec.core", None)
    out = run("scan", str(CASES[0][0]), "--corpus", s3.url("cd/corpus/"))
    assert out.exit_code == 2
    assert s3.url("cd/corpus/") in out.output and 'pip install "contam-cli[remote]"' in out.output


def _checkpoints_key_objects() -> bool:
    from contam_cli.engine.checkpoint import task_key

    shard = shards.Shard(0, ((0, RemoteFile("s3://b/a.jsonl", 1, "e"), None),), 1)
    try:
        return "1:e" in task_key(shard)
    except TypeError:
        return False


class Counting(InProcess):
    def __init__(self) -> None:
        self.ran = 0

    def map(self, work: Any, context: Any, tasks: Any, **kw: Any) -> Iterator[Any]:
        self.ran += len(tasks)
        return super().map(work, context, tasks, **kw)


@pytest.mark.skipif(
    not _checkpoints_key_objects(),
    reason="checkpoints of remote shards once engine/checkpoint.py keys them by size and ETag",
)
def test_a_checkpointed_scan_of_s3_reruns_only_a_changed_object(
    s3: S3, tmp_path: Path, small_shards: None
) -> None:
    from contam_cli.engine.checkpoint import Checkpointed

    for f in sorted(s3.generated.rglob("*.jsonl*")):
        s3.put(f"ckpt/{f.relative_to(s3.generated).as_posix()}", f.read_bytes())
    url = s3.url("ckpt/")
    first, again, changed = Counting(), Counting(), Counting()
    expected = scan(s3.evals, url, n=8, executor=Checkpointed(first, tmp_path / "c"))
    assert scan(s3.evals, url, n=8, executor=Checkpointed(again, tmp_path / "c")) == expected
    assert first.ran > 5 and again.ran == 0
    s3.put("ckpt/sub/more.jsonl", (s3.generated / "sub/more.jsonl").read_bytes() + b"\n")
    scan(s3.evals, url, n=8, executor=Checkpointed(changed, tmp_path / "c"))
    planned = shards.plan_shards(0, resolve_sources(url, ScanOptions())[0])
    assert changed.ran == sum(str(sh.items[0][1]).endswith("more.jsonl") for sh in planned) > 1
