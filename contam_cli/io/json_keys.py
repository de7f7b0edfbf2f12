"""Repeated keys in the JSON documents contam reads whole as settings (baselines, thresholds).

JSON parsers, orjson and the standard library alike, keep the last of a key given twice in one
object, silently: ``{"findings": [], "findings": [...]}`` would be a baseline of the second list,
a hand edit gone wrong read as something nobody wrote. :func:`check_unique_keys` refuses it the
way the eval reader refuses a repeated records key (:mod:`contam_cli.io.jsonarray`): an error
naming the key and the line where it appears the second time.
"""

from __future__ import annotations

import json
import json.scanner
import re
from typing import Any

__all__ = ["check_unique_keys"]

_WS = re.compile(r"[ \t\n\r]*")


class _Repeated(Exception):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Repeated
    return out


def check_unique_keys(text: str) -> None:
    """Refuse a key that appears twice in one object of the JSON document `text` (already
    known to parse): a :class:`json.JSONDecodeError` at the second one, whose ``msg`` names
    the key and ``lineno`` its line. Callers report it as they report invalid JSON.

    >>> check_unique_keys('{"a": {"b": 1}, "b": 2}')
    >>> try:
    ...     check_unique_keys('{"a": 1,\\n "a": 2}')
    ... except json.JSONDecodeError as e:
    ...     print(e.msg, e.lineno)
    the key 'a' appears twice in one object 2
    """
    try:
        json.loads(text, object_pairs_hook=_unique)
    except _Repeated:
        key, pos = _first_repeat(text)
        raise json.JSONDecodeError(f"the key {key!r} appears twice in one object", text, pos)
    except (ValueError, RecursionError):
        pass  # NOTE: not JSON to this parser; the caller's own parser has the say


def _first_repeat(text: str) -> tuple[str, int]:
    """The first key (in the text's order) that repeats one before it in its object, and its
    offset. Only called on a document with one, which the walk reaches before any text that
    does not parse (the parser got to the end of that object)."""
    scan = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]

    def skip(i: int) -> int:
        return _WS.match(text, i).end()  # type: ignore[union-attr]  # NOTE: it matches ""

    def value(i: int) -> int:
        i = skip(i)
        opening = text[i]
        if opening not in "{[":
            return int(scan(text, i)[1])
        closing, seen = ("}" if opening == "{" else "]"), set[str]()
        i = skip(i + 1)
        if text[i] == closing:
            return i + 1
        while True:
            if opening == "{":
                i = skip(i)
                key, after = scan(text, i)
                if key in seen:
                    raise _Found(key, i)
                seen.add(key)
                i = skip(after) + 1  # the ':'
            i = skip(value(i))
            if text[i] == closing:
                return i + 1
            i += 1  # the ','

    try:
        value(0)
    except _Found as found:
        return found.key, found.pos
    raise AssertionError("no repeated key found")  # pragma: no cover


class _Found(Exception):
    def __init__(self, key: str, pos: int) -> None:
        self.key, self.pos = key, pos
