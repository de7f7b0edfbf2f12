"""URLs and their listing, on fsspec's in-memory filesystem (no server): a prefix is listed by the
rules of a local directory (recursive, sorted, hidden names skipped, known formats, the same
globs), nothing listed is an error, URLs in a list are Url values, a missing backend or extra
names the URL and what to install, and a remote object reads like the same file on disk."""

from __future__ import annotations

import gzip
import importlib
import os
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

fsspec = pytest.importorskip("fsspec", reason="needs the extra: pip install 'contam-cli[remote]'")

from contam_cli import InputError, scan  # noqa: E402
from contam_cli.errors import ArgumentError, MissingExtraError  # noqa: E402
from contam_cli.io.discover import iter_files, list_files  # noqa: E402
from contam_cli.io.formats import detect_format, open_binary  # noqa: E402
from contam_cli.io.readers import iter_records  # noqa: E402
from contam_cli.io.remote import RemoteFile, Url, is_url, url_parts  # noqa: E402

NAMES = [
    "a.jsonl",
    "b/c.txt",
    "b/d.json.gz",
    "b/.hidden.jsonl",
    ".dot/e.jsonl",
    "notes.md",
    "z/data-00000.arrow",
    "p/rows.parquet",
    "z/state.json",
    "z/dataset_info.json",
    "y/state.json",
]


def _columnar(name: str, rows: list[dict]) -> bytes:
    """An Arrow IPC stream (as `Dataset.save_to_disk` writes) or a Parquet file of `rows`."""
    pa = pytest.importorskip("pyarrow", reason="needs the extra parquet")
    import pyarrow.parquet as pq

    table, sink = pa.Table.from_pylist(rows), pa.BufferOutputStream()
    if name.endswith(".parquet"):
        pq.write_table(table, sink)
    else:
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
    return sink.getvalue().to_pybytes()


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The same tree in memory:// and on disk."""
    fs = fsspec.filesystem("memory")
    root = f"/contam-{os.getpid()}-{tmp_path.name}"
    for name in NAMES:
        data = orjson.dumps({"text": f"text of {name}"}) + b"\n"
        data = b"[" + data + b"]" if ".json." in name or name.endswith(".json") else data
        data = gzip.compress(data, mtime=0) if name.endswith(".gz") else data
        if name.endswith((".arrow", ".parquet")):
            data = _columnar(name, [{"text": f"text of {name}"}, {"text": "a second row"}])
        fs.pipe(f"{root}/{name}", data)
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    yield f"memory://{root}/", tmp_path
    fs.rm(root, recursive=True)


def rels(files: list) -> list[str]:
    return [f.rel if isinstance(f, RemoteFile) else f.as_posix() for f in files]


@pytest.mark.parametrize(
    ("include", "exclude"), [((), ()), (("*.jsonl",), ()), ((), ("b/*",)), (("b/*",), ("*.gz",))]
)
def test_a_prefix_is_listed_like_a_directory(
    mem: tuple[str, Path], include: tuple[str, ...], exclude: tuple[str, ...]
) -> None:
    url, local = mem
    here = [p.relative_to(local).as_posix() for p in iter_files(local, include, exclude)]
    assert rels(list_files(url, include, exclude)) == here
    assert list_files(url.rstrip("/"), include, exclude) == list_files(url, include, exclude)
    if not include and not exclude:
        assert here == [
            "a.jsonl", "b/c.txt", "b/d.json.gz", "p/rows.parquet", "y/state.json",
            "z/data-00000.arrow",
        ]  # fmt: skip


def test_nothing_listed_is_an_error_naming_the_url(mem: tuple[str, Path]) -> None:
    url, _ = mem
    with pytest.raises(InputError, match="no input files found"):
        list_files(url, ("*.xz",))
    with pytest.raises(InputError, match=f"{url}nothing/: "):
        list_files(url + "nothing/")
    with pytest.raises(InputError, match=f"{url}absent.jsonl: cannot list"):
        list_files(url + "absent.jsonl")


def test_an_object_given_by_its_url_is_that_object(mem: tuple[str, Path]) -> None:
    url, local = mem
    (one,) = list_files(url + "b/d.json.gz")
    assert isinstance(one, RemoteFile)
    assert (one.rel, one.name, one.suffix, detect_format(one)) == ("", "d.json.gz", ".gz", "json")
    assert one.size == one.stat().st_size == (local / "b/d.json.gz").stat().st_size
    assert str(one) == one.url == url + "b/d.json.gz" and pickle.loads(pickle.dumps(one)) == one
    with pytest.raises(TypeError):
        os.fspath(one)  # type: ignore[call-overload]  # NOTE: never opened as a local file


def test_records_of_an_object_are_those_of_the_file(mem: tuple[str, Path]) -> None:
    url, local = mem
    for f in list_files(url):
        assert isinstance(f, RemoteFile)
        with open_binary(f) as fh, open_binary(local / f.rel) as same:
            assert fh.read() == same.read()
        there = [(r.id, r.text, r.locator.line) for r in iter_records(f, role="corpus")]
        here = [(r.id, r.text, r.locator.line) for r in iter_records(local / f.rel, role="corpus")]
        assert there == here


def test_a_remote_scan_records_sizes_and_no_sha256(mem: tuple[str, Path]) -> None:
    url, local = mem
    evals = ["text of a jsonl and more words after it"]
    report = scan(evals, url, n=3, exclude=("*.arrow",))
    files = report.inputs["corpus"][0]["files"]
    assert [f["path"] for f in files] == [url + r for r in rels(list_files(url, (), ("*.arrow",)))]
    assert all(f["sha256"] is None and f["bytes"] > 0 and "etag" in f for f in files)
    here = scan(evals, local, n=3, exclude=("*.arrow",))
    assert report.examples[0].longest_run == here.examples[0].longest_run == 4


def test_urls_and_the_input_rule() -> None:
    assert is_url("s3://b/p/") and is_url("hf://datasets/x") and not is_url(Path("s3:/b"))
    assert url_parts("s3://b/p/", "corpus") == ["s3://b/p/"]
    assert url_parts(["some text"], "corpus") is None and url_parts(Path("x"), "c") is None
    assert url_parts([Url("s3://b/p/"), Path("x")], "corpus") == ["s3://b/p/", Path("x")]
    with pytest.raises(ArgumentError, match="these are URLs"):
        url_parts(["s3://b/p/", "gs://c/"], "corpus")
    with pytest.raises(ArgumentError, match="mixes URLs and texts"):
        url_parts([Url("s3://b/p/"), "text"], "corpus")
    with pytest.raises(ArgumentError, match="not a URL"):
        Url("data/corpus")


def test_a_password_in_a_url_is_refused() -> None:
    with pytest.raises(ArgumentError, match="a URL with a password is refused") as e:
        list_files("ftp://user:hunter2@example.invalid/data/")
    assert "hunter2" not in str(e.value)


def test_a_missing_backend_or_extra_names_the_url_and_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registry = importlib.import_module("fsspec.registry")
    monkeypatch.setitem(registry.known_implementations, "nosuchfs", {
        "class": "contam_absent_backend.NoSuchFS", "err": "Install contam-absent-backend",
    })  # fmt: skip
    with pytest.raises(InputError, match=r"nosuchfs://b/x/: .*Install contam-absent-backend"):
        list_files("nosuchfs://b/x/")
    monkeypatch.delitem(registry._registry, "s3", raising=False)
    monkeypatch.setitem(sys.modules, "s3fs", None)
    with pytest.raises(MissingExtraError, match=r's3://b/x/: .*pip install "contam-cli\[remote\]"'):
        list_files("s3://b/x/")
    monkeypatch.setitem(sys.modules, "fsspec.core", None)
    with pytest.raises(MissingExtraError, match=r"'fsspec'.*contam-cli\[remote\]"):
        list_files("gs://b/x/")


def test_roles_are_checked_in_remote_chat_files(tmp_path: Path) -> None:
    from contam_cli.errors import UsageError
    from contam_cli.io.extract import TextSpec

    decontam = Path(__file__).resolve().parents[2] / "fixtures/decontam_example"
    fs = fsspec.filesystem("memory")
    url = f"memory:///contam-roles-{os.getpid()}-{tmp_path.name}/train_chat.jsonl"
    fs.pipe(url.removeprefix("memory://"), (decontam / "train_chat.jsonl").read_bytes())
    ev = decontam / "eval.jsonl"
    for roles in (("assistant",), ("user", "system")):
        spec = TextSpec(roles=roles)
        there = scan(ev, url, n=8, corpus_spec=spec)
        here = scan(ev, decontam / "train_chat.jsonl", n=8, corpus_spec=spec)
        assert [e.longest_run for e in there.examples] == [e.longest_run for e in here.examples]
    with pytest.raises(UsageError, match="has the role nobody"):
        scan(ev, url, n=8, corpus_spec=TextSpec(roles=("nobody",)))
