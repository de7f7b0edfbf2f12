"""The docs stay true: every code block in README.md and docs/ runs and gives the output shown.

Block kinds (the info string after the opening fence):

* ``console``: ``$ command`` lines, each followed by exactly what it prints (stdout and stderr,
  as UTF-8 bytes: a CRLF would show); ``contam`` runs this checkout's CLI; ``echo $?`` shows the
  previous command's exit code; ``cat FILE...`` prints the files' bytes (in Python: Windows has
  no cat). The blocks of one document run in order in one fresh directory that holds the bundled
  ``fixtures/`` (a link, or a copy where the OS allows no link), so later blocks see the files
  earlier ones wrote. On Windows the paths contam prints have ``\\`` separators: compared as
  ``/``.
* ``pycon``: a doctest session (``>>>`` lines and their output), run in that directory too;
* ``python``: run there; it must not raise;
* ``json``: must parse;
* ``text`` (diagrams, synopses) and ``yaml`` are not run (YAML files are checked apart).
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import ROOT, posix_paths

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
RUN = {"console", "pycon", "python", "json"}
KNOWN = RUN | {"text", "yaml", ""}


def _blocks(path: Path) -> list[tuple[str, str, int]]:
    text = path.read_text(encoding="utf-8")
    return [
        (m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in _FENCE.finditer(text)
    ]


def test_every_block_has_a_known_kind() -> None:
    for doc in DOCS:
        for kind, _, line in _blocks(doc):
            assert kind in KNOWN and kind != "", f"{doc.name}:{line}: fence kind {kind!r}"


def _session(block: str) -> list[tuple[str, str]]:
    """(command, expected output) pairs of a console block."""
    pairs: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        else:
            assert pairs, f"output before any command: {line!r}"
            pairs[-1][1].append(line)
    return [(cmd, "".join(out_line + "\n" for out_line in out)) for cmd, out in pairs]


def _workdir(tmp_path: Path) -> Path:
    try:
        (tmp_path / "fixtures").symlink_to(ROOT / "fixtures", target_is_directory=True)
    except (OSError, NotImplementedError):  # NOTE: Windows without the symlink privilege
        shutil.copytree(ROOT / "fixtures", tmp_path / "fixtures")
    return tmp_path


def _env() -> dict[str, str]:
    env = dict(os.environ, COLUMNS="200", TERM="dumb", PYTHONPATH=str(ROOT))
    env.pop("FORCE_COLOR", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    env.pop("GITHUB_ACTIONS", None)
    return env


def _run(cmd: str, cwd: Path) -> tuple[int, str]:
    words = shlex.split(cmd)
    if words and words[0] == "cat":
        return 0, b"".join((cwd / name).read_bytes() for name in words[1:]).decode("utf-8")
    if words and words[0] == "contam":
        words = [sys.executable, "-m", "contam_cli", *words[1:]]
    proc = subprocess.run(
        words, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    return proc.returncode, posix_paths(proc.stdout.decode("utf-8"))


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_code_blocks_run_and_print_what_is_shown(doc: Path, tmp_path: Path) -> None:
    cwd = _workdir(tmp_path)
    last = 0
    for kind, block, line in _blocks(doc):
        where = f"{doc.name}:{line}"
        if kind == "console":
            for cmd, expected in _session(block):
                if cmd == "echo $?":
                    got = f"{last}\n"
                else:
                    last, got = _run(cmd, cwd)
                assert got == expected, f"{where}: $ {cmd}\n--- got ---\n{got}"
        elif kind == "pycon":
            _doctest(block, cwd, where)
        elif kind == "python":
            old = os.getcwd()
            os.chdir(cwd)
            try:
                exec(compile(block, where, "exec"), {"__name__": "__docs__"})  # noqa: S102
            finally:
                os.chdir(old)
        elif kind == "json":
            orjson.loads(block)


def _doctest(block: str, cwd: Path, where: str) -> None:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block, {}, where, where, 0)
    runner = doctest.DocTestRunner(
        checker=_PosixPaths(), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    old = os.getcwd()
    os.chdir(cwd)
    try:
        runner.run(test)
    finally:
        os.chdir(old)
    assert runner.failures == 0, f"{where}: {runner.failures} doctest failures (see output above)"


class _PosixPaths(doctest.OutputChecker):
    """Doctest output compared with paths written ``/`` (see :func:`conftest.posix_paths`)."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        return super().check_output(want, posix_paths(got), optionflags)


def test_the_architecture_page_names_every_module() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    package = ROOT / "contam_cli"
    missing = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if path.name in ("__init__.py", "__main__.py", "py.typed"):
            continue
        folder = rel.split("/")[0] + "/"
        if (
            f"`{rel}`" not in page
            and f"`{rel.rsplit('/', 1)[0]}/`" not in page
            and folder
            not in (
                "features/",
                "cli/",
            )
        ):
            missing.append(rel)
    assert not missing, f"docs/architecture.md does not describe: {missing}"


def test_the_architecture_page_describes_each_module_once() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1] for line in page.splitlines() if line.startswith("| `")]
    named = [m for row in rows for m in re.findall(r"`([^`]+\.py)`", row)]
    twice = sorted({m for m in named if named.count(m) > 1})
    assert not twice, f"docs/architecture.md describes more than once: {twice}"
