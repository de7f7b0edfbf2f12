"""contam clean: byte-exact eval cleaning, corpus cleaning in both modes, safe outputs, the CLI."""

from __future__ import annotations

import gzip
import json
import os
import random
import tempfile
from pathlib import Path

import orjson
import pytest
from conftest import DECONTAM
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import contam_cli.features.clean.corpus as clean_module
from contam_cli import clean_corpus, clean_eval, scan
from contam_cli.cli import app
from contam_cli.features.clean import MANIFEST_NAME, CutRule, _kept_spans

runner = CliRunner()
EVAL = DECONTAM / "eval.jsonl"


def run(*args: str):  # noqa: ANN201
    return runner.invoke(app, [str(a) for a in args])


def words(tag: str, k: int) -> str:
    """k words no other call with a different tag shares (so no accidental n-gram overlap)."""
    return " ".join(f"{tag}w{j}" for j in range(k))


def filler(seed: int, k: int) -> str:
    rng = random.Random(seed)
    return " ".join(f"f{rng.randrange(10**6)}" for _ in range(k)) + "."


def tree(root: Path) -> dict[str, bytes]:
    """Every file below root (hidden ones too), by relative path."""
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


# -- eval cleaning -------------------------------------------------------------------------------


@pytest.mark.parametrize("train", ["train.txt", "train.jsonl", "train_chat.jsonl"])
def test_decontam_example_keeps_1_3_5(tmp_path: Path, train: str) -> None:
    out, dirty = tmp_path / "eval.clean.jsonl", tmp_path / "eval.dirty.jsonl"
    result = run("clean", EVAL, "-c", DECONTAM / train, "-n", 8, "-o", out, "--dirty-out", dirty)
    assert result.exit_code == 1, result.output
    assert [json.loads(x)["id"] for x in out.read_text(encoding="utf-8").splitlines()] == [1, 3, 5]
    assert [json.loads(x)["id"] for x in dirty.read_text(encoding="utf-8").splitlines()] == [
        0,
        2,
        4,
    ]
    lines = EVAL.read_bytes().splitlines(keepends=True)
    assert out.read_bytes() == lines[1] + lines[3] + lines[5]
    assert result.stdout.splitlines()[0].split() == ["removed", "reasons", "where"]
    assert result.stdout.splitlines()[-1].startswith("6 examples: 3 removed, 3 kept -> ")


def test_nothing_to_remove_exits_0_and_copies(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"text": words("zz", 40)}) + "\n", encoding="utf-8", newline="\n")
    out = tmp_path / "o.jsonl"
    result = run("clean", EVAL, "-c", corpus, "-n", 8, "-o", out)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == EVAL.read_bytes()
    assert "6 examples: 0 removed, 6 kept" in result.stdout


def test_no_fail_and_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = run(
        "clean", EVAL, "-c", DECONTAM / "train.jsonl", "-n", 8, "-o", tmp_path / "o.jsonl",
        "--report", report, "--no-fail",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["schema"] == "contam.report/2"
    assert [e["id"] for e in data["examples"] if e["flagged"]] == ["0", "2", "4"]
    # NOTE: what made it: the step summary's and the HTML page's title say "contam clean".
    assert data["command"] == "clean"


FORMATS = ["jsonl", "json", "json-object", "txt", "jsonl.gz", "json.gz", "txt.gz"]


def _eval_bytes(fmt: str, texts: list[str], blanks: list[int], crlf: bool, tail: bool) -> bytes:
    """An eval file in `fmt` holding `texts` (blank lines after the records listed in blanks)."""
    if fmt.startswith("json") and not fmt.startswith("jsonl"):
        items = [orjson.dumps({"id": f"r{i}", "question": t}) for i, t in enumerate(texts)]
        sep = b",\n  " if crlf else b", "
        body = b"[" + sep.join(items) + b"]"
        return b'{"meta": {"v": 1}, "data": ' + body + b"}" if "object" in fmt else body
    nl = b"\r\n" if crlf else b"\n"
    out = []
    for i, t in enumerate(texts):
        line = t.encode() if fmt.startswith("txt") else orjson.dumps({"id": f"r{i}", "text": t})
        out.append(line + nl)
        out.extend([b"  " + nl] * blanks.count(i))
    data = b"".join(out)
    return data if tail else data[: -len(nl)]


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    fmt=st.sampled_from(FORMATS),
    n_records=st.integers(1, 8),
    planted=st.sets(st.integers(0, 7)),
    blanks=st.lists(st.integers(0, 7), max_size=4),
    crlf=st.booleans(),
    tail=st.booleans(),
)
def test_property_clean_eval_is_input_minus_flagged_records(
    fmt: str, n_records: int, planted: set[int], blanks: list[int], crlf: bool, tail: bool
) -> None:
    texts = [words(f"r{i}", 6 + i) for i in range(n_records)]
    planted = {i for i in planted if i < n_records}
    suffix = "json" if fmt == "json-object" else fmt
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        raw = _eval_bytes(fmt, texts, blanks, crlf, tail)
        src, out, dirty = d / f"e.{suffix}", d / f"o.{suffix}", d / f"x.{suffix}"
        src.write_bytes(gzip.compress(raw) if suffix.endswith(".gz") else raw)
        corpus = d / "corpus.jsonl"
        docs = [{"text": f"{filler(i, 5)} {texts[i]} {filler(i + 50, 5)}"} for i in planted]
        docs.append({"text": filler(99, 20)})
        corpus.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in docs))
        result = clean_eval(src, corpus, out, dirty_output=dirty, n=4)
        if fmt.startswith("txt"):  # txt ids are line numbers: map them back to record indices
            flagged = {_txt_record_of_line(raw, int(e.id)) for e in result.removed}
        else:
            flagged = {int(e.id.removeprefix("r")) for e in result.removed}
        assert flagged == planted
        got = _plain(out), _plain(dirty)
        if fmt.startswith("json") and not fmt.startswith("jsonl"):
            _check_json(raw, got, texts, planted, "object" in fmt)
        else:
            _check_lines(raw, got, planted, fmt)


def _plain(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


def _txt_record_of_line(raw: bytes, line: int) -> int:
    lines = raw.split(b"\n")[:line]
    return sum(1 for x in lines if x.strip()) - 1


def _check_lines(raw: bytes, got: tuple[bytes, bytes], planted: set[int], fmt: str) -> None:
    kept, removed, record = [], [], -1
    for line in raw.splitlines(keepends=True):
        if not line.strip():
            kept.append(line)
            removed.append(line)
            continue
        record += 1
        (removed if record in planted else kept).append(line)
    assert got == (b"".join(kept), b"".join(removed))


def _check_json(
    raw: bytes, got: tuple[bytes, bytes], texts: list[str], planted: set[int], wrapped: bool
) -> None:
    for data, want in zip(got, (False, True)):
        doc = json.loads(data)
        items = doc["data"] if wrapped else doc
        assert [x["question"] for x in items] == [
            t for i, t in enumerate(texts) if (i in planted) == want
        ]
        for x in items:  # every element keeps its exact bytes
            assert orjson.dumps(x) in data
        if wrapped:
            assert doc["meta"] == {"v": 1}
    assert raw.startswith(got[0][: got[0].index(b"[") + 1])


def test_eval_directory_mirrors_relative_paths(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    (evals / "sub").mkdir(parents=True)
    (evals / "a.jsonl").write_bytes(EVAL.read_bytes())
    (evals / "sub" / "b.txt").write_text(words("bb", 12) + "\n", encoding="utf-8", newline="\n")
    out, dirty = tmp_path / "clean", tmp_path / "dirty"
    result = clean_eval(evals, DECONTAM / "train.jsonl", out, dirty_output=dirty, n=8)
    assert [e.id for e in result.removed] == ["0", "2", "4"]
    assert sorted(tree(out)) == ["a.jsonl", "sub/b.txt"]
    assert (out / "sub" / "b.txt").read_bytes() == (evals / "sub" / "b.txt").read_bytes()
    assert sorted(tree(dirty)) == ["a.jsonl"]  # files with nothing removed are left out


def test_eval_output_format_must_match(tmp_path: Path) -> None:
    result = run("clean", EVAL, "-c", DECONTAM / "train.jsonl", "-n", 8, "-o", tmp_path / "o.json")
    assert result.exit_code == 2, result.output
    assert "keeps the input's format" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["e.arrow", "hf/data-00000-of-00001.arrow"])
def test_arrow_eval_files_are_refused_before_the_scan(tmp_path: Path, name: str) -> None:
    pa = pytest.importorskip("pyarrow")
    src = tmp_path / "in" / name
    src.parent.mkdir(parents=True)
    table = pa.table({"id": ["a"], "text": [words("leak", 20)]})
    with pa.OSFile(str(src), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    (tmp_path / "c.txt").write_text(words("leak", 20) + "\n")
    evals = src if name == "e.arrow" else src.parent
    out = tmp_path / ("o.arrow" if name == "e.arrow" else "out")
    result = run("clean", evals, "-c", tmp_path / "c.txt", "-n", 8, "-o", out)
    assert result.exit_code == 2, result.output
    assert "cannot rewrite .arrow eval files" in result.stderr  # not an internal AssertionError
    assert not out.exists()


# -- corpus cleaning -----------------------------------------------------------------------------

LEAKS = [words(f"leak{i}", 20) for i in range(4)]
FAR = "FAR AWAY. " + filler(7, 80)


def _corpus(root: Path) -> Path:
    """A corpus in every layout: text records, a gzip file, a JSON array, a .txt document, chat
    records, and an untouched file; each leaked document also holds a paragraph FAR from the leak.
    """
    c = root / "corpus"
    (c / "sub").mkdir(parents=True)

    def doc(i: int, leak: str) -> str:
        return f"{filler(i, 60)}\n\n{leak}\n\n{filler(i + 100, 60)}\n\n{FAR}"

    texts = [{"id": f"d{i}", "text": doc(i, LEAKS[i % 4]), "meta": {"k": i}} for i in range(3)]
    texts.append({"id": "d3", "text": doc(3, filler(3, 20)), "meta": {"k": 3}})
    (c / "a.jsonl").write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in texts) + b"\n")
    (c / "sub" / "b.jsonl.gz").write_bytes(
        gzip.compress(orjson.dumps(texts[0]) + b"\n" + orjson.dumps(texts[3]) + b"\n", mtime=0)
    )
    (c / "c.json").write_text(json.dumps(texts, indent=2), encoding="utf-8", newline="\n")
    (c / "d.txt").write_text(
        f"{doc(5, LEAKS[1])}\n\n{filler(6, 60)}\n\n{LEAKS[2]}\n{filler(8, 60)}\n",
        encoding="utf-8",
        newline="\n",
    )
    chat = {
        "messages": [
            {"role": "system", "content": filler(9, 40)},
            {"role": "user", "content": f"{filler(10, 60)} {LEAKS[3]} {filler(11, 60)}"},
            {"role": "assistant", "content": FAR},
        ],
        "source": "x",
    }
    pc = {"prompt": filler(12, 80), "completion": LEAKS[0]}
    (c / "e.jsonl").write_bytes(orjson.dumps(chat) + b"\n" + orjson.dumps(pc) + b"\n")
    (c / "untouched.jsonl").write_bytes(orjson.dumps({"text": filler(13, 50)}) + b"\n")
    return c


def _eval(root: Path) -> Path:
    path = root / "eval.jsonl"
    rows = [{"id": f"e{i}", "text": t} for i, t in enumerate(LEAKS)] + [
        {"id": "clean", "text": words("never", 20)}
    ]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in rows))
    return path


@pytest.mark.parametrize("mode", ["cut-span", "drop-doc"])
def test_corpus_clean_then_rescan_finds_nothing(tmp_path: Path, mode: str) -> None:
    corpus, ev, out = _corpus(tmp_path), _eval(tmp_path), tmp_path / "out"
    result = run("clean", ev, "-c", corpus, "--target", "corpus", "-o", out, "--mode", mode)
    assert result.exit_code == 1, result.output
    before = scan(ev, [corpus], n=13)
    assert len(before.flagged) == 4
    after = scan(ev, [out], n=13)
    assert after.flagged == () and all(e.matched_ngrams == 0 for e in after.examples)
    got, src = tree(out), tree(corpus)
    # untouched files are byte-identical copies (compression included)
    assert got["untouched.jsonl"] == src["untouched.jsonl"]
    manifest = json.loads(got[MANIFEST_NAME])
    files = {Path(f["input"]).relative_to(corpus).as_posix(): f for f in manifest["files"]}
    for f in files.values():
        assert f["documents"] == f["kept"] + f["cut"] + f["dropped"]
    total = manifest["summary"]
    assert total["documents"] == sum(f["documents"] for f in files.values()) == 14
    assert total["documents"] == total["kept"] + total["cut"] + total["dropped"]
    written_docs = sum(f["kept"] + f["pieces"] for f in files.values())
    assert after.stats["corpus_documents"] == written_docs
    if mode == "drop-doc":
        assert total["cut"] == 0 and total["dropped"] == 10
        assert files["a.jsonl"]["kept"] == 1 and "d.txt" not in got
        assert (out / "a.jsonl").read_bytes() == orjson.dumps(_doc_d3(corpus)) + b"\n\n"
    else:
        assert total["dropped"] == 0 and total["cut"] == 10
        # text far (> window) from any match is unchanged, in every layout
        for name in ("a.jsonl", "c.json", "d.txt"):
            assert FAR.encode() in got[name], name
        assert FAR.encode() in gzip.decompress(got["sub/b.jsonl.gz"])
        assert json.loads(got["e.jsonl"].splitlines()[0])["messages"][2]["content"] == FAR


def _doc_d3(corpus: Path) -> dict:
    return json.loads((corpus / "a.jsonl").read_text(encoding="utf-8").splitlines()[3])


def test_an_arrow_corpus_file_needing_a_change_is_refused(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    table = pa.table({"text": [words("leak", 20), words("other", 20)]})
    with pa.OSFile(str(corpus / "e.arrow"), "wb") as sink:
        with pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table)
    (tmp_path / "e.jsonl").write_text(json.dumps({"text": words("leak", 20)}) + "\n")
    out = tmp_path / "out"
    result = run("clean", tmp_path / "e.jsonl", "-c", corpus, "--target", "corpus", "-o", out)
    # NOTE: it wrote an empty e.arrow and counted the other document kept
    assert result.exit_code == 2, result.output
    assert "cannot rewrite .arrow corpus files" in result.stderr
    assert not out.exists()
    (tmp_path / "e.jsonl").write_text(json.dumps({"text": words("none", 20)}) + "\n")
    assert (
        run("clean", tmp_path / "e.jsonl", "-c", corpus, "--target", "corpus", "-o", out).exit_code
        == 0
    )
    assert (out / "e.arrow").read_bytes() == (corpus / "e.arrow").read_bytes()


def test_cut_span_splits_text_records_with_unique_ids(tmp_path: Path) -> None:
    corpus, out = _corpus(tmp_path), tmp_path / "out"
    clean_corpus(_eval(tmp_path), corpus, out)
    rows = [
        json.loads(x)
        for x in (out / "a.jsonl").read_text(encoding="utf-8").splitlines()
        if x.strip()
    ]
    assert [r["id"] for r in rows] == ["d0#0", "d0#1", "d1#0", "d1#1", "d2#0", "d2#1", "d3"]
    assert all(r["meta"] == {"k": int(r["id"][1])} for r in rows)
    assert rows[-1] == _doc_d3(corpus)  # the untouched document, byte for byte below
    d3_line = (corpus / "a.jsonl").read_bytes().splitlines(keepends=True)[3]
    assert (out / "a.jsonl").read_bytes().endswith(d3_line + b"\n")
    d0 = json.loads((corpus / "a.jsonl").read_text(encoding="utf-8").splitlines()[0])["text"]
    for r in rows[:-1]:
        assert len(r["text"]) >= 200 and not any(leak in r["text"] for leak in LEAKS)
    assert d0.startswith(rows[0]["text"]) and d0.endswith(rows[1]["text"])
    array = json.loads((out / "c.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in array] == [r["id"] for r in rows]
    assert (
        (out / "c.json").read_text(encoding="utf-8").startswith("[\n  {")
    )  # original separators kept


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_a_split_record_keeps_the_files_line_endings(tmp_path: Path, newline: bytes) -> None:
    # The pieces of a cut record were joined by "\n" in a "\r\n" file: mixed endings.
    corpus, out = _corpus(tmp_path), tmp_path / "out"
    path = corpus / "a.jsonl"
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", newline))
    clean_corpus(_eval(tmp_path), corpus, out)
    written = (out / "a.jsonl").read_bytes()
    ids = [json.loads(x)["id"] for x in written.splitlines() if x.strip()]
    assert ids == ["d0#0", "d0#1", "d1#0", "d1#1", "d2#0", "d2#1", "d3"]
    crlf = written.count(b"\r\n")
    assert crlf == (written.count(b"\n") if newline == b"\r\n" else 0) and crlf != 1


def test_chat_records_stay_valid_with_the_same_keys(tmp_path: Path) -> None:
    corpus, out = _corpus(tmp_path), tmp_path / "out"
    result = clean_corpus(_eval(tmp_path), corpus, out)
    before = [json.loads(x) for x in (corpus / "e.jsonl").read_text(encoding="utf-8").splitlines()]
    after = [json.loads(x) for x in (out / "e.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(after) == 2  # never split
    for b, a in zip(before, after):
        assert a.keys() == b.keys()
    chat_b, chat_a = before[0]["messages"], after[0]["messages"]
    assert [m.keys() for m in chat_a] == [m.keys() for m in chat_b]
    assert [m["role"] for m in chat_a] == ["system", "user", "assistant"]
    assert chat_a[0] == chat_b[0] and chat_a[2] == chat_b[2]
    assert LEAKS[3] not in chat_a[1]["content"] and chat_a[1]["content"]
    assert after[1]["prompt"] == before[1]["prompt"][: len(after[1]["prompt"])]
    assert after[1]["completion"] == ""
    stats = {Path(f.input).name: f for f in result.files}
    assert (stats["e.jsonl"].cut, stats["e.jsonl"].pieces) == (2, 2)


def test_a_turn_whose_text_is_under_text_is_cut_where_the_scan_read_it(tmp_path: Path) -> None:
    # NOTE: {"role", "text"} turns and {"type": "text", "content"} parts were read as empty.
    corpus, out = tmp_path / "c", tmp_path / "out"
    corpus.mkdir()
    turns = [
        {"role": "user", "text": f"{FAR} {LEAKS[0]} {FAR}"},
        {"role": "assistant", "content": [{"type": "text", "content": f"{FAR} {LEAKS[1]}"}]},
    ]
    (corpus / "chat.jsonl").write_bytes(orjson.dumps({"messages": turns}) + b"\n")
    result = clean_corpus(_eval(tmp_path), corpus, out)
    (after,) = [
        json.loads(x) for x in (out / "chat.jsonl").read_text(encoding="utf-8").split("\n") if x
    ]
    text, part = after["messages"][0]["text"], after["messages"][1]["content"][0]["content"]
    # NOTE: the cut's window takes a few tokens of FAR beside the leak.
    assert LEAKS[0] not in text and text.startswith(FAR[:100])
    assert LEAKS[1] not in part and part.startswith(FAR[:100])
    assert result.files[0].cut == 1


def test_txt_pieces_are_separated_by_a_blank_line(tmp_path: Path) -> None:
    corpus, out = _corpus(tmp_path), tmp_path / "out"
    clean_corpus(_eval(tmp_path), corpus, out)
    text = (out / "d.txt").read_text(encoding="utf-8")
    original = (corpus / "d.txt").read_text(encoding="utf-8")
    assert all(part in original for part in text.split("\n\n"))
    assert LEAKS[1] not in text and LEAKS[2] not in text and FAR in text
    assert text.startswith(original[:100]) and len(text) < len(original)


@pytest.mark.parametrize(
    "at, rule, kept",
    [
        pytest.param(2, CutRule(window=0, min_piece=0), ["aa bb", "ee ff"], id="no-window"),
        pytest.param(2, CutRule(window=2, min_piece=0), ["aa", "ff"], id="snap-to-tokens"),
        pytest.param(3, CutRule(window=0, min_piece=6), ["aa bb cc"], id="short-piece-dropped"),
        pytest.param(2, CutRule(window=9, min_piece=0), None, id="nothing-left"),
        pytest.param(0, CutRule(window=0, min_piece=0), ["cc dd ee ff"], id="at-the-start"),
    ],
)
def test_cut_rule(at: int, rule: CutRule, kept: list[str] | None) -> None:
    import numpy as np

    text = "aa bb cc dd ee ff"  # the matched 2-gram starts at token `at`
    got = _kept_spans(text, np.array([at]), 2, rule)
    assert (None if got is None else [text[a:b] for a, b in got]) == kept


def test_a_join_that_forms_an_eval_ngram_drops_the_document(tmp_path: Path) -> None:
    ev = tmp_path / "eval.jsonl"
    ev.write_text(
        json.dumps({"text": LEAKS[0]}) + "\n" + json.dumps({"text": "x1 x2 y1 y2"}) + "\n",
        encoding="utf-8",
        newline="\n",
    )
    corpus = tmp_path / "c"
    corpus.mkdir()
    doc = f"{filler(1, 40)} x1 x2 {LEAKS[0]} y1 y2 {filler(2, 40)}"
    (corpus / "d.txt").write_text(doc, encoding="utf-8", newline="\n")
    (corpus / "d.jsonl").write_text(
        json.dumps({"text": doc}) + "\n", encoding="utf-8", newline="\n"
    )
    result = clean_corpus(ev, corpus, tmp_path / "out", n=4, window=0, min_piece=0)
    stats = {Path(f.input).name: f for f in result.files}
    assert (stats["d.txt"].dropped, stats["d.txt"].output) == (1, None)  # "x2\n\ny1" would match
    assert (stats["d.jsonl"].cut, stats["d.jsonl"].pieces) == (1, 2)  # pieces are separate records
    assert scan(ev, [tmp_path / "out"], n=4).examples[1].matched_ngrams == 0


def test_max_splits_drops_the_document() -> None:
    import numpy as np

    text = " ".join(f"t{i}" for i in range(100))
    positions = np.arange(0, 100, 10)
    assert _kept_spans(text, positions, 2, CutRule(window=0, min_piece=0, max_splits=9)) is None
    got = _kept_spans(text, positions, 2, CutRule(window=0, min_piece=0, max_splits=10))
    assert got is not None and len(got) == 10


def test_flagged_only_keeps_unflagged_examples_ngrams(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    partial = " ".join(LEAKS[0].split()[:8])  # 8 of 20 words: overlap below 0.5, run < 30
    corpus.write_text(
        json.dumps({"text": f"{filler(1, 80)} {partial} {filler(2, 80)}"}) + "\n",
        encoding="utf-8",
        newline="\n",
    )
    ev = _eval(tmp_path)
    every = clean_corpus(ev, corpus, tmp_path / "all", n=5)
    only = clean_corpus(ev, corpus, tmp_path / "flagged", n=5, flagged_only=True)
    assert every.changed and every.totals["cut"] == 1
    assert not only.changed and only.report is not None and only.report.flagged == ()
    assert only.report.command == "clean"
    assert tree(tmp_path / "flagged")["c.jsonl"] == corpus.read_bytes()
    assert json.loads(tree(tmp_path / "flagged")[MANIFEST_NAME])["config"]["ngrams"] == "flagged"


def test_parallel_jobs_give_the_same_output(tmp_path: Path) -> None:
    corpus, ev = _corpus(tmp_path), _eval(tmp_path)
    clean_corpus(ev, corpus, tmp_path / "one", jobs=1)
    clean_corpus(ev, corpus, tmp_path / "two", jobs=2)
    assert tree(tmp_path / "one") == tree(tmp_path / "two")


# -- safety --------------------------------------------------------------------------------------


def test_refuses_to_write_over_an_input(tmp_path: Path) -> None:
    ev = tmp_path / "e.jsonl"
    ev.write_bytes(EVAL.read_bytes())
    before = tree(tmp_path)
    result = run("clean", ev, "-c", DECONTAM / "train.jsonl", "-n", 8, "-o", ev)
    assert result.exit_code == 2, result.output
    assert "refusing to overwrite the input" in result.stderr
    assert tree(tmp_path) == before


@pytest.mark.parametrize("target", ["eval", "corpus"])
def test_refuses_to_write_inside_an_input_directory(tmp_path: Path, target: str) -> None:
    corpus = _corpus(tmp_path)
    before = tree(tmp_path)
    out = corpus / "sub" / ("clean.jsonl" if target == "eval" else "outdir")
    result = run("clean", EVAL, "-c", corpus, "-o", out, "--target", target)
    assert result.exit_code == 2, result.output
    assert "refusing to write inside the input directory" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert tree(tmp_path) == before


def test_refuses_an_outdir_holding_an_input_even_with_force(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    before = tree(tmp_path)
    result = run("clean", EVAL, "-c", corpus, "-o", tmp_path, "--target", "corpus", "--force")
    assert result.exit_code == 2, result.output
    assert "holding the input" in result.stderr
    assert tree(tmp_path) == before


def test_non_empty_outdir_needs_force(tmp_path: Path) -> None:
    corpus, ev, out = _corpus(tmp_path), _eval(tmp_path), tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8", newline="\n")
    args = ("clean", ev, "-c", corpus, "--target", "corpus", "-o", out)
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "not empty (use --force" in result.stderr
    assert tree(out) == {"keep.txt": b"mine"}
    result = run(*args, "--force")
    assert result.exit_code == 1, result.output
    assert "keep.txt" not in tree(out) and MANIFEST_NAME in tree(out)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]  # no leftovers


def test_bad_input_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": "a", "text": "x y z"}\n{"id": "b", "text": \n')
    for target, out in (("eval", tmp_path / "o.jsonl"), ("corpus", tmp_path / "od")):
        result = run("clean", bad, "-c", DECONTAM / "train.jsonl", "-o", out, "--target", target)
        assert result.exit_code == 2, result.output
        assert "bad.jsonl:2:" in result.stderr and "Traceback" not in result.stderr
    corpus_bad = tmp_path / "cbad.jsonl"
    corpus_bad.write_bytes(b'{"text": "x"}\nnot json\n')
    result = run("clean", EVAL, "-c", corpus_bad, "-o", tmp_path / "od", "--target", "corpus")
    assert result.exit_code == 2, result.output
    assert "cbad.jsonl:2:" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "cbad.jsonl"]


def test_interrupted_run_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, ev, out = _corpus(tmp_path), _eval(tmp_path), tmp_path / "out"
    real = clean_module._clean_file
    calls = []

    def flaky(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(clean_module, "_clean_file", flaky)
    before = tree(tmp_path)
    result = run("clean", ev, "-c", corpus, "--target", "corpus", "-o", out, "-j", 1)
    assert result.exit_code == 130, result.output
    assert "interrupted" in result.stderr
    assert tree(tmp_path) == before and not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["corpus", "eval.jsonl"]


def test_option_misuse_is_a_usage_error(tmp_path: Path) -> None:
    corpus = DECONTAM / "train.jsonl"
    for extra in (
        ("--target", "corpus", "--dirty-out", tmp_path / "d.jsonl"),
        ("--manifest", tmp_path / "m.json"),
        ("--target", "corpus", "--report", tmp_path / "r.json"),
    ):
        result = run("clean", EVAL, "-c", corpus, "-o", tmp_path / "o", *extra)
        assert result.exit_code == 2, result.output
    assert run("clean", EVAL, "-c", corpus).exit_code == 2  # -o is required
    assert list(tmp_path.iterdir()) == []


def test_library_api_is_exported() -> None:
    import contam_cli

    assert contam_cli.clean_eval is clean_eval and contam_cli.clean_corpus is clean_corpus
    assert {"clean_eval", "clean_corpus"} <= set(contam_cli.__all__)
