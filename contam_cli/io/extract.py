"""Text and id extraction: which part of a parsed record is its text, and which its id."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contam_cli.errors import InputError

__all__ = [
    "ID_KEYS",
    "TEXT_KEYS",
    "TextSpec",
    "Where",
    "extract_id",
    "extract_text",
    "fail",
    "find_id",
    "lookup",
]

Where = tuple[str, int | None]
"""(path, line) of the record being read, for error messages."""

TURN_KEYS = ("content", "value", "text")
"""Where a chat turn's text is looked for, in this order (OpenAI, ShareGPT, other exports)."""
PART_KEYS = ("text", "content")
"""Where a text content part's text is looked for, in this order."""
TEXT_KEYS = ("text", "content", "question", "prompt", "instruction", "messages", "conversations")
"""The keys a record's text is auto-detected from (see :func:`extract_text`)."""
ID_KEYS = ("id", "_id", "uid", "qid", "question_id", "task_id", "example_id", "idx")
"""The keys an id is auto-detected from, in order."""
_SHAREGPT_ROLES = {"human": "user", "gpt": "assistant", "system": "system"}
_MISSING = object()


@dataclass(frozen=True, slots=True)
class TextSpec:
    """Which part of a record is its text and which its id (``--field/--roles/--id-field``).

    ``TextSpec()`` auto-detects both; ``TextSpec(fields=("question", "choices.0"))`` joins two
    fields with a newline; ``TextSpec(roles=("user",))`` keeps only the user turns of a chat record.
    """

    fields: tuple[str, ...] = ()
    """Dotted paths (dict keys; integer parts index lists). Several are joined with "\\n"."""
    roles: tuple[str, ...] | None = None
    """Chat roles to keep (ShareGPT ``human``/``gpt`` match ``user``/``assistant``); None = all."""
    id_field: str | None = None
    """Dotted path of the id; None = the first of the usual id keys, else the position."""


def fail(where: Where, message: str) -> InputError:
    return InputError(where[0], message, where[1])


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, (int, float)) else "a value")


def lookup(obj: object, path: str) -> object:
    """The value at a dotted path, or ``_MISSING``. A key that itself contains dots wins."""
    if isinstance(obj, dict) and path in obj:
        return obj[path]
    current = obj
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and re.fullmatch(r"-?\d+", part):
            index = int(part)
            if not -len(current) <= index < len(current):
                return _MISSING
            current = current[index]
        else:
            return _MISSING
    return current


_TURN_META = frozenset(
    ("role", "from", "name", "id", "type", "tool_calls", "tool_call_id", "function_call",
     "recipient", "channel", "weight", "timestamp", "created_at", "model", "status", "lang")
)  # fmt: skip
"""A chat turn's keys that never hold its text (OpenAI, ShareGPT and other exports)."""


def _unread_key(turn: dict[str, Any]) -> str | None:
    """The first key of a turn without a text key that holds a non-empty string and is no
    known metadata: its text, maybe (``{"role": "user", "message": ...}``)."""
    for key, value in turn.items():
        if key not in _TURN_META and isinstance(value, str) and value.strip():
            return key
    return None


def _turn_text(
    turn: dict[str, Any], spec: TextSpec, where: Where, unread: list[str] | None
) -> str | None:
    """The text of one chat turn (OpenAI ``role/content`` or ShareGPT ``from/value``), if kept."""
    role = turn.get("role", turn.get("from"))
    if spec.roles is not None:
        raw = str(role)
        if raw not in spec.roles and _SHAREGPT_ROLES.get(raw, raw) not in spec.roles:
            return None
    # NOTE: "text" too: some chat exports name a turn's content so ({"role", "text"}), and a
    # turn read as empty hid what it held from the scan.
    key = next((k for k in TURN_KEYS if k in turn), None)
    if key is None:
        if unread is not None and not unread and (other := _unread_key(turn)) is not None:
            unread.append(other)
        return None
    content = turn[key]
    return None if content is None else _value_text(content, "content", spec, where, unread)


def _item_text(
    item: object, name: str, spec: TextSpec, where: Where, unread: list[str] | None
) -> str | None:
    """One list element: a string, a chat turn, or a content part (non-text parts give None)."""
    if isinstance(item, str):
        return item
    if isinstance(item, (int, float)):
        return str(item)
    if item is None:
        return None
    if isinstance(item, dict):
        if "role" in item or "from" in item:
            return _turn_text(item, spec, where, unread)
        if str(item.get("type", "text")).endswith("text"):
            for key in PART_KEYS:
                if key in item:
                    return _value_text(item[key], name, spec, where, unread)
        if "type" in item:
            return None
    raise fail(
        where,
        f"field {name!r} holds {_kind(item)} that is not text, a chat turn or a "
        "content part; choose the text with --field",
    )


def _value_text(
    value: object, name: str, spec: TextSpec, where: Where, unread: list[str] | None = None
) -> str:
    """Text from a field value: a string, a number, a list of strings/parts, or a chat."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        parts = (_item_text(item, name, spec, where, unread) for item in value)
        return "\n".join(p for p in parts if p is not None)
    raise fail(where, f"field {name!r} is {_kind(value)}, not text; choose the text with --field")


def _joined(
    obj: dict[str, Any], keys: Sequence[str], spec: TextSpec, where: Where, unread: list[str] | None
) -> str:
    """The non-empty texts of ``keys`` (absent keys count as empty), joined by newlines."""
    texts = (_value_text(obj.get(key), key, spec, where, unread) for key in keys)
    return "\n".join(text for text in texts if text)


def _auto_text(obj: dict[str, Any], spec: TextSpec, where: Where, unread: list[str] | None) -> str:
    for key in ("text", "content"):
        if obj.get(key) is not None:
            return _value_text(obj[key], key, spec, where, unread)
    if obj.get("question") is not None:
        return _joined(obj, ("question", "answer"), spec, where, unread)
    if obj.get("prompt") is not None:
        return _joined(obj, ("prompt", "completion"), spec, where, unread)
    if obj.get("instruction") is not None:
        return _joined(obj, ("instruction", "input", "output"), spec, where, unread)
    for key in ("messages", "conversations"):
        if obj.get(key) is not None:
            return _value_text(obj[key], key, spec, where, unread)
    raise fail(where, f"no text field found (looked for {', '.join(TEXT_KEYS)}); use --field")


def _field_text(
    obj: object, field: str, spec: TextSpec, where: Where, unread: list[str] | None
) -> str:
    value = lookup(obj, field)
    if value is _MISSING:
        raise fail(where, f"field {field!r} not found in this record")
    return _value_text(value, field, spec, where, unread)


def extract_text(obj: object, spec: TextSpec, where: Where, unread: list[str] | None = None) -> str:
    """The text of one parsed record: ``spec.fields`` joined by newlines, or auto-detected.

    A bare JSON string is its own text, unless ``spec.fields`` names fields, which a string does
    not have: an error, never the string in their place. Auto-detection takes the first of
    ``text``, ``content``, ``question`` (+``answer``), ``prompt`` (+``completion``),
    ``instruction`` (+``input``, ``output``), ``messages`` and ``conversations``; chat turns are
    filtered by ``spec.roles``. `unread` receives the key of the first chat turn that has
    none of TURN_KEYS but a string under another key that is no known metadata (its text,
    maybe, which is not read: a warning's business).

    >>> extract_text({"question": "2+2?", "answer": 4}, TextSpec(), ("x.jsonl", 1))
    '2+2?\\n4'
    """
    if isinstance(obj, str) and not spec.fields:
        return obj
    if not isinstance(obj, dict):
        expected = "an object (for --field)" if spec.fields else "an object or a string"
        raise fail(where, f"record is {_kind(obj)}, expected {expected}")
    if spec.fields:
        return "\n".join(_field_text(obj, f, spec, where, unread) for f in spec.fields)
    return _auto_text(obj, spec, where, unread)


def _as_id(value: object) -> str | None:
    """A JSON value as an id: strings as they are, numbers as JSON writes them (1, 1.5);
    booleans, null, NaN and containers are never ids."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    return None


class _Written(str):
    """A JSON number as it is written in the record's text."""


def _within_64_bits(value: int) -> bool:
    """Whether orjson reads the integer exactly (a signed or an unsigned 64-bit one)."""
    return -(1 << 63) <= value < (1 << 64)


def _number_id(
    value: object, key: str, written: bytes | str | None, strict: bool, where: Where
) -> str:
    """The id of a number `value` (found under `key`) that may not read back as written: a
    double (orjson reads an integer beyond 64 bits as one), an integer beyond 64 bits (the
    standard library keeps it) or 0 (``-0`` reads as 0). With the record's JSON text
    (`written`), the id is the number as written, so that two numbers written differently are
    never one id; in an eval set (`strict`) one that does not read back as written is refused,
    as it would not be the same id where other tools read it. Without a text (records in
    memory, Parquet), the value is all there is."""
    text = (
        lookup(json.loads(written, parse_int=_Written, parse_float=_Written), key)
        if written is not None
        else None
    )
    if not isinstance(text, _Written):
        if strict and isinstance(value, int) and not _within_64_bits(value):
            raise fail(where, f"the id {value} is an integer beyond 64 bits; quote it as a string")
        found = _as_id(value)
        assert found is not None
        return found
    literal = str(text)
    if not any(c in literal for c in ".eE"):
        number = int(literal)
        if strict and not _within_64_bits(number):
            raise fail(
                where, f"the id {literal} is an integer beyond 64 bits; quote it as a string"
            )
        reads_as = str(number)
    else:
        reads_as = repr(float(literal))
    if strict and reads_as != literal:
        raise fail(where, f"the number id {literal} reads as {reads_as}; quote it as a string")
    return literal


def find_id(
    obj: object,
    spec: TextSpec,
    where: Where,
    required: bool,
    written: bytes | str | None = None,
) -> str | None:
    """The id of a record (see :func:`extract_id`); `required`: an eval set's record, whose
    `spec.id_field` must be found and whose number id must read back as written; `written`:
    the record's JSON text, read again for a number id only (see _number_id)."""
    if spec.id_field is not None:
        key = spec.id_field
        value = lookup(obj, key)
        if value is _MISSING:
            if not required:
                return None
            raise fail(where, f"id field {key!r} not found in this record")
        found = _as_id(value)
        if found is None:
            raise fail(
                where,
                f"id field {key!r} is {_kind(value)}, expected a string or a number",
            )
    elif isinstance(obj, dict):
        for key in ID_KEYS:
            value = obj.get(key)
            found = _as_id(value)
            if found is not None:
                break
        else:
            return None
    else:
        return None
    if type(value) is str or (type(value) is int and value and _within_64_bits(value)):
        return found
    return _number_id(value, key, written, required, where)


def extract_id(obj: object, spec: TextSpec, where: Where) -> str | None:
    """The id of one parsed record (``spec.id_field`` or the first usual id key), or None.

    Number ids become strings (as written, where the record's text is known); booleans,
    null and containers are never ids. A missing
    ``spec.id_field`` is an error; with auto-detection, None means "use the position".

    >>> extract_id({"idx": 7}, TextSpec(), ("x.jsonl", 1))
    '7'
    """
    return find_id(obj, spec, where, required=True)


_LONE = re.compile("[\ud800-\udfff]")


def without_surrogates(obj: Any) -> tuple[Any, bool]:
    r"""`obj` (parsed JSON) with every lone surrogate in its strings replaced by U+FFFD, and
    whether any was.

    >>> without_surrogates({"text": "a\ud800b"})
    ({'text': 'a�b'}, True)
    """
    if isinstance(obj, str):
        fixed = _LONE.sub("\ufffd", obj)
        return fixed, fixed != obj
    if isinstance(obj, list):
        pairs = [without_surrogates(v) for v in obj]
        return [v for v, _ in pairs], any(c for _, c in pairs)
    if isinstance(obj, dict):
        out, changed = {}, False
        for k, v in obj.items():
            (key, c1), (value, c2) = without_surrogates(k), without_surrogates(v)
            out[key] = value
            changed = changed or c1 or c2
        return out, changed
    return obj, False
