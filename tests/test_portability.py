"""The package stays portable (Linux, macOS, Windows), checked here on whatever OS runs the tests:
outputs written with LF whatever the OS (binary, or text with ``newline=``), no rename that would
fail over an existing file on Windows, no POSIX-only call or module at import, worker processes
started only by :func:`~contam_cli.engine.executor.start_method`, stdout in UTF-8 with LF on
Windows, and line endings pinned by ``.gitattributes``."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "contam_cli"
MODULES = sorted(PACKAGE.rglob("*.py"))

#: Only on some OS: imported inside the function that needs it, with a fallback.
PLATFORM_MODULES = {"fcntl", "resource", "termios", "pwd", "grp", "msvcrt", "winreg", "_winapi"}
#: Attributes that do not exist on Windows (os.fork, signal.SIGKILL...).
POSIX_ATTRIBUTES = {
    "os": {"fork", "forkpty", "killpg", "getuid", "geteuid", "getpgid", "setsid", "mkfifo"},
    "signal": {"SIGKILL", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGPIPE"},
}
#: os.rename calls of a directory, onto a free name or failing as meant: module -> count.
DIRECTORY_RENAMES = {"features/clean/layout.py": 4, "features/eval_cache.py": 1}
#: write_text() of one line (no newline to translate): module -> count.
ONE_LINE_TEXTS = {"engine/corpus_index/build.py": 1}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_bytes(), filename=str(path))


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _name(node: ast.AST) -> str:
    """``os.rename`` for an attribute chain, ``open`` for a name, else ""."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _name(node.value)
        return f"{inner}.{node.attr}" if inner else f".{node.attr}"
    return ""


def _mode(call: ast.Call) -> str | None:
    """The literal mode of an ``open()`` call (None when it is not a literal)."""
    found = [k.value for k in call.keywords if k.arg == "mode"]
    node = call.args[1] if len(call.args) > 1 else (found[0] if found else None)
    if node is None:
        return "r"
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def test_text_is_written_with_lf_on_every_os() -> None:
    """A text-mode writer without ``newline=`` writes CRLF on Windows."""
    bad = []
    one_line: dict[str, int] = {}
    for path in MODULES:
        for call in _calls(_tree(path)):
            name = _name(call.func)
            keywords = {k.arg for k in call.keywords}
            if name in ("open", "io.open", ".open") and "newline" not in keywords:
                mode = _mode(call)
                if mode is not None and "b" not in mode and set(mode) & set("wax+"):
                    bad.append(f"{_rel(path)}:{call.lineno}: open(mode={mode!r})")
            if name.endswith(".write_text") and "newline" not in keywords:
                one_line[_rel(path)] = one_line.get(_rel(path), 0) + 1
            if name.endswith("TextIOWrapper") and "newline" not in keywords:
                bad.append(f"{_rel(path)}:{call.lineno}: {name}() without newline=")
    if one_line != ONE_LINE_TEXTS:
        bad.append(f"write_text() without newline=: {one_line} (expected {ONE_LINE_TEXTS})")
    assert not bad, "text written with the OS's line ends:\n" + "\n".join(bad)


def test_files_are_replaced_not_renamed_over() -> None:
    """os.rename over an existing file fails on Windows; os.replace does not."""
    counts: dict[str, int] = {}
    for path in MODULES:
        n = sum(_name(c.func) == "os.rename" for c in _calls(_tree(path)))
        if n:
            counts[_rel(path)] = n
    assert counts == DIRECTORY_RENAMES, "use os.replace (or list a directory's rename here)"


def test_nothing_posix_only_at_import_or_unguarded() -> None:
    bad = []
    for path in MODULES:
        tree = _tree(path)
        for node in tree.body:  # NOTE: module level only; inside a function it may fall back
            names = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module.split(".")[0]]
            bad += [
                f"{_rel(path)}:{node.lineno}: import {n}" for n in names if n in PLATFORM_MODULES
            ]
        guarded = {  # NOTE: hasattr(os, "x") / getattr(signal, "X", ...) guard their own use
            (_name(c.args[0]), c.args[1].value)
            for c in _calls(tree)
            if _name(c.func) in ("hasattr", "getattr")
            and len(c.args) >= 2
            and isinstance(c.args[1], ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                module, attr = node.value.id, node.attr
                if attr in POSIX_ATTRIBUTES.get(module, ()) and (module, attr) not in guarded:
                    bad.append(f"{_rel(path)}:{node.lineno}: {module}.{attr}")
        for const in ast.walk(tree):
            if isinstance(const, ast.Constant) and const.value in ("/dev/null", "/dev/full"):
                bad.append(f"{_rel(path)}:{const.lineno}: {const.value!r} (os.devnull)")
    assert not bad, "not on every OS:\n" + "\n".join(bad)


def test_worker_processes_start_by_one_rule() -> None:
    """get_context() only with start_method(): fork is Linux-only (see engine/executor.py)."""
    bad = []
    for path in MODULES:
        for call in _calls(_tree(path)):
            if _name(call.func).endswith("get_context"):
                arg = call.args[0] if call.args else None
                if not (isinstance(arg, ast.Call) and _name(arg.func) == "start_method"):
                    bad.append(f"{_rel(path)}:{call.lineno}")
            if _name(call.func).endswith("NamedTemporaryFile"):
                bad.append(f"{_rel(path)}:{call.lineno}: NamedTemporaryFile (cannot be reopened)")
    assert not bad, "\n".join(bad)


_PRINT = """
import os, sys
from contam_cli import entry
os.name = "nt"  # NOTE: after every import: only entry's own check sees it
entry._utf8_streams()
os.name = "posix"
print("q1 \\u2265 0.5 \\u4e2d\\u6587")
sys.stderr.write("warning \\u2013 stderr\\n")
"""


def test_stdout_and_stderr_are_utf8_with_lf_on_windows() -> None:
    """As on Windows (a cp1252 pipe that translates newlines), simulated by os.name: the bytes
    are UTF-8 with LF, and text outside the code page prints instead of failing."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="cp1252")
    proc = subprocess.run([sys.executable, "-c", _PRINT], capture_output=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "q1 \u2265 0.5 \u4e2d\u6587\n".encode()
    assert proc.stderr == "warning \u2013 stderr\n".encode()


def _git(*args: str) -> str:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    return subprocess.run([git, *args], cwd=ROOT, capture_output=True, text=True).stdout


def test_gitattributes_pin_line_ends_and_binaries() -> None:
    assert (ROOT / ".gitattributes").is_file()
    paths = [
        "fixtures/contamination_detector/examples/benchmark.jsonl",
        "tests/golden/scan_report.md",
        "README.md",
        "contam_cli/entry.py",
        "fixtures/x.jsonl.gz",
        "fixtures/x.parquet",
    ]
    attrs: dict[str, dict[str, str]] = {}
    for line in _git("check-attr", "text", "eol", "binary", "--", *paths).splitlines():
        path, attr, value = (part.strip() for part in line.rsplit(":", 2))
        attrs.setdefault(path, {})[attr] = value
    assert attrs[paths[0]]["text"] == attrs[paths[1]]["text"] == "unset"  # bytes as committed
    assert attrs["README.md"] == {"text": "set", "eol": "lf", "binary": "unspecified"}
    assert attrs["contam_cli/entry.py"]["eol"] == "lf"
    assert attrs[paths[4]]["binary"] == attrs[paths[5]]["binary"] == "set"
    crlf = [ln for ln in _git("ls-files", "--eol").splitlines() if "crlf" in ln.split("\t")[0]]
    assert not crlf, "committed with CRLF:\n" + "\n".join(crlf)


# -- Windows behaviours, simulated ----------------------------------------------------------------


def test_a_path_on_another_drive_is_a_file_uri_in_sarif(monkeypatch: pytest.MonkeyPatch) -> None:
    from contam_cli.render import sarif

    def other_drive(path: str, start: str = os.curdir) -> str:
        raise ValueError(f"path is on mount 'C:', start on mount 'D:': {path}")

    monkeypatch.setattr(sarif.os.path, "relpath", other_drive)
    here = Path.cwd() / "eval.jsonl"
    assert sarif.artifact_uri(str(here), Path.cwd()) == here.as_uri()


def test_an_index_of_a_corpus_on_another_drive_records_no_relpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contam_cli.engine.corpus_index import header

    doc = tmp_path / "doc.txt"
    doc.write_bytes(b"words\n")
    monkeypatch.setattr(header.os.path, "relpath", lambda *a: (_ for _ in ()).throw(ValueError()))
    entry = header.file_entry(doc, tmp_path / "idx")
    assert entry["relpath"] is None and entry["path"] == os.path.abspath(doc)
    assert header.resolve_file(tmp_path / "idx", entry) == doc


def test_staged_files_are_flushed_through_a_writable_handle_on_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows flushes (FlushFileBuffers) only through a handle open for writing."""
    from contam_cli.io import output

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.jsonl").write_bytes(b"{}\n")
    opened: list[int] = []

    class OS:
        """The os module as io.output sees it, named `name` (the real one stays as it is)."""

        def __init__(self, name: str) -> None:
            self.name = name

        def __getattr__(self, attr: str) -> object:
            return getattr(os, attr)

        def open(self, path: object, flags: int, *args: object) -> int:
            if str(path).endswith("a.jsonl"):
                opened.append(flags)
            return os.open(path, flags, *args)

    for name in ("nt", "posix"):
        monkeypatch.setattr(output, "os", OS(name))
        output.sync_tree(tmp_path)
    assert [f & (os.O_RDWR | os.O_WRONLY) for f in opened] == [os.O_RDWR, os.O_RDONLY]


def test_a_closed_pipe_on_windows_ends_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows reports a write to a pipe whose reader left as EINVAL (CPython issue 79935)."""
    import errno

    import typer

    from contam_cli.cli import exits

    monkeypatch.setattr(exits.os, "dup2", lambda fd, fd2: None)  # NOTE: keep pytest's stdout
    monkeypatch.setattr(exits.sys, "platform", "win32")
    with pytest.raises(typer.Exit) as done, exits.stdout_guard(1):
        raise OSError(errno.EINVAL, "Invalid argument")
    assert done.value.exit_code == 1
    monkeypatch.setattr(exits.sys, "platform", "linux")
    with pytest.raises(typer.Exit) as failed, exits.stdout_guard(1):
        raise OSError(errno.EINVAL, "Invalid argument")
    assert failed.value.exit_code == 2
