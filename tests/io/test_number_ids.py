"""A number id is exact on every route: an integer beyond 64 bits (which orjson reads as a
double, the .json reader as an integer) and a number that does not read back as written (1e3,
1.50, -0) are refused in an eval set, naming file and line, and are kept as written in a
corpus, so two different ids never become one."""

from __future__ import annotations

from pathlib import Path

import pytest

from contam_cli import scan
from contam_cli.errors import InputError
from contam_cli.io import eval_columns
from contam_cli.io.eval_columns import iter_eval_columns
from contam_cli.io.extract import TextSpec
from contam_cli.io.inputs import as_record
from contam_cli.io.readers import iter_corpus, read_eval

KERNELS = [False, True] if eval_columns.jsonl_kernels() is not None else [False]
BIG = "123456789012345678901234567890"
BIG2 = "123456789012345678901234567891"  # the same double as BIG
TEXT = "alpha beta gamma delta epsilon zeta eta theta iota kappa"


def _jsonl(path: Path, ids: list[str]) -> Path:
    path.write_text("".join(f'{{"id": {i}, "text": "{TEXT} {k}"}}\n' for k, i in enumerate(ids)))
    return path


def _eval_ids(path: Path, route: str) -> list[str]:
    if route == "records":
        return [r.id for r in read_eval([path])]
    columns = iter_eval_columns([path], accel=route == "kernel")
    return [i for batch in columns for i in batch.ids]


ROUTES = ["records", "columns", *(["kernel"] if True in KERNELS else [])]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    ("number", "message"),
    [
        (BIG, f"the id {BIG} is an integer beyond 64 bits; quote it as a string"),
        ("-" + BIG, f"the id -{BIG} is an integer beyond 64 bits; quote it as a string"),
        ("1e3", "the number id 1e3 reads as 1000.0; quote it as a string"),
        ("1.50", "the number id 1.50 reads as 1.5; quote it as a string"),
        ("-0", "the number id -0 reads as 0; quote it as a string"),
    ],
)
def test_an_eval_id_that_is_not_exact_is_refused(
    tmp_path: Path, route: str, number: str, message: str
) -> None:
    path = _jsonl(tmp_path / "e.jsonl", ['"a"', number, '"b"'])
    with pytest.raises(InputError) as err:
        _eval_ids(path, route)
    assert str(err.value) == f"{path}:2: {message}"


@pytest.mark.parametrize("route", ROUTES)
def test_exact_number_ids_are_read_as_before(tmp_path: Path, route: str) -> None:
    ids = ["7", "0", "-3", str((1 << 64) - 1), str(-(1 << 63)), "1.5", "1000.0", "1e-05"]
    path = _jsonl(tmp_path / "e.jsonl", ids)
    assert _eval_ids(path, route) == ids


def test_a_json_eval_set_refuses_an_integer_id_beyond_64_bits(tmp_path: Path) -> None:
    array = tmp_path / "a.json"
    array.write_text(f'[\n{{"id": 1, "text": "{TEXT}"}},\n{{"id": {BIG}, "text": "{TEXT}"}}\n]')
    one = tmp_path / "one.json"
    one.write_text(f'\n{{"id": {BIG}, "text": "{TEXT}"}}')
    beyond = "is an integer beyond 64 bits; quote it as a string"
    with pytest.raises(InputError, match=rf"^{array}:3: the id {BIG} {beyond}$"):
        read_eval([array])
    with pytest.raises(InputError, match=rf"^{one}:2: the id {BIG} {beyond}$"):
        read_eval([one])
    with pytest.raises(InputError, match=rf"^<memory>\[0\]: the id {BIG} {beyond}$"):
        as_record({"id": int(BIG), "text": TEXT}, 0, "<memory>", TextSpec(), role="eval")


def test_corpus_number_ids_are_kept_as_written(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [BIG, BIG2, "1e3", "1000.0", "-0", "0", "1.5"])
    assert [r.id for r in iter_corpus([path])] == [BIG, BIG2, "1e3", "1000.0", "-0", "0", "1.5"]
    array = tmp_path / "c.json"
    array.write_text(f'[{{"id": {BIG}, "text": "{TEXT}"}}, {{"id": 1e3, "text": "{TEXT}"}}]')
    assert [r.id for r in iter_corpus([array])] == [BIG, "1e3"]


@pytest.mark.parametrize("accel", KERNELS)
def test_corpus_evidence_has_the_id_as_written(tmp_path: Path, accel: bool) -> None:
    corpus = _jsonl(tmp_path / "c.jsonl", ['"x"', BIG2, '"y"', BIG])
    report = scan([f"{TEXT} 1", f"{TEXT} 3"], [corpus], n=5, accel=accel)
    evidence = [e["details"]["ngram"]["evidence"] for e in report.to_dict()["examples"]]
    assert [ev["doc_id"] for ev in evidence] == [BIG2, BIG]
