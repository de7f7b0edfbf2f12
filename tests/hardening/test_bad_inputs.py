"""A gate that never says clean after reading less than it was given: a catalogue of bad inputs
and faults, each run through the command line.

Every case builds its inputs in a fresh directory, runs one command and checks the same things:

- the exit code: 2 for a bad input, a bad option or a failed write; the verdict (0 clean, 1
  found) where the input is fine and must be read whole;
- on exit 2, exactly one line on stderr, ``contam: error: ...``, naming the file (and line where
  there is one) or the option, no traceback, no "internal error", nothing on stdout;
- every file that was there before is unchanged (bytes and mtime), and no file was left behind:
  on exit 2 nothing at all appears, on a verdict only the outputs the case names; the private
  TMPDIR the command runs with is empty afterwards.

Cases that need a real process (a FIFO, which must not hang; a closed stdout) run ``python -m
contam_cli`` with a timeout; the rest use Typer's CliRunner in-process. Running as root, where
permissions do not apply, an unreadable file is simulated by failing its ``open``.

A case marked xfail(strict=True) fails today for the reason it gives: the code is to be fixed,
not the case.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import hashlib
import io
import json
import lzma
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import CD, FIXTURES, ROOT
from typer.testing import CliRunner

from contam_cli.cli import COMMANDS, app

zstandard = pytest.importorskip("zstandard")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX: FIFOs, symlinks")
runner = CliRunner()

BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = CD / "examples" / "corpus"
BENCH_BYTES = BENCH.read_bytes()
BENCH_RECORDS = [orjson.loads(line) for line in BENCH_BYTES.splitlines()]
LEAKED = BENCH_RECORDS[0]["text"]  # q1: in corpus/doc_contaminated.txt
CLEAN_TEXT = BENCH_RECORDS[2]["text"]  # q3: nowhere in the corpus
CUT = LEAKED.index(" ", len(LEAKED) // 2)  # a word boundary in the middle of LEAKED
FOUND = "5 examples: 2 flagged, 3 clean, 0 unscorable"
J1 = ("-j", "1")

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": lambda b: gzip.compress(b, mtime=0),
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda b: zstandard.ZstdCompressor().compress(b),
}
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


# -- the harness ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    """What one command must do."""

    args: tuple[str, ...]
    code: int = 2
    needles: tuple[str, ...] = ()
    """Substrings of the stderr line (exit 2) or of stdout (a verdict)."""
    outputs: tuple[str, ...] = ()
    """Paths, relative to the case's directory, that a successful run may create."""
    patch: Callable[[pytest.MonkeyPatch], None] | None = None
    """Faults injected around the command (in-process cases only)."""
    process: bool = False
    """Run ``python -m contam_cli`` in a real process (FIFOs, a closed stdout)."""
    closed_stdout: bool = False
    check: Callable[[str], None] | None = None
    """More checks of stdout."""


class W:
    """The case's directory: inputs in ``in/``, the working directory ``work/`` (outputs go
    there), a private TMPDIR ``tmp/`` and a model cache ``cache/`` (not checked)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for d in ("in", "work", "tmp", "cache"):
            (root / d).mkdir()
        self.input = root / "in"
        self.work = root / "work"
        self.tmp = root / "tmp"
        self.cache = root / "cache"

    def file(self, name: str, data: bytes | str) -> str:
        path = self.input / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return str(path)

    def jsonl(self, name: str, records: list[Any]) -> str:
        return self.file(name, b"".join(orjson.dumps(r) + b"\n" for r in records))

    def bench(self, name: str = "bench.jsonl") -> str:
        return self.file(name, BENCH_BYTES)

    def corpus(self, name: str = "corpus") -> str:
        target = self.input / name
        if not target.exists():
            shutil.copytree(CORPUS, target)
        return str(target)

    def out(self, name: str) -> str:
        return str(self.work / name)

    def afile(self) -> str:
        """A plain file in the working directory (for ``afile/r.json``)."""
        path = self.work / "afile"
        path.write_text("not a directory\n")
        return str(path)


Case = Callable[[W], Expect]
CASES: list[Any] = []


def case(name: str, *, xfail: str | None = None) -> Callable[[Case], Case]:
    """Register a case under `name` (its test id); `xfail`: why it fails today (strict)."""

    def register(fn: Case) -> Case:
        marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
        CASES.append(pytest.param(fn, id=name, marks=marks))
        return fn

    return register


def snapshot(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every path below `root` (cache/ aside) with its kind and, for files, content and mtime;
    symlinks are not followed and FIFOs never opened."""
    out: dict[str, tuple[Any, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        if rel_dir.parts[:1] == ("cache",):
            continue
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            rel = (rel_dir / name).as_posix()
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir",)
            elif stat.S_ISREG(st.st_mode):
                try:
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                except PermissionError:
                    digest = None
                out[rel] = ("file", digest, st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode))
            else:
                out[rel] = ("special", stat.S_IFMT(st.st_mode))
    return out


@dataclass
class Ran:
    code: int
    stdout: str
    stderr: str
    exception: BaseException | None = None


def _env(w: W) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        TMPDIR=str(w.tmp),
        CONTAM_CACHE_DIR=str(w.cache),
        COLUMNS="200",
        TERM="dumb",
        PYTHONPATH=str(ROOT),
    )
    env.pop("FORCE_COLOR", None)
    return env


def _in_process(e: Expect, w: W, monkeypatch: pytest.MonkeyPatch) -> Ran:
    with monkeypatch.context() as m:
        m.chdir(w.work)
        m.setenv("TMPDIR", str(w.tmp))
        m.setenv("CONTAM_CACHE_DIR", str(w.cache))
        m.setattr(tempfile, "tempdir", str(w.tmp))
        if e.patch is not None:
            e.patch(m)
        result = runner.invoke(app, list(e.args))
    return Ran(result.exit_code, result.stdout, result.stderr, result.exception)


def _process(e: Expect, w: W) -> Ran:
    command = [sys.executable, "-m", "contam_cli", *e.args]
    if not e.closed_stdout:
        proc = subprocess.run(
            command, cwd=w.work, env=_env(w), capture_output=True, text=True, timeout=120
        )
        return Ran(proc.returncode, proc.stdout, proc.stderr)
    # NOTE: stdout is a pipe whose reader is gone before the command writes a byte (what `| head`
    # does to a long output): every write raises EPIPE.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            command,
            cwd=w.work,
            env=_env(w),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    return Ran(proc.returncode, "", proc.stderr)


def _allowed(outputs: tuple[str, ...], root: Path) -> set[str]:
    """The named outputs, everything below them, and their parent directories."""
    allowed: set[str] = set()
    for name in outputs:
        rel = Path(name)
        allowed.add(rel.as_posix())
        allowed.update(p.as_posix() for p in rel.parents if p.as_posix() != ".")
        full = root / rel
        if full.is_dir():
            allowed.update(p.relative_to(root).as_posix() for p in full.rglob("*"))
    return allowed


@pytest.mark.parametrize("build", CASES)
def test_bad_input(build: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = W(tmp_path)
    e = build(w)
    before = snapshot(tmp_path)
    ran = _process(e, w) if e.process else _in_process(e, w, monkeypatch)
    after = snapshot(tmp_path)
    where = f"exit {ran.code}\nstdout: {ran.stdout[-2000:]}\nstderr: {ran.stderr[-2000:]}"
    assert ran.exception is None or isinstance(ran.exception, SystemExit), (
        f"{where}\nexception: {ran.exception!r}"
    )
    assert ran.code == e.code, where
    assert "Traceback" not in ran.stderr, where
    assert "internal error" not in ran.stderr, where
    if e.code == 2:
        lines = ran.stderr.strip().splitlines()
        assert len(lines) == 1, where
        assert lines[0].startswith("contam: error: "), where
        for needle in e.needles:
            assert needle in lines[0], f"{needle!r} not in the error line\n{where}"
        assert ran.stdout == "", where
    else:
        for line in ran.stderr.strip().splitlines():
            assert line.startswith("contam: warning: "), where
        for needle in e.needles:
            assert needle in ran.stdout, f"{needle!r} not in stdout\n{where}"
        if e.check is not None:
            e.check(ran.stdout)
    changed = sorted(p for p in before if before[p] != after.get(p))
    assert changed == [], f"inputs changed or removed: {changed}\n{where}"
    created = set(after) - set(before)
    allowed = _allowed(e.outputs, tmp_path) if e.code != 2 else set()
    assert created <= allowed, f"left behind: {sorted(created - allowed)}\n{where}"
    for name in e.outputs if e.code != 2 else ():
        assert (tmp_path / name).exists(), f"{name} was not written\n{where}"
    assert os.listdir(w.tmp) == [], f"left in TMPDIR: {os.listdir(w.tmp)}"


# -- faults --------------------------------------------------------------------------------------


def _unreadable(path: str) -> Callable[[pytest.MonkeyPatch], None]:
    """`path` cannot be opened (Permission denied): chmod 000 as a user; as root, where
    permissions do not apply, its open fails as it would."""
    if not IS_ROOT:
        os.chmod(path, 0)
        return lambda m: None
    target = os.path.realpath(path)
    real_open, real_io_open = open, io.open

    def refuse(opener: Callable[..., Any]) -> Callable[..., Any]:
        def fake(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, (str, os.PathLike)) and os.path.realpath(file) == target:
                raise PermissionError(errno.EACCES, "Permission denied", str(file))
            return opener(file, *args, **kwargs)

        return fake

    def patch(m: pytest.MonkeyPatch) -> None:
        import builtins

        m.setattr(builtins, "open", refuse(real_open))
        m.setattr(io, "open", refuse(real_io_open))

    return patch


class _FullFile:
    """A file whose writes fail as on a full disk."""

    def __init__(self, fh: Any) -> None:
        self._fh = fh

    def write(self, data: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def writelines(self, lines: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)

    def __enter__(self) -> _FullFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._fh)


def _disk_full(under: Path) -> Callable[[pytest.MonkeyPatch], None]:
    """A full disk below `under`: fsync fails with ENOSPC, and so does every write to a file
    opened for writing there (including by file descriptor, as the atomic writers do)."""
    real_open, real_io_open = open, io.open
    base = str(under.resolve())

    def full_open(opener: Callable[..., Any]) -> Callable[..., Any]:
        def fake(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            fh = opener(file, mode, *args, **kwargs)
            writing = any(c in mode for c in "wax+")
            inside = isinstance(file, int) or os.path.realpath(file).startswith(base)
            return _FullFile(fh) if writing and inside else fh

        return fake

    def fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def patch(m: pytest.MonkeyPatch) -> None:
        import builtins

        m.setattr(os, "fsync", fsync)
        m.setattr(builtins, "open", full_open(real_open))
        m.setattr(io, "open", full_open(real_io_open))

    return patch


def _without(*modules: str) -> Callable[[pytest.MonkeyPatch], None]:
    """The optional modules cannot be imported (an extra that is not installed)."""

    def patch(m: pytest.MonkeyPatch) -> None:
        for name in modules:
            m.setitem(sys.modules, name, None)

    return patch


def _records(*texts: str, key: str = "text") -> list[dict[str, Any]]:
    return [{"id": f"r{i}", key: t} for i, t in enumerate(texts)]


def _truncated(comp: str, data: bytes = BENCH_BYTES * 4) -> bytes:
    packed = COMPRESS[comp](data)
    return packed[: len(packed) * 2 // 3]


def _scan(*args: str) -> tuple[str, ...]:
    return ("scan", *args, *J1)


def _one_line_rows(stdout: str) -> None:
    """The table: one line per example plus the header and the summary, nothing wrapped."""
    lines = stdout.rstrip("\n").splitlines()
    assert lines[-1].startswith("5 examples: "), lines[-1]
    assert len(lines) == 7, lines
    assert "\x1b" not in stdout


# == scan: the eval side ==========================================================================

EMPTY_OR_BLANK = [
    ("empty-jsonl", "e.jsonl", b""),
    ("empty-ndjson", "e.ndjson", b""),
    ("empty-json", "e.json", b""),
    ("empty-txt", "e.txt", b""),
    ("blank-jsonl", "e.jsonl", b"\n  \n\t\r\n\n"),
    ("blank-json", "e.json", b"  \n\n\t"),
    ("blank-txt", "e.txt", b"\n \n\r\n\t\n"),
    ("empty-json-array", "e.json", b"[]"),
    ("empty-json-object-array", "e.json", b'{"data": []}'),
    ("gzip-of-nothing", "e.jsonl.gz", gzip.compress(b"")),
    ("bz2-of-blank-lines", "e.jsonl.bz2", bz2.compress(b"\n\n\n")),
    ("zero-byte-gz", "e.jsonl.gz", b""),
    ("zero-byte-bz2", "e.jsonl.bz2", b""),
    ("zero-byte-xz", "e.jsonl.xz", b""),
    ("zero-byte-zst", "e.jsonl.zst", b""),
]
for _id, _name, _data in EMPTY_OR_BLANK:

    def _build(w: W, name: str = _name, data: bytes = _data) -> Expect:
        return Expect(_scan(w.file(name, data), "-c", w.corpus()), needles=(name,))

    case(f"scan-eval-{_id}")(_build)


def _compressed_cases() -> Iterator[tuple[str, str, bytes, str]]:
    for comp in COMPRESS:
        yield f"truncated{comp}", f"t.jsonl{comp}", _truncated(comp), "t.jsonl" + comp
        yield f"corrupt{comp}", f"c.jsonl{comp}", b"this is not compressed at all\n" * 3, comp
        # NOTE: a whole stream, then bytes that start no stream: a damaged second stream of a
        # multi-stream file (pbzip2, xz -T, zstd --rsyncable); the tail holds more records.
        tail = b"\x00garbage that used to be the second stream, with more records"
        yield f"trailing-garbage{comp}", f"g.jsonl{comp}", COMPRESS[comp](BENCH_BYTES) + tail, comp


for _id, _name, _data, _needle in _compressed_cases():

    def _build_eval(w: W, name: str = _name, data: bytes = _data, needle: str = _needle) -> Expect:
        return Expect(_scan(w.file(name, data), "-c", w.corpus()), needles=(name, needle))

    def _build_corpus(w: W, name: str = _name, data: bytes = _data) -> Expect:
        return Expect(_scan(w.bench(), "-c", w.file(f"corpus/{name}", data)), needles=(name,))

    case(f"scan-eval-{_id}")(_build_eval)
    case(f"scan-corpus-{_id}")(_build_corpus)


@case("scan-eval-multi-stream-compressed-is-read-whole")
def _(w: W) -> Expect:
    half = len(BENCH_BYTES) // 2
    cut = BENCH_BYTES.rfind(b"\n", 0, half) + 1
    data = b"".join(COMPRESS[".bz2"](part) for part in (BENCH_BYTES[:cut], b"", BENCH_BYTES[cut:]))
    return Expect(_scan(w.file("m.jsonl.bz2", data), "-c", w.corpus()), code=1, needles=(FOUND,))


ENCODINGS = [
    ("invalid-utf8-jsonl", "u.jsonl",
     b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "caf\xe9"}\n', "u.jsonl:2:"),
    ("invalid-utf8-json", "u.json",
     b'[\n{"id": "a", "text": "ok"},\n{"id": "b", "text": "\xff"}\n]', "u.json:3"),
    ("invalid-utf8-txt", "u.txt", b"a fine first line\ncaf\xe9 au lait\n", "u.txt:2:"),
    ("invalid-utf8-gz", "u.jsonl.gz", gzip.compress(b'{"id": "a", "text": "\xc3"}\n'),
     "u.jsonl.gz:1"),
    ("nul-byte-in-a-json-string", "n.jsonl", b'{"id": "a", "text": "x\x00y"}\n', "n.jsonl:1:"),
    ("nul-byte-outside-json", "n.jsonl", b'{"id": "a", "text": "x"}\x00\n', "n.jsonl:1:"),
    ("nul-bytes-only", "n.jsonl", b"\x00\x00\x00\n", "n.jsonl:1:"),
    ("bom-inside-the-file", "b.jsonl", b'{"id": "a", "text": "x"}\n\xef\xbb\xbf{"id": "b"}\n',
     "b.jsonl:2:"),
    ("utf16-file", "w.jsonl", '{"id": "a", "text": "x"}\n'.encode("utf-16"), "w.jsonl:1:"),
    ("malformed-json-line", "m.jsonl", b'{"id": "a", "text": "x y"}\n{"id": "b", "text": \n',
     "m.jsonl:2:"),
    ("json-extra-data", "x.json", b'[{"id": "a", "text": "x"}] [1]', "x.json:1"),
    ("json-truncated-array", "x.json", b'[{"id": "a", "text": "x"},\n{"id": "b"', "x.json:2"),
    ("json-records-key-repeated", "x.json",
     b'{"data": [{"id": "a", "text": "x"}],\n "data": [{"id": "b", "text": "y"}]}', "x.json:2"),
    ("json-two-record-arrays", "x.json", b'{"a": [{"text": "x"}], "b": [{"text": "y"}]}',
     "x.json:1"),
]  # fmt: skip
for _id, _name, _data, _needle in ENCODINGS:

    def _build(w: W, name: str = _name, data: bytes = _data, needle: str = _needle) -> Expect:
        return Expect(_scan(w.file(name, data), "-c", w.corpus()), needles=(needle,))

    case(f"scan-eval-{_id}")(_build)


def _variant(transform: Callable[[bytes], bytes], name: str) -> Case:
    def build(w: W) -> Expect:
        return Expect(
            _scan(w.file(name, transform(BENCH_BYTES)), "-c", w.corpus()), code=1, needles=(FOUND,)
        )

    return build


def _as_json_array(data: bytes) -> bytes:
    return b"[\n" + b",\n".join(data.splitlines()) + b"\n]\n"


def _as_txt(data: bytes) -> bytes:
    return b"\n".join(orjson.loads(line)["text"].encode() for line in data.splitlines()) + b"\n"


BOM = b"\xef\xbb\xbf"
FINE_VARIANTS = [
    ("bom-jsonl", "b.jsonl", lambda b: BOM + b),
    ("bom-json", "b.json", lambda b: BOM + _as_json_array(b)),
    ("bom-txt", "b.txt", lambda b: BOM + _as_txt(b)),
    ("crlf-jsonl", "c.jsonl", lambda b: b.replace(b"\n", b"\r\n")),
    ("crlf-json", "c.json", lambda b: _as_json_array(b).replace(b"\n", b"\r\n")),
    ("crlf-txt", "c.txt", lambda b: _as_txt(b).replace(b"\n", b"\r\n")),
    ("bom-crlf-gz", "c.jsonl.gz", lambda b: gzip.compress(BOM + b.replace(b"\n", b"\r\n"))),
    ("no-final-newline", "n.jsonl", lambda b: b.rstrip(b"\n")),
    ("blank-lines-between", "n.jsonl", lambda b: b"\n\n" + b.replace(b"\n", b"\n \n") + b"\n\n"),
    ("json-object-holding-the-array",
     "o.json", lambda b: b'{"version": 2, "tags": ["x"], "rows": ' + _as_json_array(b) + b"}"),
    ("zstd-multi-frame", "z.jsonl.zst",
     lambda b: COMPRESS[".zst"](b[:400]) + COMPRESS[".zst"](b[400:])),
    ("xz-stream-padding", "p.jsonl.xz", lambda b: lzma.compress(b) + b"\0" * 8),
]  # fmt: skip
for _id, _name, _transform in FINE_VARIANTS:
    case(f"scan-eval-{_id}-is-read-whole")(_variant(_transform, _name))


@case("scan-corpus-bom-and-crlf-are-read-whole")
def _(w: W) -> Expect:
    corpus = w.corpus()
    doc = Path(corpus, "doc_contaminated.txt")
    doc.write_bytes(BOM + doc.read_bytes().replace(b"\n", b"\r\n"))
    return Expect(_scan(w.bench(), "-c", corpus), code=1, needles=(FOUND,))


@case("scan-nul-byte-in-a-txt-line-is-text")
def _(w: W) -> Expect:
    eval_path = w.file("n.txt", LEAKED.replace(" ", "\x00", 3).encode() + b"\n")
    return Expect(_scan(eval_path, "-c", w.corpus()), code=1, needles=("1 flagged",))


@case("scan-escaped-nul-in-jsonl-is-text")
def _(w: W) -> Expect:
    eval_path = w.jsonl("n.jsonl", [{"id": "a", "text": LEAKED.replace(" ", "\u0000", 2)}])
    return Expect(_scan(eval_path, "-c", w.corpus()), code=1, needles=("1 flagged",))


WRONG_TYPES = [
    ("record-is-a-number", b"42\n", "record is a number"),
    ("record-is-an-array", b'[1, "x"]\n', "record is an array"),
    ("record-is-null", b"null\n", "record is null"),
    ("record-is-a-boolean", b"true\n", "record is a boolean"),
    ("text-is-an-object", b'{"id": "a", "text": {"en": "x"}}\n', "field 'text' is an object"),
    ("text-list-holds-an-object", b'{"id": "a", "text": ["x", {"k": 1}]}\n', "field 'text'"),
    ("text-list-holds-a-list", b'{"id": "a", "text": [["x"]]}\n', "field 'text'"),
    ("no-text-field", b'{"id": "a", "body": "x"}\n', "no text field found"),
    ("chat-part-without-type", b'{"id": "a", "messages": [{"role": "user", "content": '
     b'[{"url": "x"}]}]}\n', "field 'content'"),
]  # fmt: skip
for _id, _data, _needle in WRONG_TYPES:

    def _build(w: W, data: bytes = _data, needle: str = _needle) -> Expect:
        good = orjson.dumps({"id": "ok", "text": LEAKED}) + b"\n"
        return Expect(
            _scan(w.file("t.jsonl", good + data), "-c", w.corpus()), needles=("t.jsonl:2:", needle)
        )

    def _build_corpus(w: W, data: bytes = _data, needle: str = _needle) -> Expect:
        good = orjson.dumps({"text": CLEAN_TEXT}) + b"\n"
        corpus = w.file("corpus/c.jsonl", good + data)
        return Expect(_scan(w.bench(), "-c", corpus), needles=("c.jsonl:2:", needle))

    case(f"scan-eval-{_id}")(_build)
    case(f"scan-corpus-{_id}")(_build_corpus)


@case("scan-json-array-element-is-a-number")
def _(w: W) -> Expect:
    data = b'[\n  {"id": "a", "text": "x"},\n  7\n]\n'
    return Expect(_scan(w.file("a.json", data), "-c", w.corpus()), needles=("a.json:3:",))


@case("scan-text-is-a-number-or-list-of-ints-is-read")
def _(w: W) -> Expect:
    rows = [{"id": "n", "text": 12345}, {"id": "l", "text": [1, 2]}, {"id": "q1", "text": LEAKED}]
    return Expect(
        _scan(w.jsonl("t.jsonl", rows), "-c", w.corpus()),
        code=1,
        needles=("3 examples: 1 flagged, 0 clean, 2 unscorable",),
    )


@case("scan-chat-content-text-parts-are-read")
def _(w: W) -> Expect:
    cut = LEAKED.index(" ", 60)
    parts = [{"type": "text", "text": LEAKED[:cut]}, {"type": "input_text", "text": LEAKED[cut:]}]
    rows = [{"id": "c", "messages": [{"role": "user", "content": parts}]}]
    return Expect(_scan(w.jsonl("c.jsonl", rows), "-c", w.corpus()), code=1, needles=("1 flagged",))


@case("scan-chat-image-parts-only-are-unscorable-not-clean")
def _(w: W) -> Expect:
    image = {"type": "image_url", "image_url": {"url": "https://example.org/a.png"}}
    rows = [
        {"id": "img", "messages": [{"role": "user", "content": [image]}]},
        {"id": "q1", "messages": [{"role": "user", "content": [image, {"type": "text",
                                                                        "text": LEAKED}]}]},
    ]  # fmt: skip
    return Expect(
        _scan(w.jsonl("c.jsonl", rows), "-c", w.corpus()),
        code=1,
        needles=("2 examples: 1 flagged, 0 clean, 1 unscorable",),
    )


@case("scan-sharegpt-chat-is-read")
def _(w: W) -> Expect:
    rows = [{"id": "s", "conversations": [{"from": "human", "value": "Tell me."},
                                          {"from": "gpt", "value": LEAKED}]}]  # fmt: skip
    return Expect(_scan(w.jsonl("s.jsonl", rows), "-c", w.corpus()), code=1, needles=("1 flagged",))


@case("scan-every-example-unscorable")
def _(w: W) -> Expect:
    eval_path = w.jsonl("short.jsonl", _records("two words", "three small words"))
    return Expect(_scan(eval_path, "-c", w.corpus()), needles=("short.jsonl", "n=13"))


# -- fields and ids ------------------------------------------------------------------------------


def _fields_case(
    rows: list[Any], extra: tuple[str, ...], code: int, needles: tuple[str, ...]
) -> Case:
    def build(w: W) -> Expect:
        return Expect(
            _scan(w.jsonl("f.jsonl", rows), "-c", w.corpus(), *extra), code=code, needles=needles
        )

    return build


FIELD_CASES = [
    ("missing-field", [{"id": "a", "question": LEAKED}], ("--field", "prompt"), 2,
     ("f.jsonl:1:", "'prompt' not found")),
    ("field-missing-in-a-later-record", [{"id": "a", "q": LEAKED}, {"id": "b", "x": 1}],
     ("--field", "q"), 2, ("f.jsonl:2:", "'q'")),
    ("field-list-index-out-of-range", [{"id": "a", "choices": [LEAKED]}],
     ("--field", "choices.3"), 2, ("f.jsonl:1:", "choices.3")),
    ("field-holds-an-object", [{"id": "a", "q": {"text": LEAKED}}], ("--field", "q"), 2,
     ("f.jsonl:1:", "'q'")),
    ("nested-field-is-read", [{"id": "a", "q": {"body": [LEAKED]}}], ("--field", "q.body.0"), 1,
     ("1 flagged",)),
    ("dotted-key-is-read", [{"id": "a", "q.body": LEAKED}], ("--field", "q.body"), 1,
     ("1 flagged",)),
    ("two-fields-are-joined", [{"id": "a", "q": LEAKED[:CUT], "a": LEAKED[CUT + 1 :]}],
     ("--field", "q", "--field", "a"), 1, ("1 flagged",)),
    ("id-field-missing", [{"id": "a", "text": LEAKED}], ("--id-field", "uid"), 2,
     ("f.jsonl:1:", "id field 'uid' not found")),
    ("id-field-is-a-boolean", [{"k": True, "text": LEAKED}], ("--id-field", "k"), 2,
     ("f.jsonl:1:", "is a boolean")),
    ("id-field-is-null", [{"k": None, "text": LEAKED}], ("--id-field", "k"), 2,
     ("f.jsonl:1:", "is null")),
    ("id-field-is-an-object", [{"k": {"a": 1}, "text": LEAKED}], ("--id-field", "k"), 2,
     ("f.jsonl:1:", "is an object")),
    ("id-field-is-a-float", [{"k": 1.5, "text": LEAKED}], ("--id-field", "k"), 1, ("1.5 ",)),
    ("id-field-nested", [{"meta": {"id": "m7"}, "text": LEAKED}], ("--id-field", "meta.id"), 1,
     ("m7 ",)),
    ("duplicate-ids", [{"id": "a", "text": LEAKED}, {"id": "a", "text": CLEAN_TEXT}], (), 2,
     ("f.jsonl:2:", "duplicate id 'a'", "f.jsonl:1")),
    ("duplicate-ids-number-and-string", [{"id": 1, "text": LEAKED}, {"id": "1", "text": "x"}],
     (), 2, ("f.jsonl:2:", "duplicate id '1'")),
    ("duplicate-ids-through-id-field", [{"k": "x", "text": "a"}, {"k": "x", "text": "b"}],
     ("--id-field", "k"), 2, ("f.jsonl:2:", "duplicate id 'x'")),
    ("empty-string-id", [{"id": "", "text": LEAKED}, {"id": "b", "text": CLEAN_TEXT}], (), 1,
     ("2 examples: 1 flagged, 1 clean",)),
    ("unicode-id", [{"id": "問題-①-é", "text": LEAKED}], (), 1, ("問題-①-é",)),
]  # fmt: skip
for _id, _rows, _extra, _code, _needles in FIELD_CASES:
    case(f"scan-{_id}")(_fields_case(_rows, _extra, _code, _needles))


@case("scan-missing-corpus-field")
def _(w: W) -> Expect:
    corpus = w.jsonl("corpus/c.jsonl", [{"body": LEAKED}])
    return Expect(
        _scan(w.bench(), "-c", corpus, "--corpus-field", "text"),
        needles=("c.jsonl:1:", "'text' not found"),
    )


@case("scan-duplicate-ids-across-files")
def _(w: W) -> Expect:
    a = w.jsonl("a.jsonl", [{"id": "x", "text": LEAKED}])
    b = w.jsonl("b.jsonl", [{"id": "y", "text": "y"}, {"id": "x", "text": CLEAN_TEXT}])
    return Expect(_scan(a, b, "-c", w.corpus()), needles=("b.jsonl:2:", "duplicate id 'x'"))


@case("scan-the-same-eval-file-twice")
def _(w: W) -> Expect:
    bench = w.bench()
    os.symlink(bench, w.input / "alias.jsonl")
    return Expect(
        _scan(bench, str(w.input / "alias.jsonl"), "-c", w.corpus()), needles=("alias.jsonl",)
    )


@case("scan-odd-ids-in-the-table-stay-one-line-each")
def _(w: W) -> Expect:
    rows = [dict(r) for r in BENCH_RECORDS]
    rows[0]["id"] = "x" * 250
    rows[1]["id"] = "line\nbreak\ttab\rreturn"
    rows[2]["id"] = "🙂" * 30

    def check(stdout: str) -> None:
        _one_line_rows(stdout)
        assert "x" * 30 in stdout and "🙂" in stdout

    return Expect(
        _scan(w.jsonl("ids.jsonl", rows), "-c", w.corpus()),
        code=1,
        needles=(FOUND,),
        check=check,
    )


@case(
    "scan-control-characters-of-an-id-do-not-reach-the-terminal",
)
def _(w: W) -> Expect:
    rows = [dict(r) for r in BENCH_RECORDS]
    rows[0]["id"] = "esc\x1b[31mred\x1b[0m\x07bell"
    return Expect(
        _scan(w.jsonl("ids.jsonl", rows), "-c", w.corpus()),
        code=1,
        needles=(FOUND,),
        check=_one_line_rows,
    )


@case("scan-control-characters-of-an-unscorable-id-do-not-reach-the-terminal")
def _(w: W) -> Expect:
    rows = [dict(r) for r in BENCH_RECORDS]
    rows.append({"id": "u\x1b[2Jcls\nline", "text": "too short"})

    def check(stdout: str) -> None:
        assert "\x1b" not in stdout
        assert "  u\\x1b[2Jcls line  2 tokens  " in stdout, stdout
        assert stdout.rstrip("\n").splitlines()[-1].startswith("6 examples: "), stdout

    return Expect(_scan(w.jsonl("ids.jsonl", rows), "-c", w.corpus()), code=1, check=check)


@case("scan-250-character-id-is-whole-in-the-json")
def _(w: W) -> Expect:
    rows = [dict(r) for r in BENCH_RECORDS]
    rows[0]["id"] = "k" * 250

    def check(stdout: str) -> None:
        ids = [e["id"] for e in json.loads(stdout)["examples"]]
        assert "k" * 250 in ids

    return Expect(
        (*_scan(w.jsonl("ids.jsonl", rows), "-c", w.corpus()), "--json"), code=1, check=check
    )


# -- files that are not files --------------------------------------------------------------------


@case("scan-eval-is-a-fifo-and-does-not-hang")
def _(w: W) -> Expect:
    os.mkfifo(w.input / "eval.jsonl")
    return Expect(
        ("scan", str(w.input / "eval.jsonl"), "-c", w.corpus(), *J1),
        needles=("eval.jsonl", "FIFO"),
        process=True,
    )


@case("scan-corpus-is-a-fifo-and-does-not-hang")
def _(w: W) -> Expect:
    os.mkfifo(w.input / "corpus.jsonl")
    return Expect(
        ("scan", w.bench(), "-c", str(w.input / "corpus.jsonl"), *J1),
        needles=("corpus.jsonl", "FIFO"),
        process=True,
    )


@case("scan-fifo-inside-the-corpus-directory-does-not-hang")
def _(w: W) -> Expect:
    corpus = w.corpus()
    os.mkfifo(Path(corpus, "pipe.jsonl"))
    return Expect(
        ("scan", w.bench(), "-c", corpus, *J1), needles=("pipe.jsonl", "FIFO"), process=True
    )


@case("scan-corpus-symlink-loop")
def _(w: W) -> Expect:
    corpus = w.corpus()
    os.symlink(corpus, Path(corpus, "loop"), target_is_directory=True)
    return Expect(_scan(w.bench(), "-c", corpus), needles=("loop", "reached twice"))


@case("scan-eval-directory-symlink-loop")
def _(w: W) -> Expect:
    d = w.input / "evals"
    w.bench("evals/a.jsonl")
    os.symlink(d, d / "again", target_is_directory=True)
    return Expect(_scan(str(d), "-c", w.corpus()), needles=("again", "reached twice"))


@case("scan-eval-broken-symlink")
def _(w: W) -> Expect:
    os.symlink(w.input / "gone.jsonl", w.input / "eval.jsonl")
    return Expect(
        _scan(str(w.input / "eval.jsonl"), "-c", w.corpus()),
        needles=("eval.jsonl", "broken symlink"),
    )


@case("scan-corpus-broken-symlink-in-a-directory")
def _(w: W) -> Expect:
    corpus = w.corpus()
    os.symlink(w.input / "gone.txt", Path(corpus, "gone.txt"))
    return Expect(_scan(w.bench(), "-c", corpus), needles=("gone.txt", "cannot read file"))


@case("scan-symlinked-corpus-directory-is-followed")
def _(w: W) -> Expect:
    corpus = w.corpus("real")
    (w.input / "top").mkdir()
    os.symlink(corpus, w.input / "top" / "linked", target_is_directory=True)
    return Expect(_scan(w.bench(), "-c", str(w.input / "top")), code=1, needles=(FOUND,))


@case("scan-eval-unreadable")
def _(w: W) -> Expect:
    bench = w.bench("locked.jsonl")
    return Expect(
        _scan(bench, "-c", w.corpus()),
        needles=("locked.jsonl", "Permission denied"),
        patch=_unreadable(bench),
    )


@case("scan-corpus-file-unreadable")
def _(w: W) -> Expect:
    corpus = w.corpus()
    locked = str(Path(corpus, "doc_contaminated.txt"))
    return Expect(
        _scan(w.bench(), "-c", corpus, "--no-corpus-hash"),
        needles=("doc_contaminated.txt", "Permission denied"),
        patch=_unreadable(locked),
    )


@case("scan-corpus-directory-unlistable")
def _(w: W) -> Expect:
    corpus = w.corpus()
    secret = Path(corpus, "secret")
    secret.mkdir()
    (secret / "more.txt").write_text(LEAKED)
    real = os.scandir

    def scandir(path: Any = ".") -> Any:
        if str(path).endswith("secret"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    return Expect(
        _scan(w.bench(), "-c", corpus),
        needles=("secret", "cannot list directory"),
        patch=lambda m: m.setattr(os, "scandir", scandir),
    )


@case("scan-eval-directory-without-inputs")
def _(w: W) -> Expect:
    w.file("evals/notes.csv", "id,text\n")
    w.file("evals/.hidden.jsonl", BENCH_BYTES)
    return Expect(_scan(str(w.input / "evals"), "-c", w.corpus()), needles=("evals", "no input"))


@case("scan-corpus-directory-empty")
def _(w: W) -> Expect:
    (w.input / "empty").mkdir()
    return Expect(_scan(w.bench(), "-c", str(w.input / "empty")), needles=("empty", "no input"))


@case("scan-corpus-include-matches-nothing")
def _(w: W) -> Expect:
    return Expect(
        _scan(w.bench(), "-c", w.corpus(), "--include", "*.nothing"),
        needles=("corpus", "no input files found"),
    )


@case("scan-eval-unknown-format")
def _(w: W) -> Expect:
    return Expect(
        _scan(w.file("e.csv", "id,text\n"), "-c", w.corpus()),
        needles=("e.csv", "unknown file format"),
    )


@case("scan-corpus-unknown-format-given-as-a-file")
def _(w: W) -> Expect:
    return Expect(
        _scan(w.bench(), "-c", w.file("c.tsv", "a\tb\n")), needles=("c.tsv", "unknown file format")
    )


@case("scan-corpus-compressed-parquet-is-unknown")
def _(w: W) -> Expect:
    return Expect(
        _scan(w.bench(), "-c", w.file("c.parquet.gz", gzip.compress(b"PAR1"))),
        needles=("c.parquet.gz", "unknown file format"),
    )


@case("scan-eval-missing")
def _(w: W) -> Expect:
    return Expect(
        _scan(str(w.input / "nope.jsonl"), "-c", w.corpus()), needles=("nope.jsonl", "no such")
    )


@case("scan-corpus-missing")
def _(w: W) -> Expect:
    return Expect(_scan(w.bench(), "-c", str(w.input / "nope")), needles=("nope", "no such"))


def _parquet(w: W, name: str, rows: list[dict[str, Any]]) -> str:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = w.input / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return str(path)


@case("scan-eval-parquet-without-pyarrow")
def _(w: W) -> Expect:
    eval_path = _parquet(w, "e.parquet", BENCH_RECORDS)
    return Expect(
        _scan(eval_path, "-c", w.corpus()),
        needles=("e.parquet", "contam-cli[parquet]"),
        patch=_without("pyarrow", "pyarrow.parquet"),
    )


@case("scan-corpus-parquet-without-pyarrow")
def _(w: W) -> Expect:
    corpus = _parquet(w, "corpus/c.parquet", [{"text": LEAKED}])
    return Expect(
        _scan(w.bench(), "-c", corpus),
        needles=("c.parquet", "contam-cli[parquet]"),
        patch=_without("pyarrow", "pyarrow.parquet"),
    )


@case("scan-eval-zst-without-zstandard")
def _(w: W) -> Expect:
    eval_path = w.file("e.jsonl.zst", COMPRESS[".zst"](BENCH_BYTES))
    return Expect(
        _scan(eval_path, "-c", w.corpus()),
        needles=("e.jsonl.zst", "contam-cli[zstd]"),
        patch=_without("zstandard"),
    )


@case("scan-eval-parquet-is-read-whole")
def _(w: W) -> Expect:
    return Expect(
        _scan(_parquet(w, "e.parquet", BENCH_RECORDS), "-c", w.corpus()), code=1, needles=(FOUND,)
    )


@case("scan-corrupt-parquet")
def _(w: W) -> Expect:
    good = Path(_parquet(w, "tmp.parquet", BENCH_RECORDS)).read_bytes()
    os.unlink(w.input / "tmp.parquet")
    eval_path = w.file("e.parquet", good[: len(good) // 2])
    return Expect(_scan(eval_path, "-c", w.corpus()), needles=("e.parquet", "cannot read parquet"))


# -- options -------------------------------------------------------------------------------------

OPTIONS = [
    ("ngram-size-0", ("-n", "0"), ("--ngram-size",)),
    ("ngram-size-not-a-number", ("-n", "x"), ("--ngram-size",)),
    ("min-overlap-1.5", ("--min-overlap", "1.5"), ("--min-overlap",)),
    ("min-overlap-negative", ("--min-overlap", "-0.1"), ("--min-overlap",)),
    ("min-overlap-nan", ("--min-overlap", "nan"), ("--min-overlap",)),
    ("min-run-0", ("--min-run", "0"), ("--min-run",)),
    ("jobs-negative", ("--jobs", "-1"), ("--jobs",)),
    ("threshold-nan", ("--threshold", "nan"), ("--threshold", "nan")),
    ("threshold-inf", ("--threshold", "inf"), ("--threshold", "inf")),
    ("chunk-size-tiny", ("--chunk-size", "10"), ("--chunk-size",)),
    ("limit-negative", ("--limit", "-1"), ("--limit",)),
    ("unknown-option", ("--min-overlapp", "0.5"), ("--min-overlapp",)),
    ("unknown-format", ("--format", "xml"), ("--format",)),
    ("roles-no-chat-turns", ("--roles", "user"), ("--roles",)),
    ("source-without-equals", ("--source", "novalue"), ("NAME=PATH",)),
]
for _id, _opts, _needles in OPTIONS:

    def _build(w: W, opts: tuple[str, ...] = _opts, needles: tuple[str, ...] = _needles) -> Expect:
        return Expect((*_scan(w.bench(), "-c", w.corpus()), *opts), needles=needles)

    case(f"scan-option-{_id}")(_build)


@case("scan-option-roles-absent-from-the-chats")
def _(w: W) -> Expect:
    rows = [{"id": "c", "messages": [{"role": "user", "content": LEAKED}]}]
    return Expect(
        _scan(w.jsonl("c.jsonl", rows), "-c", w.corpus(), "--roles", "usr"),
        needles=("--roles", "usr", "user"),
    )


@case("scan-no-eval-argument")
def _(w: W) -> Expect:
    return Expect(("scan", "-c", w.corpus()), needles=("EVAL",))


@case("scan-no-corpus")
def _(w: W) -> Expect:
    return Expect(("scan", w.bench()), needles=("--corpus",))


THRESHOLDS = [
    ("wrong-type", '{"sources": {"corpus": {"longest_run": "40"}}}', "sources.corpus.longest_run"),
    ("unknown-key", '{"sources": {"corpus": {"longst_run": 40}}}', "longst_run"),
    ("misspelled-source", '{"sources": {"corpsu": {"longest_run": 40}}}', "corpsu"),
    ("overlap-out-of-range", '{"sources": {"corpus": {"overlap_fraction": 2}}}', "overlap"),
    ("not-an-object", "[1, 2]", "expected an object"),
    ("invalid-json", '{"sources": ', "invalid JSON"),
    ("empty-file", "", "t.json"),
    ("other-n", '{"n": 8, "sources": {"corpus": {"longest_run": 40}}}', "n=8"),
]
for _id, _text, _needle in THRESHOLDS:

    def _build(w: W, text: str = _text, needle: str = _needle) -> Expect:
        path = w.file("t.json", text)
        return Expect(
            (*_scan(w.bench(), "-c", w.corpus()), "--thresholds", path), needles=("t.json", needle)
        )

    case(f"scan-thresholds-{_id}")(_build)


@case("scan-thresholds-file-missing")
def _(w: W) -> Expect:
    return Expect(
        (*_scan(w.bench(), "-c", w.corpus()), "--thresholds", str(w.input / "none.json")),
        needles=("none.json",),
    )


# -- outputs -------------------------------------------------------------------------------------


@case("scan-report-over-the-eval-file")
def _(w: W) -> Expect:
    bench = w.bench()
    return Expect(
        (*_scan(bench, "-c", w.corpus()), "--report", bench), needles=("bench.jsonl", "input")
    )


@case("scan-report-over-a-corpus-file")
def _(w: W) -> Expect:
    corpus = w.file("c.jsonl", orjson.dumps({"text": LEAKED}) + b"\n")
    return Expect((*_scan(w.bench(), "-c", corpus), "--report", corpus), needles=("c.jsonl",))


@case("scan-report-inside-the-corpus-directory")
def _(w: W) -> Expect:
    corpus = w.corpus()
    return Expect(
        (*_scan(w.bench(), "-c", corpus), "--report", str(Path(corpus, "r.json"))),
        needles=("r.json", "inside the input directory"),
    )


@case("scan-report-below-a-file")
def _(w: W) -> Expect:
    afile = w.afile()
    return Expect(
        (*_scan(w.bench(), "-c", w.corpus()), "--report", f"{afile}/r.json"),
        needles=("afile/r.json", "not a directory"),
    )


@case("scan-report-is-a-directory")
def _(w: W) -> Expect:
    (w.work / "adir").mkdir()
    return Expect(
        (*_scan(w.bench(), "-c", w.corpus()), "--report", w.out("adir")),
        needles=("adir", "is a directory"),
    )


@case("scan-report-is-a-fifo-and-is-not-opened")
def _(w: W) -> Expect:
    os.mkfifo(w.work / "r.json")
    return Expect(
        ("scan", w.bench(), "-c", w.corpus(), *J1, "--report", w.out("r.json")),
        needles=("r.json", "not a regular file"),
        process=True,
    )


@case("scan-report-on-a-full-disk")
def _(w: W) -> Expect:
    return Expect(
        (*_scan(w.bench(), "-c", w.corpus()), "--report", w.out("r.json")),
        needles=("r.json", "space left on device"),
        patch=_disk_full(w.root),
    )


@case("scan-html-on-a-full-disk")
def _(w: W) -> Expect:
    return Expect(
        (*_scan(w.bench(), "-c", w.corpus()), "--report", w.out("r.json"), "--html",
         w.out("r.html")),
        needles=("space left on device",),
        patch=_disk_full(w.root),
    )  # fmt: skip


@case("scan-report-and-html-the-same-path")
def _(w: W) -> Expect:
    out = w.out("r.out")
    return Expect(
        (*_scan(w.bench(), "-c", w.corpus()), "--report", out, "--html", out), needles=("r.out",)
    )


@case("scan-html-over-the-eval-file")
def _(w: W) -> Expect:
    bench = w.bench()
    return Expect((*_scan(bench, "-c", w.corpus()), "--html", bench), needles=("bench.jsonl",))


@case("scan-sarif-below-a-file")
def _(w: W) -> Expect:
    return Expect(
        (*_scan(w.bench(), "-c", w.corpus()), "--sarif", f"{w.afile()}/r.sarif"),
        needles=("afile/r.sarif",),
    )


def _bad_corpus(w: W) -> str:
    """A corpus that fails only when read (a truncated .gz): an error about an output rather
    than about it shows that the output was checked before the corpus was read."""
    return w.file("corpus/late.jsonl.gz", _truncated(".gz"))


@case("scan-report-path-is-checked-before-the-corpus-is-read")
def _(w: W) -> Expect:
    return Expect(
        (*_scan(w.bench(), "-c", _bad_corpus(w)), "--report", f"{w.afile()}/r.json"),
        needles=("afile/r.json",),
    )


@case("scan-html-path-is-checked-before-the-corpus-is-read")
def _(w: W) -> Expect:
    return Expect(
        (*_scan(w.bench(), "-c", _bad_corpus(w)), "--html", f"{w.afile()}/r.html"),
        needles=("afile/r.html",),
    )


@case("scan-json-into-a-closed-stdout-ends-with-the-verdict")
def _(w: W) -> Expect:
    return Expect(
        ("scan", w.bench(), "-c", w.corpus(), *J1, "--json"),
        code=1,
        process=True,
        closed_stdout=True,
    )


@case("scan-table-into-a-closed-stdout-ends-with-the-verdict")
def _(w: W) -> Expect:
    return Expect(
        ("scan", w.bench(), "-c", w.corpus(), *J1), code=1, process=True, closed_stdout=True
    )


@case("scan-clean-verdict-into-a-closed-stdout-is-0")
def _(w: W) -> Expect:
    eval_path = w.jsonl("clean.jsonl", _records(CLEAN_TEXT))
    return Expect(
        ("scan", eval_path, "-c", w.corpus(), *J1, "--json"),
        code=0,
        process=True,
        closed_stdout=True,
    )


@case("scan-writes-the-report-and-nothing-else")
def _(w: W) -> Expect:
    return Expect(
        (*_scan(w.bench(), "-c", w.corpus()), "--report", w.out("r/report.json")),
        code=1,
        needles=(FOUND,),
        outputs=("work/r/report.json",),
    )


# == scan --index / contam index build ===========================================================


def _index(w: W, *extra: str) -> str:
    out = str(w.input / "corpus.idx")
    result = runner.invoke(app, ["index", "build", "-c", w.corpus(), "-o", out, *extra])
    assert result.exit_code == 0, result.output
    return out


@case("scan-index-built-with-another-n")
def _(w: W) -> Expect:
    index = _index(w)
    return Expect(("scan", w.bench(), "--index", index, "-n", "8"), needles=("corpus.idx", "n=13"))


@case("scan-index-built-with-another-normalization")
def _(w: W) -> Expect:
    index = _index(w, "--no-casefold")
    return Expect(("scan", w.bench(), "--index", index), needles=("corpus.idx", "casefold"))


@case("scan-index-truncated-file")
def _(w: W) -> Expect:
    index = _index(w, "--positions")
    grams = next(Path(index).glob("*.grams.u64"))
    grams.write_bytes(grams.read_bytes()[:-5])
    return Expect(("scan", w.bench(), "--index", index), needles=(grams.name, "truncated"))


@case("scan-index-damaged-header")
def _(w: W) -> Expect:
    index = _index(w)
    Path(index, "header.json").write_text("{garbage")
    return Expect(("scan", w.bench(), "--index", index), needles=("header.json",))


@case("scan-index-missing-array-file")
def _(w: W) -> Expect:
    index = _index(w)
    victim = next(Path(index).glob("*.grams.u64"))
    victim.unlink()
    return Expect(("scan", w.bench(), "--index", index), needles=(victim.name,))


@case("scan-index-not-an-index")
def _(w: W) -> Expect:
    return Expect(("scan", w.bench(), "--index", w.corpus()), needles=("corpus", "not a contam"))


@case("scan-index-verify-after-the-corpus-changed")
def _(w: W) -> Expect:
    index = _index(w)
    doc = Path(w.corpus(), "doc_clean.txt")
    doc.write_text(doc.read_text() + "\nan added line\n")
    return Expect(("scan", w.bench(), "--index", index, "--verify"), needles=("doc_clean.txt",))


@case("scan-index-is-read-whole")
def _(w: W) -> Expect:
    index = _index(w, "--positions")
    return Expect(("scan", w.bench(), "--index", index), code=1, needles=(FOUND,))


@case("index-build-output-inside-the-corpus")
def _(w: W) -> Expect:
    corpus = w.corpus()
    return Expect(
        ("index", "build", "-c", corpus, "-o", str(Path(corpus, "idx"))), needles=("idx", "input")
    )


@case("index-build-output-exists")
def _(w: W) -> Expect:
    (w.work / "idx").mkdir()
    (w.work / "idx" / "keep").write_text("mine")
    return Expect(
        ("index", "build", "-c", w.corpus(), "-o", w.out("idx")), needles=("idx", "--force")
    )


@case("index-build-output-below-a-file")
def _(w: W) -> Expect:
    return Expect(
        ("index", "build", "-c", w.corpus(), "-o", f"{w.afile()}/idx"),
        needles=("afile/idx", "not a directory"),
    )


@case("index-build-truncated-corpus")
def _(w: W) -> Expect:
    return Expect(
        ("index", "build", "-c", _bad_corpus(w), "-o", w.out("idx")), needles=("late.jsonl.gz",)
    )


@case("index-build-empty-corpus-file")
def _(w: W) -> Expect:
    return Expect(
        ("index", "build", "-c", w.file("e.jsonl", b""), "-o", w.out("idx")),
        needles=("e.jsonl", "no records"),
    )


@case("index-build-corpus-fifo-does-not-hang")
def _(w: W) -> Expect:
    os.mkfifo(w.input / "c.jsonl")
    return Expect(
        ("index", "build", "-c", str(w.input / "c.jsonl"), "-o", w.out("idx")),
        needles=("c.jsonl", "FIFO"),
        process=True,
    )


@case("index-build-on-a-full-disk")
def _(w: W) -> Expect:
    return Expect(
        ("index", "build", "-c", w.corpus(), "-o", w.out("idx")),
        needles=("idx", "space left on device"),
        patch=_disk_full(w.work),
    )


@case("index-build-writes-the-index-and-nothing-else")
def _(w: W) -> Expect:
    return Expect(
        ("index", "build", "-c", w.corpus(), "-o", w.out("idx")),
        code=0,
        needles=("wrote",),
        outputs=("work/idx",),
    )


# == clean, eval target ===========================================================================


def _clean(*args: str) -> tuple[str, ...]:
    return ("clean", *args, *J1)


@case("clean-output-over-the-eval-file")
def _(w: W) -> Expect:
    bench = w.bench()
    return Expect(_clean(bench, "-c", w.corpus(), "-o", bench), needles=("bench.jsonl", "input"))


@case("clean-output-inside-the-corpus-directory")
def _(w: W) -> Expect:
    corpus = w.corpus()
    return Expect(
        _clean(w.bench(), "-c", corpus, "-o", str(Path(corpus, "x.jsonl"))),
        needles=("x.jsonl", "inside the input directory"),
    )


@case("clean-output-below-a-file")
def _(w: W) -> Expect:
    return Expect(
        _clean(w.bench(), "-c", w.corpus(), "-o", f"{w.afile()}/x.jsonl"),
        needles=("afile/x.jsonl", "not a directory"),
    )


@case("clean-output-and-dirty-out-the-same")
def _(w: W) -> Expect:
    out = w.out("x.jsonl")
    return Expect(
        _clean(w.bench(), "-c", w.corpus(), "-o", out, "--dirty-out", out),
        needles=("x.jsonl", "overlap"),
    )


@case("clean-output-of-another-format")
def _(w: W) -> Expect:
    return Expect(
        _clean(w.bench(), "-c", w.corpus(), "-o", w.out("x.json")), needles=("x.json", ".jsonl")
    )


@case("clean-output-is-a-fifo-and-is-not-opened")
def _(w: W) -> Expect:
    os.mkfifo(w.work / "x.jsonl")
    return Expect(
        ("clean", w.bench(), "-c", w.corpus(), *J1, "-o", w.out("x.jsonl")),
        needles=("x.jsonl", "not a regular file"),
        process=True,
    )


@case("clean-report-over-the-eval-file")
def _(w: W) -> Expect:
    bench = w.bench()
    return Expect(
        _clean(bench, "-c", w.corpus(), "-o", w.out("x.jsonl"), "--report", bench),
        needles=("bench.jsonl", "input"),
    )


@case("clean-truncated-eval")
def _(w: W) -> Expect:
    eval_path = w.file("t.jsonl.gz", _truncated(".gz"))
    return Expect(
        _clean(eval_path, "-c", w.corpus(), "-o", w.out("x.jsonl.gz")), needles=("t.jsonl.gz",)
    )


@case("clean-truncated-corpus")
def _(w: W) -> Expect:
    return Expect(
        _clean(w.bench(), "-c", _bad_corpus(w), "-o", w.out("x.jsonl"), "--dirty-out",
               w.out("d.jsonl")),
        needles=("late.jsonl.gz",),
    )  # fmt: skip


@case("clean-duplicate-ids")
def _(w: W) -> Expect:
    eval_path = w.jsonl("d.jsonl", [{"id": "a", "text": LEAKED}, {"id": "a", "text": "x"}])
    return Expect(
        _clean(eval_path, "-c", w.corpus(), "-o", w.out("x.jsonl")), needles=("d.jsonl:2:",)
    )


@case("clean-on-a-full-disk")
def _(w: W) -> Expect:
    return Expect(
        _clean(w.bench(), "-c", w.corpus(), "-o", w.out("x.jsonl"), "--dirty-out",
               w.out("d.jsonl"), "--report", w.out("r.json")),
        needles=("space left on device",),
        patch=_disk_full(w.work),
    )  # fmt: skip


@case("clean-output-is-checked-before-the-corpus-is-read")
def _(w: W) -> Expect:
    return Expect(
        _clean(w.bench(), "-c", _bad_corpus(w), "-o", f"{w.afile()}/x.jsonl"),
        needles=("afile/x.jsonl",),
    )


@case("clean-dirty-out-is-checked-before-the-corpus-is-read")
def _(w: W) -> Expect:
    return Expect(
        _clean(w.bench(), "-c", _bad_corpus(w), "-o", w.out("x.jsonl"), "--dirty-out",
               f"{w.afile()}/d.jsonl"),
        needles=("afile/d.jsonl",),
    )  # fmt: skip


@case("clean-report-is-checked-before-the-corpus-is-read")
def _(w: W) -> Expect:
    return Expect(
        _clean(w.bench(), "-c", _bad_corpus(w), "-o", w.out("x.jsonl"), "--report",
               f"{w.afile()}/r.json"),
        needles=("afile/r.json",),
    )  # fmt: skip


@case("clean-eval-writes-its-outputs-and-nothing-else")
def _(w: W) -> Expect:
    return Expect(
        _clean(w.bench(), "-c", w.corpus(), "-o", w.out("x.jsonl"), "--dirty-out",
               w.out("d.jsonl"), "--report", w.out("r.json")),
        code=1,
        needles=("2 removed, 3 kept",),
        outputs=("work/x.jsonl", "work/d.jsonl", "work/r.json"),
    )  # fmt: skip


# == clean, corpus target =========================================================================


def _clean_corpus(w: W, *extra: str, corpus: str | None = None) -> tuple[str, ...]:
    return _clean(w.bench(), "-c", corpus or w.corpus(), "--target", "corpus", *extra)


@case("clean-corpus-outdir-not-empty-without-force")
def _(w: W) -> Expect:
    (w.work / "out").mkdir()
    (w.work / "out" / "mine.txt").write_text("keep me")
    return Expect(_clean_corpus(w, "-o", w.out("out")), needles=("out", "--force"))


@case("clean-corpus-visible-manifest-inside-outdir")
def _(w: W) -> Expect:
    return Expect(
        _clean_corpus(w, "-o", w.out("out"), "--manifest", w.out("out/manifest.json")),
        needles=("manifest.json", "hidden"),
    )


@case("clean-corpus-outdir-is-the-corpus")
def _(w: W) -> Expect:
    corpus = w.corpus()
    return Expect(_clean_corpus(w, "-o", corpus, corpus=corpus), needles=("corpus", "input"))


@case("clean-corpus-outdir-inside-the-corpus")
def _(w: W) -> Expect:
    corpus = w.corpus()
    return Expect(
        _clean_corpus(w, "-o", str(Path(corpus, "sub")), corpus=corpus), needles=("sub", "input")
    )


@case("clean-corpus-outdir-is-a-file")
def _(w: W) -> Expect:
    afile = w.afile()
    return Expect(_clean_corpus(w, "-o", afile), needles=("afile", "not a directory"))


@case("clean-corpus-outdir-below-a-file")
def _(w: W) -> Expect:
    return Expect(
        _clean_corpus(w, "-o", f"{w.afile()}/out"), needles=("afile/out", "not a directory")
    )


@case("clean-corpus-manifest-below-a-file")
def _(w: W) -> Expect:
    return Expect(
        _clean_corpus(w, "-o", w.out("out"), "--manifest", f"{w.afile()}/m.json"),
        needles=("afile/m.json",),
    )


@case("clean-corpus-dirty-out-does-not-apply")
def _(w: W) -> Expect:
    return Expect(
        _clean_corpus(w, "-o", w.out("out"), "--dirty-out", w.out("d.jsonl")),
        needles=("--dirty-out",),
    )


@case("clean-corpus-report-needs-flagged-only")
def _(w: W) -> Expect:
    return Expect(
        _clean_corpus(w, "-o", w.out("out"), "--report", w.out("r.json")),
        needles=("--flagged-only",),
    )


@case("clean-corpus-truncated-corpus-file")
def _(w: W) -> Expect:
    corpus = w.corpus()
    Path(corpus, "z.jsonl.xz").write_bytes(_truncated(".xz"))
    return Expect(_clean_corpus(w, "-o", w.out("out"), corpus=corpus), needles=("z.jsonl.xz",))


@case("clean-corpus-trailing-garbage-in-a-bz2-corpus-file")
def _(w: W) -> Expect:
    corpus = w.corpus()
    data = COMPRESS[".bz2"](orjson.dumps({"text": CLEAN_TEXT}) + b"\n") + b"BZh9 not a stream"
    Path(corpus, "z.jsonl.bz2").write_bytes(data)
    return Expect(_clean_corpus(w, "-o", w.out("out"), corpus=corpus), needles=("z.jsonl.bz2",))


@case("clean-corpus-bad-json-line")
def _(w: W) -> Expect:
    corpus = w.corpus()
    Path(corpus, "c.jsonl").write_bytes(b'{"text": "fine words here"}\n{"text": \n')
    return Expect(_clean_corpus(w, "-o", w.out("out"), corpus=corpus), needles=("c.jsonl:2:",))


@case("clean-corpus-on-a-full-disk")
def _(w: W) -> Expect:
    return Expect(
        _clean_corpus(w, "-o", w.out("out")),
        needles=("out/.contam-manifest.json", "space left on device"),
        patch=_disk_full(w.work),
    )


@case("clean-corpus-on-a-full-disk-leaves-nothing")
def _(w: W) -> Expect:
    return Expect(
        _clean_corpus(w, "-o", w.out("out")),
        needles=("space left on device",),
        patch=_disk_full(w.work),
    )


@case("clean-corpus-outdir-is-checked-before-the-corpus-is-read")
def _(w: W) -> Expect:
    (w.work / "out").mkdir()
    (w.work / "out" / "mine.txt").write_text("keep me")
    return Expect(_clean_corpus(w, "-o", w.out("out"), corpus=_bad_corpus(w)), needles=("out",))


@case("clean-corpus-writes-outdir-and-nothing-else")
def _(w: W) -> Expect:
    return Expect(
        _clean_corpus(w, "-o", w.out("out"), "--window", "20", "--min-piece", "40"),
        code=1,
        needles=("1 cut",),
        outputs=("work/out",),
    )


# == calibrate ====================================================================================

CONTROLS = FIXTURES / "calibrate" / "controls.jsonl"


def _calibrate(w: W, controls: str, *extra: str) -> tuple[str, ...]:
    return ("calibrate", "--controls", controls, "-c", w.corpus(), "-n", "5", *J1, *extra)


def _controls(w: W) -> str:
    return w.file("controls.jsonl", CONTROLS.read_bytes())


@case("calibrate-empty-controls")
def _(w: W) -> Expect:
    return Expect(
        _calibrate(w, w.file("c.jsonl", b""), "-o", w.out("t.json")),
        needles=("c.jsonl", "no records"),
    )


@case("calibrate-truncated-controls")
def _(w: W) -> Expect:
    controls = w.file("c.jsonl.gz", _truncated(".gz", CONTROLS.read_bytes() * 50))
    return Expect(_calibrate(w, controls, "-o", w.out("t.json")), needles=("c.jsonl.gz",))


@case("calibrate-invalid-utf8-controls")
def _(w: W) -> Expect:
    controls = w.file("c.jsonl", CONTROLS.read_bytes() + b'{"id": "z", "text": "\xff"}\n')
    n = CONTROLS.read_bytes().count(b"\n") + 1
    return Expect(_calibrate(w, controls, "-o", w.out("t.json")), needles=(f"c.jsonl:{n}:",))


@case("calibrate-output-over-the-controls")
def _(w: W) -> Expect:
    controls = _controls(w)
    return Expect(_calibrate(w, controls, "-o", controls), needles=("controls.jsonl", "input"))


@case("calibrate-output-below-a-file")
def _(w: W) -> Expect:
    return Expect(
        _calibrate(w, _controls(w), "-o", f"{w.afile()}/t.json"), needles=("afile/t.json",)
    )


@case("calibrate-percentile-out-of-range")
def _(w: W) -> Expect:
    return Expect(
        _calibrate(w, _controls(w), "-o", w.out("t.json"), "--percentile", "101"),
        needles=("--percentile",),
    )


@case("calibrate-common-out-is-the-output")
def _(w: W) -> Expect:
    out = w.out("t.json")
    return Expect(_calibrate(w, _controls(w), "-o", out, "--common-out", out), needles=("t.json",))


@case("calibrate-output-is-checked-before-the-corpus-is-read")
def _(w: W) -> Expect:
    args = ("calibrate", "--controls", _controls(w), "-c", _bad_corpus(w), "-n", "5", *J1)
    return Expect((*args, "-o", f"{w.afile()}/t.json"), needles=("afile/t.json",))


@case("calibrate-every-control-too-short")
def _(w: W) -> Expect:
    args = ("calibrate", "--controls", _controls(w), "-c", w.corpus(), *J1)
    return Expect((*args, "-o", w.out("t.json")), needles=("controls.jsonl", "n=13"))


@case("calibrate-on-a-full-disk")
def _(w: W) -> Expect:
    return Expect(
        _calibrate(w, _controls(w), "-o", w.out("t.json")),
        needles=("t.json", "space left on device"),
        patch=_disk_full(w.work),
    )


@case("calibrate-writes-the-thresholds-and-nothing-else")
def _(w: W) -> Expect:
    return Expect(
        _calibrate(w, _controls(w), "-o", w.out("t.json")),
        code=0,
        needles=("corpus",),
        outputs=("work/t.json",),
    )


# == report =======================================================================================

SCORES = FIXTURES / "report" / "scores.jsonl"
LABELS = FIXTURES / "report" / "labels.jsonl"


def _scores(w: W) -> str:
    return w.file("scores.jsonl", SCORES.read_bytes())


REPORT_INPUTS = [
    ("empty-scores", b"", "s.jsonl"),
    ("blank-scores", b"\n\n  \n", "s.jsonl"),
    ("scores-invalid-json", b'{"id": "a", "m": 1}\n{"id": \n', "s.jsonl:2:"),
    ("scores-invalid-utf8", b'{"id": "a", "m": 1}\n{"id": "\xff", "m": 2}\n', "s.jsonl:2:"),
    ("scores-without-id", b'{"m": 1}\n', "s.jsonl:1:"),
    ("scores-record-is-an-array", b"[1, 2]\n", "s.jsonl"),
    ("scores-duplicate-ids", b'{"id": "a", "m": 1}\n{"id": "a", "m": 2}\n', "s.jsonl:2:"),
]
for _id, _data, _needle in REPORT_INPUTS:

    def _build(w: W, data: bytes = _data, needle: str = _needle) -> Expect:
        name = "s.jsonl.gz" if _id_is_gz(data) else "s.jsonl"
        return Expect(("report", w.file(name, data), "--bootstrap", "20"), needles=(needle,))

    case(f"report-{_id}")(_build)


def _id_is_gz(data: bytes) -> bool:
    return data[:2] == b"\x1f\x8b"


@case(
    "report-scores-truncated-gz",
)
def _(w: W) -> Expect:
    data = _truncated(".gz", SCORES.read_bytes() * 40)
    return Expect(
        ("report", w.file("s.jsonl.gz", data), "--bootstrap", "20"), needles=("s.jsonl.gz",)
    )


@case(
    "report-scan-report-truncated-gz",
)
def _(w: W) -> Expect:
    data = _truncated(".gz", Path(_scan_report(w)).read_bytes())
    return Expect(
        ("report", w.file("scan.json.gz", data), "--bootstrap", "20"), needles=("scan.json.gz",)
    )


@case("report-labels-without-a-label")
def _(w: W) -> Expect:
    labels = w.file("l.jsonl", b'{"id": "a", "x": 1}\n')
    return Expect(
        ("report", _scores(w), "--labels", labels, "--bootstrap", "20"), needles=("l.jsonl:1:",)
    )


@case("report-input-missing")
def _(w: W) -> Expect:
    return Expect(("report", str(w.input / "nope.jsonl")), needles=("nope.jsonl",))


@case("report-output-over-the-input")
def _(w: W) -> Expect:
    scores = _scores(w)
    return Expect(("report", scores, "-o", scores), needles=("scores.jsonl", "input"))


@case("report-output-below-a-file")
def _(w: W) -> Expect:
    return Expect(("report", _scores(w), "-o", f"{w.afile()}/r.txt"), needles=("afile/r.txt",))


@case("report-prevalence-out-of-range")
def _(w: W) -> Expect:
    return Expect(("report", _scores(w), "--prevalence", "2"), needles=("--prevalence",))


@case("report-bootstrap-0")
def _(w: W) -> Expect:
    return Expect(("report", _scores(w), "--bootstrap", "0"), needles=("--bootstrap",))


@case("report-on-a-full-disk")
def _(w: W) -> Expect:
    return Expect(
        ("report", _scores(w), "--bootstrap", "20", "-o", w.out("r.txt")),
        needles=("r.txt", "space left on device"),
        patch=_disk_full(w.work),
    )


@case("report-json-into-a-closed-stdout-ends-with-the-verdict")
def _(w: W) -> Expect:
    args = ("report", _scores(w), "--labels", w.file("labels.jsonl", LABELS.read_bytes()))
    return Expect(
        (*args, "--format", "json", "--bootstrap", "20", "--no-fail"),
        code=0,
        process=True,
        closed_stdout=True,
    )


# == impact =======================================================================================


def _scan_report(w: W) -> str:
    out = str(w.input / "scan.json")
    result = runner.invoke(app, ["scan", w.bench(), "-c", w.corpus(), "--report", out, *J1])
    assert result.exit_code == 1, result.output
    return out


@case("impact-empty-results")
def _(w: W) -> Expect:
    return Expect(
        ("impact", _scan_report(w), "-r", w.file("res.jsonl", b"")), needles=("res.jsonl",)
    )


@case("impact-results-invalid-json")
def _(w: W) -> Expect:
    results = w.file("res.jsonl", b'{"id": "q1", "correct": 1}\n{"id": "q2", \n')
    return Expect(("impact", _scan_report(w), "-r", results), needles=("res.jsonl:2:",))


@case("impact-results-without-the-score-field")
def _(w: W) -> Expect:
    results = w.file("res.jsonl", b'{"id": "q1", "correct": 1}\n{"id": "q2"}\n')
    return Expect(("impact", _scan_report(w), "-r", results), needles=("res.jsonl:2:",))


@case("impact-report-is-not-a-report")
def _(w: W) -> Expect:
    results = w.file("res.jsonl", b'{"id": "q1", "correct": 1}\n')
    return Expect(("impact", _scores(w), "-r", results), needles=("scores.jsonl",))


@case(
    "impact-report-truncated-gz",
)
def _(w: W) -> Expect:
    data = _truncated(".gz", Path(_scan_report(w)).read_bytes())
    results = w.file("res.jsonl", b'{"id": "q1", "correct": 1}\n')
    return Expect(
        ("impact", w.file("scan.json.gz", data), "-r", results), needles=("scan.json.gz",)
    )


@case("impact-results-truncated-gz")
def _(w: W) -> Expect:
    results = w.file("res.jsonl.gz", _truncated(".gz", b'{"id": "q1", "correct": 1}\n' * 500))
    return Expect(("impact", _scan_report(w), "-r", results), needles=("res.jsonl.gz",))


@case("impact-report-truncated")
def _(w: W) -> Expect:
    report = Path(_scan_report(w))
    report.write_bytes(report.read_bytes()[:-40])
    results = w.file("res.jsonl", b'{"id": "q1", "correct": 1}\n')
    return Expect(("impact", str(report), "-r", results), needles=("scan.json",))


@case("impact-output-over-the-report")
def _(w: W) -> Expect:
    report = _scan_report(w)
    results = w.file("res.jsonl", b'{"id": "q1", "correct": 1}\n{"id": "q3", "correct": 0}\n')
    return Expect(("impact", report, "-r", results, "-o", report), needles=("scan.json",))


# == probe ========================================================================================


def _lm(w: W) -> str:
    return "ngram-lm:" + w.file("train.txt", (FIXTURES / "probe" / "train.txt").read_bytes())


@case("probe-empty-eval")
def _(w: W) -> Expect:
    return Expect(
        ("probe", "run", w.file("e.jsonl", b""), "-m", _lm(w)), needles=("e.jsonl", "no records")
    )


@case("probe-truncated-eval")
def _(w: W) -> Expect:
    eval_path = w.file("e.jsonl.zst", _truncated(".zst"))
    return Expect(("probe", "run", eval_path, "-m", _lm(w)), needles=("e.jsonl.zst",))


@case("probe-eval-duplicate-ids")
def _(w: W) -> Expect:
    eval_path = w.jsonl("d.jsonl", [{"id": "a", "text": LEAKED}, {"id": "a", "text": "b"}])
    return Expect(("probe", "run", eval_path, "-m", _lm(w)), needles=("d.jsonl:2:",))


@case("probe-unknown-model-spec")
def _(w: W) -> Expect:
    return Expect(("probe", "run", w.bench(), "-m", "bogus:x"), needles=("bogus:x",))


@case("probe-missing-model-file")
def _(w: W) -> Expect:
    spec = f"ngram-lm:{w.input / 'nope.npz'}"
    return Expect(("probe", "run", w.bench(), "-m", spec), needles=("nope.npz",))


@case("probe-unknown-method")
def _(w: W) -> Expect:
    return Expect(
        ("probe", "run", w.bench(), "-m", _lm(w), "--method", "minkk"), needles=("minkk",)
    )


@case("probe-batch-size-0")
def _(w: W) -> Expect:
    return Expect(
        ("probe", "run", w.bench(), "-m", _lm(w), "--batch-size", "0"), needles=("--batch-size",)
    )


@case("probe-output-over-the-eval")
def _(w: W) -> Expect:
    bench = w.bench()
    return Expect(("probe", "run", bench, "-m", _lm(w), "-o", bench), needles=("bench.jsonl",))


@case("probe-output-below-a-file")
def _(w: W) -> Expect:
    return Expect(
        ("probe", "run", w.bench(), "-m", _lm(w), "-o", f"{w.afile()}/p.json"),
        needles=("afile/p.json",),
    )


@case("probe-train-lm-truncated-corpus")
def _(w: W) -> Expect:
    return Expect(
        ("probe", "train-lm", _bad_corpus(w), "-o", w.out("lm.npz")), needles=("late.jsonl.gz",)
    )


# == the catalogue itself ========================================================================


def test_the_catalogue_is_big_enough() -> None:
    assert len(CASES) >= 60, len(CASES)
    ids = [p.id for p in CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"


def test_every_command_the_catalogue_covers_exists() -> None:
    names = set(COMMANDS)
    covered = {p.id.split("-", 1)[0] for p in CASES}
    assert covered <= names, covered - names
    # NOTE: commands added since this catalogue was written (bench, app) have no cases yet.
