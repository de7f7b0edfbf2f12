"""Fuzz the JSON array scanner (`contam_cli.io.jsonarray.iter_array_elements`).

The input is a .json file's bytes (inputs that are not UTF-8 are skipped: the reader refuses them
before the scanner runs). What must hold, against ``json.loads`` of the same text:

- invalid JSON is an InputError, never a prefix read as the whole;
- a top-level array: the elements are exactly the array's (lone surrogates as U+FFFD);
- a top-level object: the elements are those of its one array of records (an array holding an
  object, else the one array), and anything else is an InputError; so is that key repeated
  with an array (json.loads keeps the last, a streaming reader cannot know; refused);
- any other top-level value is an InputError;
- each element's byte span cuts exactly its bytes (``json.loads(data[a:b])`` is the element),
  spans are in order and do not overlap, and its line is the line its bytes start on.

The only allowed exception is InputError.

Run: ``python fuzz/fuzz_jsonarray.py [libFuzzer flags] [corpus dirs]`` (see scripts/fuzz.sh).
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import ALLOWED, main  # noqa: E402

from contam_cli.io.extract import without_surrogates  # noqa: E402
from contam_cli.io.jsonarray import iter_array_elements  # noqa: E402

_MISSING = object()


def _same(a: object, b: object) -> bool:
    # NOTE: through json.dumps, so that NaN equals NaN and 1 differs from 1.0 and True.
    try:
        return json.dumps(a) == json.dumps(b)
    except RecursionError:  # too deep for the comparison itself: not judged here
        return True


def _records_of(top: object) -> object:
    """The list json.loads says the scanner must read, or _MISSING where it must refuse."""
    if isinstance(top, list):
        return top
    if not isinstance(top, dict):
        return _MISSING
    lists = [k for k, v in top.items() if isinstance(v, list)]
    of_objects = [k for k in lists if any(isinstance(e, dict) for e in top[k])]
    chosen = of_objects if of_objects else lists
    return top[chosen[0]] if len(chosen) == 1 else _MISSING


def check(data: bytes) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    try:
        got = list(iter_array_elements(text, "f.json"))
    except ALLOWED as e:
        assert str(e).startswith("f.json"), str(e)
        got = None
    body = text[1:] if text.startswith("\ufeff") else text
    outer: list[list[tuple[str, object]]] = []

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        outer.append(items)  # NOTE: the last call is the outermost object
        return dict(items)

    try:
        ref = json.loads(body, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        ref = _MISSING
    if not body.strip(" \t\n\r"):
        assert got == [], f"an empty document gave {got!r}"  # the reader says "no records"
        return
    want = _MISSING if ref is _MISSING else _records_of(ref)
    if isinstance(ref, dict) and want is not _MISSING:
        key = next(k for k, v in ref.items() if v is want)
        if sum(k == key and isinstance(v, list) for k, v in outer[-1]) > 1:
            want = _MISSING  # the records' key repeated: refused
    if want is _MISSING:
        assert got is None, f"read {got!r} from a document json.loads gives {ref!r}"
        return
    assert got is not None, f"refused a document whose records json.loads gives: {want!r}"
    assert isinstance(want, list)
    assert len(got) == len(want), (len(got), len(want))
    previous_end = 0
    for (obj, line, (a, b)), expected in zip(got, want):
        fixed, _ = without_surrogates(expected)
        assert _same(obj, fixed), f"element {obj!r}, json.loads gives {fixed!r}"
        assert previous_end <= a < b <= len(data), (previous_end, a, b, len(data))
        previous_end = b
        assert _same(json.loads(data[a:b].decode("utf-8")), expected), (a, b, data[a:b])
        assert line == data.count(b"\n", 0, a) + 1, (line, a)


if __name__ == "__main__":
    main(check)
