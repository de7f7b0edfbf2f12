"""The JSON array scanner: each record of a JSON array (or object) with its line and exact bytes.

A ``.json`` document is a top-level array of records, an object holding one (``{"data": [...]}``),
or one record: an object with a text field :func:`~contam_cli.io.extract.extract_text` detects
(``{"id": ..., "question": ..., "choices": [...]}``) is that record, never a container of its
lists. An object that is neither (several arrays of records, or an array of strings beside string
fields, which could be a record's text or its tags) is refused, not guessed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, cast

from contam_cli.errors import InputError
from contam_cli.io.extract import TEXT_KEYS, without_surrogates
from contam_cli.io.model import ReadNotes

__all__ = ["iter_array_elements"]

_JSON_WS = re.compile(r"[ \t\n\r]*")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _JsonScanner:
    """Walks a JSON document with the stdlib decoder to find each array element's exact bytes."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.decoder = json.JSONDecoder()
        bom = text.startswith("\ufeff")  # NOTE: decoded as plain UTF-8, a BOM stays in the text.
        self.pos = 1 if bom else 0
        self.char_pos = self.pos
        self.byte_pos = 3 if bom else 0
        self.line = 1
        self.line_pos = 0

    def skip_ws(self) -> str:
        match = _JSON_WS.match(self.text, self.pos)
        self.pos = match.end() if match else self.pos
        return self.text[self.pos : self.pos + 1]

    def value(self) -> tuple[object, int]:
        try:
            obj, end = self.decoder.raw_decode(self.text, self.pos)
        except json.JSONDecodeError as exc:
            raise InputError(self.path, f"invalid JSON: {exc.msg}", exc.lineno) from None
        start, self.pos = self.pos, end
        return obj, start

    def expect(self, chars: str) -> str:
        found = self.skip_ws()
        if not found or found not in chars:
            what = repr(found) if found else "end of file"
            expected = " or ".join(chars)
            raise InputError(
                self.path,
                f"invalid JSON: expected {expected}, found {what}",
                self.line_at(self.pos),
            )
        self.pos += 1
        return found

    def line_at(self, pos: int) -> int:
        self.line += self.text.count("\n", self.line_pos, pos)
        self.line_pos = pos
        return self.line

    def byte_at(self, pos: int) -> int:
        self.byte_pos += len(self.text[self.char_pos : pos].encode("utf-8"))
        self.char_pos = pos
        return self.byte_pos

    def elements(self) -> Iterator[tuple[object, int, tuple[int, int]]]:
        """``(element, line, byte span)`` for an array starting at the cursor (after ``[``)."""
        if self.skip_ws() == "]":
            self.pos += 1
            return
        while True:
            self.skip_ws()
            obj, start = self.value()
            line = self.line_at(start)
            span = (self.byte_at(start), self.byte_at(self.pos))
            yield obj, line, span
            if self.expect(",]") == "]":
                return

    def enter_member(self, key: str) -> None:
        """Move the cursor past ``"key": [`` in the top-level object (the cursor is after ``{``)."""
        while True:
            self.skip_ws()
            name, _ = self.value()
            self.expect(":")
            self.skip_ws()
            if name == key and self.text.startswith("[", self.pos):
                self.pos += 1
                return
            self.value()
            self.expect(",")

    def rest_of_members(self, key: str) -> None:
        """Walk the members after the records array (the cursor is after its ``]``) to the
        closing ``}``; the key repeated there is an InputError. NOTE: json.loads keeps the last
        of repeated keys, the walk above reads the first, so a repeat is refused, not guessed."""
        while self.expect(",}") == ",":
            self.skip_ws()
            start = self.pos
            name, _ = self.value()
            if name == key:
                raise InputError(
                    self.path,
                    f"invalid JSON: the key {key!r} of the records appears twice in the object",
                    self.line_at(start),
                )
            self.expect(":")
            self.skip_ws()
            self.value()


def _is_one_record(top: dict[str, Any]) -> bool:
    """Whether a top-level object is itself a record: it has a text field auto-detection reads."""
    return any(top.get(key) is not None for key in TEXT_KEYS)


def _records_key(top: dict[str, Any], path: str) -> str:
    """The key of the one list of records in a top-level object that is not a record."""
    lists = [k for k, v in top.items() if isinstance(v, list)]
    # NOTE: an array holding objects beats one of plain strings (e.g. "tags" beside "data").
    of_objects = [k for k in lists if any(isinstance(e, dict) for e in top[k])]
    chosen = of_objects if of_objects else lists
    if len(chosen) != 1:
        found = ", ".join(repr(k) for k in chosen) or "none"
        raise InputError(
            path,
            "expected a JSON array of records, an object holding exactly one array of records "
            f"or one record with a text field (arrays found: {found})",
            1,
        )
    strings = [k for k, v in top.items() if isinstance(v, str)]
    if not of_objects and strings:
        # NOTE: {"body": "...", "tags": ["a", "b"]} is a record whose text field is not one
        # auto-detection knows, or a container: reading the tags as records would miss "body".
        raise InputError(
            path,
            f"a JSON object holding the array of strings {chosen[0]!r} beside the string "
            f"field(s) {', '.join(map(repr, strings))}: one record, or an array of records? "
            "Write records as a JSON array or JSONL",
            1,
        )
    return chosen[0]


def iter_array_elements(
    text: str, path: str, notes: ReadNotes | None = None
) -> Iterator[tuple[object, int, tuple[int, int]]]:
    """``(element, line, byte span)`` of every record in a JSON document: the elements of a
    top-level array, the top-level object when it is a record (see _is_one_record), or the
    elements of the one array of records in a top-level object (see _records_key)."""
    scanner = _JsonScanner(text, path)
    opening = scanner.skip_ws()
    resume = None
    key: str | None = None
    if opening == "{":
        brace = scanner.pos
        top, _ = scanner.value()
        resume = scanner.pos
        if _is_one_record(cast(dict[str, Any], top)):
            line, span = scanner.line_at(brace), (scanner.byte_at(brace), scanner.byte_at(resume))
            fixed, changed = without_surrogates(top)
            if changed and notes is not None:
                notes.replaced(path)
            _end_of_document(scanner, "record")
            yield fixed, line, span
            return
        key = _records_key(cast(dict[str, Any], top), path)
        scanner.pos = brace + 1
        scanner.enter_member(key)
    elif opening == "[":
        scanner.pos += 1
    elif not opening:
        return  # NOTE: an empty file; the caller reports "no records".
    else:
        raise InputError(
            path, "expected a JSON array of records, an object holding one or one record", 1
        )
    # NOTE: the stdlib decoder reads "\ud800" as a lone surrogate, which is not text: replaced
    # as the JSONL reader does (looked for only in documents that hold such an escape).
    escapes = _SURROGATE_ESCAPE.search(text) is not None
    for obj, line, span in scanner.elements():
        fixed, changed = without_surrogates(obj) if escapes else (obj, False)
        if changed and notes is not None:
            notes.replaced(path)
        yield fixed, line, span
    if key is not None:
        scanner.rest_of_members(key)
    scanner.pos = resume if resume is not None else scanner.pos
    _end_of_document(scanner, "array")


def _end_of_document(scanner: _JsonScanner, what: str) -> None:
    """Refuse anything but whitespace after the top-level value (the cursor is after it)."""
    start = scanner.pos
    if nxt := scanner.skip_ws():
        # NOTE: Spark and others write JSON Lines under a .json name (part-00000-....json).
        lines = nxt == "{" and "\n" in scanner.text[start : scanner.pos]
        hint = " (one JSON object per line is JSON Lines: name the file .jsonl)" if lines else ""
        raise InputError(
            scanner.path,
            f"invalid JSON: extra data after the {what}{hint}",
            scanner.line_at(scanner.pos),
        )
