"""Editing one corpus record: the edit value, and JSON records rewritten in place field by field."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from contam_cli.io.extract import (
    ID_KEYS,  # NOTE: the id keys the readers auto-detect; split pieces suffix the same key.
    PART_KEYS,
    TURN_KEYS,
    TextSpec,
    extract_text,
)
from contam_cli.io.model import Record

_PIECE_JOIN = "\n\n"
"""Between the kept pieces of one .txt document or one chat turn."""


@dataclass
class _Unit:
    """One corpus record with the raw bytes around it (line formats) or its element (JSON)."""

    rec: Record
    start: int
    """Offset where the bytes before the record (its gap) begin."""
    gap: bytes
    raw: bytes
    newline: bytes = b"\n"
    """How the record's line ends (line formats): its pieces, if it is cut, end so too."""


@dataclass
class _Edit:
    """What replaces one record: output units (lines, elements, a file), empty when dropped."""

    units: list[bytes]
    checks: list[str]
    """The texts a rescan will extract from `units` (each is one document)."""
    removed: int
    """UTF-8 bytes of text removed."""


def _removed(text: str, kept: list[str]) -> int:
    return len(text.encode("utf-8")) - sum(len(t.encode("utf-8")) for t in kept)


Key = str | int


@dataclass(frozen=True, slots=True)
class _Leaf:
    """One string the record's text is joined from, and where it lives in the object."""

    path: tuple[Key, ...] | None
    """Keys/indices from the record to the string; None for text that is not a string there
    (a number, an empty placeholder) and so cannot be edited."""
    text: str


def _edit_object(unit: _Unit, kept: list[tuple[int, int]], fmt: str, spec: TextSpec) -> _Edit:
    text = unit.rec.text
    obj = _parse(unit.raw, fmt)
    leaves = _leaves(obj, spec)
    if "\n".join(leaf.text for leaf in leaves) != text:
        raise ValueError("the record's text cannot be mapped back to its fields")
    where = (unit.rec.locator.path, unit.rec.locator.line)
    path = leaves[0].path
    if len(leaves) == 1 and path is not None and not any(isinstance(k, int) for k in path):
        pieces = [text[a:b] for a, b in kept]
        objs = [
            _with_piece(_parse(unit.raw, fmt), path, p, k, len(pieces), spec)
            for k, p in enumerate(pieces)
        ]
    else:
        objs = [_with_cut_turns(_parse(unit.raw, fmt), leaves, kept, text)]
    checks = [extract_text(o, spec, where) for o in objs]
    return _Edit([_dumps(o) for o in objs], checks, _removed(text, checks))


def _parse(raw: bytes, fmt: str) -> Any:
    # NOTE: the same decoders as the readers: orjson for JSONL lines, the stdlib for JSON arrays.
    return orjson.loads(raw) if fmt == "jsonl" else json.loads(raw.decode("utf-8"))


def _dumps(obj: Any) -> bytes:
    try:
        return orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):  # NOTE: integers beyond 64 bits, lone surrogates
        return json.dumps(obj, separators=(",", ":")).encode("ascii")


def _with_piece(
    obj: Any, path: tuple[Key, ...], piece: str, k: int, total: int, spec: TextSpec
) -> Any:
    """The record with its text replaced by one piece; its id suffixed ``#k`` when split."""
    obj = _set(obj, path, piece)
    if total > 1 and isinstance(obj, dict):
        id_path = _id_path(obj, spec)
        if id_path is not None:
            obj = _set(obj, id_path, f"{_get(obj, id_path)}#{k}")
    return obj


def _with_cut_turns(obj: Any, leaves: list[_Leaf], kept: list[tuple[int, int]], text: str) -> Any:
    """The record with each turn (field) keeping only its text inside the kept ranges."""
    offset = 0
    for leaf in leaves:
        lo, hi = offset, offset + len(leaf.text)
        offset = hi + 1
        parts = [(max(a, lo), min(b, hi)) for a, b in kept if max(a, lo) < min(b, hi)]
        new = _PIECE_JOIN.join(text[a:b] for a, b in parts)
        if new == leaf.text:
            continue
        if leaf.path is None:
            raise ValueError("a cut reaches text that is not a string field")
        obj = _set(obj, leaf.path, new)
    return obj


def _set(obj: Any, path: tuple[Key, ...], value: Any) -> Any:
    if not path:
        return value
    holder = obj
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return obj


def _get(obj: Any, path: tuple[Key, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def _id_path(obj: dict[str, Any], spec: TextSpec) -> tuple[Key, ...] | None:
    if spec.id_field is not None:
        found = _resolve(obj, spec.id_field)
        return found[1] if found is not None else None
    for key in ID_KEYS:
        value = obj.get(key)
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return (key,)
    return None


# NOTE: the functions below mirror records.extract_text step by step, recording where each
# string comes from; _edit_object checks that they join to exactly the text the reader produced.


def _leaves(obj: Any, spec: TextSpec) -> list[_Leaf]:
    if isinstance(obj, str):
        return [_Leaf((), obj)]
    if not isinstance(obj, dict):
        raise ValueError("not an object")
    if spec.fields:
        out = []
        for name in spec.fields:
            found = _resolve(obj, name)
            if found is None:
                raise ValueError(f"field {name!r} not found")
            out += _value_leaves(found[0], found[1], spec)
        return out
    for key in ("text", "content"):
        if obj.get(key) is not None:
            return _value_leaves(obj[key], (key,), spec)
    for first, keys in (
        ("question", ("question", "answer")),
        ("prompt", ("prompt", "completion")),
        ("instruction", ("instruction", "input", "output")),
    ):
        if obj.get(first) is not None:
            return _joined_leaves(obj, keys, spec)
    for key in ("messages", "conversations"):
        if obj.get(key) is not None:
            return _value_leaves(obj[key], (key,), spec)
    raise ValueError("no text field")


def _joined_leaves(obj: dict[str, Any], keys: Sequence[str], spec: TextSpec) -> list[_Leaf]:
    out = []
    for key in keys:
        group = _value_leaves(obj.get(key), (key,), spec)
        if "\n".join(leaf.text for leaf in group):
            out += group
    return out or [_Leaf(None, "")]


def _value_leaves(value: Any, path: tuple[Key, ...], spec: TextSpec) -> list[_Leaf]:
    if isinstance(value, str):
        return [_Leaf(path, value)]
    if value is None:
        return [_Leaf(None, "")]
    if isinstance(value, (int, float)):
        return [_Leaf(None, str(value))]
    if isinstance(value, list):
        out = []
        for i, item in enumerate(value):
            out += _item_leaves(item, (*path, i), spec) or []
        return out or [_Leaf(None, "")]
    raise ValueError("not text")


def _item_leaves(item: Any, path: tuple[Key, ...], spec: TextSpec) -> list[_Leaf] | None:
    if item is None:
        return None
    if not isinstance(item, dict):
        return _value_leaves(item, path, spec)
    if "role" in item or "from" in item:
        role = str(item.get("role", item.get("from")))
        if spec.roles is not None and role not in spec.roles:
            if _SHAREGPT_ROLES.get(role, role) not in spec.roles:
                return None
        # NOTE: the keys io.extract reads a turn's text from, in its order.
        key = next((k for k in TURN_KEYS if k in item), None)
        if key is None or item[key] is None:
            return None
        return _value_leaves(item[key], (*path, key), spec)
    if str(item.get("type", "text")).endswith("text"):
        for key in PART_KEYS:
            if key in item:
                return _value_leaves(item[key], (*path, key), spec)
    if "type" in item:
        return None
    raise ValueError("not a text part")


_SHAREGPT_ROLES = {"human": "user", "gpt": "assistant", "system": "system"}


def _resolve(obj: Any, name: str) -> tuple[Any, tuple[Key, ...]] | None:
    """The value at a dotted path and its path (as records._lookup: a dotted key itself wins)."""
    if isinstance(obj, dict) and name in obj:
        return obj[name], (name,)
    path: list[Key] = []
    current = obj
    for part in name.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
            path.append(part)
        elif isinstance(current, list) and part.lstrip("-").isdigit():
            index = int(part)
            if not -len(current) <= index < len(current):
                return None
            path.append(index + len(current) if index < 0 else index)
            current = current[index]
        else:
            return None
    return current, tuple(path)


def line_bytes(unit: _Unit, edit: _Edit | None) -> bytes | None:
    """What replaces a JSONL record: itself, its pieces one per line (ended as its own line
    is), or None (dropped)."""
    if edit is None:
        return unit.raw
    return unit.newline.join(edit.units) if edit.units else None


def unit_batches(units: Iterable[_Unit], chunk_bytes: int) -> Iterator[list[_Unit]]:
    batch: list[_Unit] = []
    size = 0
    for unit in units:
        batch.append(unit)
        size += len(unit.rec.text) + 1
        if size >= chunk_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
