"""Properties the gate rests on, over generated inputs:

- ``clean_corpus``: the cleaned corpus holds only text of the input, in order (each output
  record's text is a concatenation of substrings of its input document, in order; a document
  without a cut is its input line byte for byte), and a rescan finds nothing;
- the flag policy is monotone: raising any threshold never adds a reason;
- text extraction: a dotted field path gives exactly the value there (several joined by
  newlines), and roles keep exactly the chat turns of those roles.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from contam_cli import clean_corpus, scan
from contam_cli.engine.options import ScanOptions
from contam_cli.io.extract import TextSpec, extract_text
from contam_cli.policy.rules import FlagPolicy, SourceThreshold

WHERE = ("p.jsonl", 1)
VOCAB = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]

# -- clean_corpus ----------------------------------------------------------------------------------

words = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=40)
separators = st.sampled_from([" ", " ", " ", ", ", ".\n", "  ", "\n\n", "; "])


@st.composite
def documents(draw: st.DrawFn) -> str:
    ws = draw(words)
    seps = draw(st.lists(separators, min_size=len(ws), max_size=len(ws)))
    return "".join(w + s for w, s in zip(ws, seps)).strip()


@st.composite
def corpus_and_eval(draw: st.DrawFn) -> tuple[list[str], list[str], int]:
    docs = draw(st.lists(documents(), min_size=1, max_size=6))
    n = draw(st.integers(2, 4))
    evals = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            # planted: a run of words of one document (so the clean has something to cut)
            source = draw(st.sampled_from(docs)).split()
            a = draw(st.integers(0, max(0, len(source) - 1)))
            b = draw(st.integers(a + 1, len(source)))
            evals.append(" ".join(source[a:b]))
        else:
            evals.append(" ".join(draw(words)))
    return docs, evals, n


def _in_order_substrings(text: str, source: str, start: int) -> int | None:
    """Where `text` ends in `source` when it is a piece found at or after `start`; None if not."""
    at = source.find(text, start)
    return None if at < 0 else at + len(text)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)  # fmt: skip
@given(
    corpus_and_eval(),
    st.sampled_from(["cut-span", "drop-doc"]),
    st.integers(0, 30),
    st.integers(0, 40),
    st.integers(0, 4),
)
def test_clean_corpus_keeps_only_input_text_in_order_and_a_rescan_finds_nothing(
    data: tuple[list[str], list[str], int], mode: str, window: int, min_piece: int, splits: int
) -> None:
    docs, evals, n = data
    assume(any(len(e.split()) >= n for e in evals))  # else: NothingScoredError, nothing written
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "corpus").mkdir()
        lines = [orjson.dumps({"id": f"d{i}", "text": d, "k": i}) for i, d in enumerate(docs)]
        (root / "corpus" / "c.jsonl").write_bytes(b"\n".join(lines) + b"\n")
        opts = ScanOptions(n=n, jobs=1)
        result = clean_corpus(
            evals,
            root / "corpus",
            root / "out",
            mode=mode,  # type: ignore[arg-type]
            window=window,
            min_piece=min_piece,
            max_splits=splits,
            options=opts,
        )
        out = root / "out" / "c.jsonl"
        written = out.read_bytes().splitlines() if out.exists() else []
        by_doc: dict[int, list[dict[str, Any]]] = {}
        for raw in written:
            if not raw.strip():
                continue
            rec = json.loads(raw)
            i = int(rec["id"].partition("#")[0][1:])
            assert rec["k"] == i  # the other fields of the record are kept
            if rec["text"] == docs[i]:
                assert raw == lines[i], "a document without a cut is not its input line"
            by_doc.setdefault(i, []).append(rec)
        for i, recs in by_doc.items():
            position = 0
            for rec in recs:
                end = _in_order_substrings(rec["text"], docs[i], position)
                assert end is not None, (rec["text"], docs[i])
                position = end
        stats = result.totals
        assert stats["documents"] == len(docs) == stats["kept"] + stats["cut"] + stats["dropped"]
        if not written or not any(r.strip() for r in written):
            return
        again = scan(evals, [root / "out"], options=opts)
        assert all(e.matched_ngrams in (0, None) for e in again.examples)


# -- the flag policy -----------------------------------------------------------------------------

thresholds = st.one_of(st.none(), st.floats(0.0, 1.0))
runs = st.one_of(st.none(), st.integers(1, 60))
zs = st.one_of(st.none(), st.floats(-5, 5))
SOURCES = ("web", "books")


@st.composite
def policies(draw: st.DrawFn) -> FlagPolicy:
    per = {}
    for name in SOURCES:
        if draw(st.booleans()):
            per[name] = SourceThreshold(longest_run=draw(runs), overlap_fraction=draw(thresholds))
    return FlagPolicy(
        min_overlap=draw(thresholds), min_run=draw(runs), zscore=draw(zs), thresholds=per
    )


def _raise_float(draw: st.DrawFn, value: float | None, top: float) -> float | None:
    if value is None:
        return None  # off stays off
    return draw(st.one_of(st.none(), st.floats(value, top)))  # higher, or off


def _raise_int(draw: st.DrawFn, value: int | None) -> int | None:
    if value is None:
        return None
    return draw(st.one_of(st.none(), st.integers(value, value + 100)))


@st.composite
def raised(draw: st.DrawFn, p: FlagPolicy) -> FlagPolicy:
    """`p` with every threshold raised or left (a rule turned off counts as raised to infinity;
    a per-source threshold dropped too)."""
    per = {}
    for name, t in p.thresholds.items():
        if draw(st.booleans()):
            per[name] = SourceThreshold(
                longest_run=_raise_int(draw, t.longest_run),
                overlap_fraction=_raise_float(draw, t.overlap_fraction, 1.0),
            )
    return FlagPolicy(
        min_overlap=_raise_float(draw, p.min_overlap, 1.0),
        min_run=_raise_int(draw, p.min_run),
        zscore=_raise_float(draw, p.zscore, 10.0),
        thresholds=per,
    )


measures = st.tuples(
    st.floats(0.0, 1.0),
    st.integers(0, 100),
    st.floats(-6, 6),
    st.dictionaries(
        st.sampled_from(SOURCES), st.tuples(st.floats(0.0, 1.0), st.integers(0, 100)), max_size=2
    ),
)


@settings(max_examples=400, deadline=None)
@given(st.data(), measures)
def test_raising_a_threshold_never_adds_a_reason(
    data: st.DataObject, m: tuple[float, int, float, dict[str, tuple[float, int]]]
) -> None:
    low = data.draw(policies())
    high = data.draw(raised(low))
    overlap, run, z, per_source = m

    def fired(p: FlagPolicy) -> set[tuple[str, str | None]]:
        reasons = p.reasons(overlap=overlap, run=run, z=z, per_source=per_source)
        return {(r.rule, r.source) for r in reasons}

    assert fired(high) <= fired(low)


@settings(max_examples=200, deadline=None)
@given(measures, st.floats(0.0, 1.0), st.integers(1, 60))
def test_each_rule_fires_exactly_at_its_threshold(
    m: tuple[float, int, float, dict[str, tuple[float, int]]], ov: float, run_floor: int
) -> None:
    overlap, run, z, per_source = m
    p = FlagPolicy(min_overlap=ov, min_run=run_floor, zscore=None)
    rules = {r.rule for r in p.reasons(overlap=overlap, run=run, z=z, per_source=per_source)}
    assert ("min-overlap" in rules) == (overlap >= ov)
    assert ("min-run" in rules) == (run >= run_floor)


# -- text extraction -----------------------------------------------------------------------------

keys = st.text(st.characters(codec="utf-8", exclude_characters="."), min_size=1, max_size=6)
leaves = st.one_of(
    st.text(max_size=12),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.text(max_size=6), max_size=3),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3),
        st.dictionaries(keys, inner, min_size=1, max_size=3),
    ),
    max_leaves=12,
)


def _leaf_paths(obj: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted path, value) of every leaf below `obj` (a list of strings is a leaf)."""
    if isinstance(obj, dict):
        items = [(k, v) for k, v in obj.items()]
    elif isinstance(obj, list) and not all(isinstance(v, str) for v in obj):
        items = [(str(i), v) for i, v in enumerate(obj)]
    else:
        return [(prefix, obj)]
    out = []
    for key, value in items:
        out.extend(_leaf_paths(value, f"{prefix}.{key}" if prefix else key))
    return out


def _as_text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(value)
    return value if isinstance(value, str) else str(value)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, values, min_size=1, max_size=4), st.data())
def test_a_field_path_gives_exactly_the_value_there(obj: dict[str, Any], data: Any) -> None:
    paths = [(p, v) for p, v in _leaf_paths(obj) if p]
    chosen = data.draw(st.lists(st.sampled_from(paths), min_size=1, max_size=3))
    spec = TextSpec(fields=tuple(p for p, _ in chosen))
    assert extract_text(obj, spec, WHERE) == "\n".join(_as_text(v) for _, v in chosen)


ROLES = ["system", "user", "assistant", "tool"]
turn_texts = st.text(st.characters(codec="utf-8"), max_size=15)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(ROLES), turn_texts), min_size=1, max_size=6),
    st.sets(st.sampled_from(ROLES), min_size=1),
    st.booleans(),
)
def test_roles_keep_exactly_the_turns_of_those_roles(
    turns: list[tuple[str, str]], keep: set[str], sharegpt: bool
) -> None:
    if sharegpt:
        names = {"user": "human", "assistant": "gpt"}
        record: dict[str, Any] = {
            "conversations": [{"from": names.get(r, r), "value": t} for r, t in turns]
        }
    else:
        record = {"messages": [{"role": r, "content": t} for r, t in turns]}
    got = extract_text(record, TextSpec(roles=tuple(sorted(keep))), WHERE)
    assert got == "\n".join(t for r, t in turns if r in keep)
    everything = extract_text(record, TextSpec(), WHERE)
    assert everything == "\n".join(t for _, t in turns)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(ROLES), st.lists(turn_texts, max_size=3)), max_size=4),
    st.sets(st.sampled_from(ROLES), min_size=1),
)
def test_roles_keep_the_text_parts_of_kept_turns_and_skip_images(
    turns: list[tuple[str, list[str]]], keep: set[str]
) -> None:
    image = {"type": "image_url", "image_url": {"url": "https://example.org/x.png"}}
    messages = [
        {"role": r, "content": [image, *({"type": "text", "text": t} for t in texts)]}
        for r, texts in turns
    ]
    got = extract_text({"messages": messages}, TextSpec(roles=tuple(sorted(keep))), WHERE)
    kept = ["\n".join(texts) for r, texts in turns if r in keep]
    assert got == "\n".join(kept)
