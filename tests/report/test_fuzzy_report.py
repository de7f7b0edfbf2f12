"""The fuzzy detector's part of the report: columns and sparse details, JSON written piece by
piece equal to one dump, valid against the schema, read back equal, redacted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest
from conftest import assert_valid_report
from hypothesis import given, settings
from hypothesis import strategies as st
from test_report_model import SOURCES, TEXT, _one_shot, tables

from contam_cli import scan
from contam_cli.engine.fuzzy import FuzzyConfig
from contam_cli.features.bench.edits import Thesaurus, reword_hard
from contam_cli.features.bench.textmodel import TextModel
from contam_cli.report import (
    FUZZY_METHOD,
    NGRAM_METHODS,
    ExampleTable,
    FuzzyColumns,
    FuzzyMatch,
    FuzzyResult,
    Report,
    iter_json,
    load_report,
    report_from_dict,
    save_report,
)

small = st.integers(0, 10**4)
offset = st.integers(-1, 10**4)


@st.composite
def fuzzy_matches(draw: st.DrawFn) -> FuzzyMatch:
    doc0, eval0 = draw(small), draw(small)
    k = draw(st.integers(1, 4))
    pairs = tuple(
        (eval0 + i, doc0 + i, draw(offset), draw(offset), draw(offset), draw(offset))
        for i in range(k)
    )
    return FuzzyMatch(
        source=draw(st.sampled_from(SOURCES)),
        path=draw(st.none() | TEXT),
        line=draw(st.none() | st.integers(1, 10**6)),
        record=draw(st.none() | st.integers(0, 10**6)),
        doc_id=draw(st.none() | TEXT),
        char_start=draw(offset),
        char_end=draw(offset),
        doc_token=doc0,
        doc_token_end=doc0 + k,
        eval_token=eval0,
        eval_token_end=eval0 + k,
        eval_char_start=draw(offset),
        eval_char_end=draw(offset),
        text=draw(st.none() | TEXT),
        pairs=pairs,
        byte_offset=draw(st.none() | small),
    )


@st.composite
def fuzzy_tables(draw: st.DrawFn) -> ExampleTable:
    """The random tables of test_report_model, with the fuzzy method and its columns."""
    t = draw(tables(ngram=draw(st.booleans())))
    n = len(t)
    scorable = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    fraction = st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0, 1)
    rows = [e for e in range(n) if draw(st.booleans())]
    cols = FuzzyColumns.build(
        scorable=scorable,
        aligned_fraction=draw(st.lists(fraction, min_size=n, max_size=n)),
        identity=draw(st.lists(fraction, min_size=n, max_size=n)),
        per_source={
            e: draw(st.dictionaries(st.sampled_from(SOURCES), st.floats(0, 1), max_size=2))
            for e in rows
        },
        evidence={e: draw(st.none() | fuzzy_matches()) for e in rows},
    )
    score = [draw(fraction) if s else np.nan for s in scorable]
    return ExampleTable(
        ids=t.ids,
        eval_paths=t.eval_paths,
        eval_lines=t.eval_lines,
        fingerprints=t.fingerprints,
        methods=(*t.methods, FUZZY_METHOD),
        scores={**t.scores, "fuzzy": score},
        reasons=t.reasons,
        ngram=t.ngram,
        details={k: v for k, v in t.details.items() if k != "fuzzy"},
        texts=t.texts,
        fuzzy=cols,
    )


@settings(max_examples=60, deadline=None)
@given(fuzzy_tables(), st.booleans(), st.integers(1, 4))
def test_pieces_equal_one_dump_validate_and_load_back_equal(
    table: ExampleTable, redact: bool, slice_examples: int
) -> None:
    report = Report(examples=table, redact=redact)
    data = b"".join(iter_json(report, slice_examples=slice_examples))
    assert data == _one_shot(report)
    doc = assert_valid_report(data)
    back = report_from_dict(doc)
    if not redact:
        assert back == report
    for e, d in enumerate(doc["examples"]):
        fz = d["details"]["fuzzy"]
        assert fz["scorable"] == bool(table.fuzzy.scorable[e])
        if fz["evidence"] is not None:
            ev = table.fuzzy.evidence[e]
            assert fz["evidence"]["text"] == (None if redact else ev.text)
            assert fz["best_source"] == ev.source
            assert len(fz["evidence"]["pairs"]["doc_token"]) == len(ev.pairs)


@settings(max_examples=30, deadline=None)
@given(fuzzy_tables(), st.data())
def test_results_subsets_and_from_results_keep_the_fuzzy_details(
    table: ExampleTable, data: st.DataObject
) -> None:
    results = list(table)
    for e, r in enumerate(results):
        assert r.fuzzy is not None and r.fuzzy.scorable == bool(table.fuzzy.scorable[e])
        assert r.fuzzy.evidence == table.fuzzy.evidence.get(e)
        assert (r.fuzzy.score is None) == (not r.fuzzy.scorable)
    assert ExampleTable.from_results(results, table.methods).fuzzy == table.fuzzy
    idx = np.array(data.draw(st.lists(st.integers(0, max(len(table) - 1, 0)), max_size=5)))
    idx = idx[idx < len(table)].astype(np.int64)
    sub = table.subset(idx)
    assert [r.fuzzy for r in sub] == [results[i].fuzzy for i in idx.tolist()]


def test_fuzzy_columns_need_the_fuzzy_method_and_no_plain_fuzzy_details() -> None:
    cols = FuzzyColumns.build(scorable=[True], aligned_fraction=[0.5], identity=[0.5])
    base = {
        "ids": ["a"],
        "eval_paths": ["e"],
        "eval_lines": [1],
        "fingerprints": ["0" * 32],
    }
    with pytest.raises(ValueError, match="fuzzy method"):
        ExampleTable(**base, methods=(), scores={}, fuzzy=cols)
    with pytest.raises(ValueError, match="plain details"):
        ExampleTable(
            **base,
            methods=(FUZZY_METHOD,),
            scores={"fuzzy": [0.5]},
            fuzzy=cols,
            details={"fuzzy": {0: {"x": 1}}},
        )
    # NOTE: a fuzzy score without its details (a combination of reports) is a plain score.
    alone = ExampleTable(**base, methods=(FUZZY_METHOD,), scores={"fuzzy": [0.5]})
    assert alone[0].fuzzy is None and alone[0].scores["fuzzy"] == 0.5


def test_unscorable_rows_read_none_whatever_their_columns_hold() -> None:
    cols = FuzzyColumns.build(scorable=[False], aligned_fraction=[0.7], identity=[0.2])
    assert np.isnan(cols.aligned_fraction[0])
    r = cols.result(0, 0.9)
    assert r == FuzzyResult(False, None, None, None)


def _reworded() -> tuple[str, str]:
    rng = np.random.default_rng(11)
    model = TextModel.build(rng)
    drafts = model.drafts(rng, np.array([60, 200]))
    copy = reword_hard(drafts[0], model, Thesaurus.build(model, rng), rng).text(model)
    return drafts[0].text(model), drafts[1].text(model) + " " + copy


@pytest.mark.parametrize("redact", [False, True], ids=["plain", "redacted"])
def test_a_real_fuzzy_scan_round_trips_and_redaction_removes_its_texts(
    tmp_path: Path, redact: bool
) -> None:
    example, doc = _reworded()
    (tmp_path / "eval.jsonl").write_bytes(
        orjson.dumps({"id": "q1", "text": example}) + b"\n" + orjson.dumps({"text": "short"})
    )
    (tmp_path / "c.jsonl").write_bytes(orjson.dumps({"text": doc}) + b"\n")
    report = scan(tmp_path / "eval.jsonl", tmp_path / "c.jsonl", fuzzy=FuzzyConfig(), redact=redact)
    path = tmp_path / "r.json.gz"
    save_report(report, path)
    assert load_report(path) == report
    doc_json = assert_valid_report(b"".join(iter_json(report)))
    assert [m["name"] for m in doc_json["methods"]] == [m.name for m in NGRAM_METHODS] + ["fuzzy"]
    first = doc_json["examples"][0]
    ev = first["details"]["fuzzy"]["evidence"]
    assert first["flagged"] and first["reasons"][-1]["rule"] == "min-fuzzy"
    assert ev["eval_char_start"] >= 0 and ev["pairs"]["eval_char_end"][-1] <= len(example)
    assert (ev["text"] is None) == redact and (first["text"] is None) == redact
    if redact:
        assert example not in orjson.dumps(doc_json).decode()
    else:
        assert first["text"] == example and ev["text"] in doc
    assert doc_json["summary"]["fuzzy_unscorable"] == 1
    assert doc_json["config"]["policy"]["min_fuzzy"] == 0.5


def test_the_schema_holds_the_fuzzy_details_when_the_method_is_there() -> None:
    import jsonschema

    example, doc = _reworded()
    data = orjson.loads(b"".join(iter_json(scan([example], [doc], fuzzy=FuzzyConfig()))))
    assert_valid_report(data)
    data["examples"][0]["details"]["fuzzy"]["evidence"]["pairs"]["doc_token"] = [-3]
    with pytest.raises(jsonschema.ValidationError):
        assert_valid_report(data)
    # NOTE: without the fuzzy method, "fuzzy" is any detector's plain details.
    data["methods"] = [m for m in data["methods"] if m["name"] != "fuzzy"]
    for e in data["examples"]:
        e["scores"].pop("fuzzy")
    assert_valid_report(data)
