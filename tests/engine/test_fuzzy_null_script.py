"""scripts/fuzzy_null.py, the real-text null of the fuzzy threshold: markup stripped per
format, prose paragraphs kept, the eval bodies' own packages kept out of the corpus, and the
null summary on a tiny corpus. (The full run needs Debian's documentation packages; these
tests build the files they read.)"""

from __future__ import annotations

import gzip
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
PROSE = (
    "The quick brown fox jumps over the lazy dog while the farmer watches from the old "
    "wooden fence near the river"
)


@pytest.fixture(scope="module")
def null_script() -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))  # NOTE: it imports fuzzy_scoring, as it does when run
    try:
        spec = importlib.util.spec_from_file_location("fuzzy_null", SCRIPTS / "fuzzy_null.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPTS))
    return module


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode()
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def test_html_tags_scripts_and_entities_are_stripped(null_script: ModuleType, tmp_path: Path):
    page = _write(
        tmp_path / "a.html",
        "<html><script>var x = 1;</script><p>Fish &amp; chips</p><div>second <b>block</b></div>",
    )
    text = null_script.read_text(page)
    assert "var x" not in text and "<" not in text
    assert "Fish & chips" in text
    assert [b.strip() for b in text.split("\n\n") if b.strip()] == ["Fish & chips", "second  block"]


def test_pod_commands_go_and_formatting_codes_keep_their_text(null_script, tmp_path: Path):
    pod = _write(tmp_path / "perlfoo.pod", "=head1 NAME\n\nUse B<bold> and C<< $x >> here.\n")
    text = null_script.read_text(pod)
    assert "=head1" not in text
    assert "Use bold and $x here." in text


def test_man_pages_lose_requests_and_escapes(null_script, tmp_path: Path):
    page = _write(
        tmp_path / "man" / "man1" / "tool.1.gz",
        ".TH TOOL 1\n.SH NAME\n\\fBtool\\fR \\- do a thing\n'\\\" comment\nplain line\n",
    )
    text = null_script.read_text(page)
    assert text.splitlines() == ["tool - do a thing", "plain line"]


def test_rst_roles_keep_their_title(null_script, tmp_path: Path):
    rst = _write(
        tmp_path / "lib.rst.txt",
        "See :func:`os.walk` and :ref:`the guide <guide>` or ``literal`` and `link`_.",
    )
    text = null_script.read_text(rst)
    assert text == "See os.walk and the guide or literal and link."


def test_paragraphs_keep_prose_only(null_script):
    code = ">>> print(1)\n" + PROSE
    markup = "== Heading ==\n" + PROSE
    short = "Too short to count."
    numbers = " ".join(["12345"] * 30)
    text = "\n\n".join([PROSE.replace(" the lazy", "\nthe lazy"), code, markup, short, numbers])
    assert null_script.paragraphs(text) == [PROSE]  # lines joined, the rest left out


def test_collect_skips_licences_and_files_the_eval_packages_own(
    null_script, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    docs, fortunes = tmp_path / "python", tmp_path / "fortunes"
    own = _write(docs / "tutorial.rst.txt", PROSE)
    _write(docs / "license.rst.txt", "licence text")
    mine = _write(fortunes / "owned", "a file a python package installed")
    other = _write(fortunes / "zen", PROSE)
    corpus = {"python": (docs, ("**/*.rst.txt",)), "fortunes": (fortunes, ("*",))}
    monkeypatch.setattr(null_script, "CORPUS", corpus)
    monkeypatch.setattr(null_script, "_eval_package_files", lambda: {str(own), str(mine)})
    found = dict(null_script.collect(["python", "fortunes"]))
    # An eval body keeps its own package's files; another body loses them; licences go.
    assert found == {own: PROSE, other: PROSE}


def test_null_summary_counts_only_examples_without_a_shared_8gram(null_script, capsys):
    from contam_cli.engine.fuzzy import FuzzyConfig

    cfg = FuzzyConfig()
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(400)]
    examples = [" ".join(rng.choice(vocab, size=40).tolist()) for _ in range(6)]
    docs = [examples[0], " ".join(rng.choice(vocab, size=300).tolist())]
    res = null_script.fuzzy_scores(examples, docs, cfg, ["copy", "other"])
    run = null_script.exact_signals(examples, docs, 8)["run8"]
    assert run[0] >= 8 and (run[1:] < 8).all()  # example 0 is quoted whole
    out = null_script._null_summary("t", examples, res, run, 1.0, 1.0, cfg)
    assert out["examples"] == 6
    assert out["sharing_an_8gram"] == 1 and out["their_max"] >= cfg.min_fuzzy
    assert out["null_examples"] == 5
    assert out["max"] == pytest.approx(float(res.score[1:].max()), abs=1e-4)
    assert out["null_flagged_at_default"] == int((res.score[1:] >= cfg.min_fuzzy).sum())
    assert out["max_30_60_tokens"] == out["max"]  # every example is 40 tokens
    assert capsys.readouterr().out.startswith("t: {")
