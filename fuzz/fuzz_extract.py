"""Fuzz text and id extraction (`contam_cli.io.extract`) over arbitrary JSON values.

The input after its first two bytes is parsed with ``json.loads`` (inputs that are not JSON are
skipped; lone surrogates replaced by U+FFFD, as both readers do). The first byte picks a
TextSpec (auto-detection, a field path found in the value, several fields, roles, an id field),
the second one path into the value. What must hold:

- ``extract_text`` returns a str or raises InputError naming the record's file and line;
- ``extract_id`` returns a str or None, or raises InputError; with an id field that is there and
  holds a string or a finite number, it returns it (as JSON writes a number);
- a field path into the value gives exactly the value there: a string as it is, a number as
  ``str``, null as ``""``, a list of strings joined by newlines; several fields are joined by
  newlines; with roles, a chat keeps exactly the turns of those roles.

Run: ``python fuzz/fuzz_extract.py [libFuzzer flags] [corpus dirs]`` (see scripts/fuzz.sh).
"""

from __future__ import annotations

import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import ALLOWED, main  # noqa: E402

from contam_cli.io.extract import (  # noqa: E402
    TextSpec,
    extract_id,
    extract_text,
    without_surrogates,
)

WHERE = ("fuzz.jsonl", 7)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
ROLES = (("user",), ("assistant",), ("system",), ("user", "assistant"), ("human",), ("gpt",))


def paths_in(obj: object, prefix: str = "", depth: int = 0) -> list[tuple[str, object]]:
    """Every (dotted path, value) below `obj` whose keys hold no dot (lookup's own rule)."""
    out: list[tuple[str, object]] = []
    if depth > 6:
        return out
    items: list[tuple[str, object]] = []
    if isinstance(obj, dict):
        items = [(k, v) for k, v in obj.items() if "." not in k and k != ""]
    elif isinstance(obj, list):
        items = [(str(i), v) for i, v in enumerate(obj)]
    for key, value in items:
        path = f"{prefix}.{key}" if prefix else key
        out.append((path, value))
        out.extend(paths_in(value, path, depth + 1))
    return out


def _resolves_uniquely(obj: object, path: str) -> bool:
    """Whether no key on the way is itself a dotted prefix that lookup would take first."""
    return not (isinstance(obj, dict) and path in obj and "." in path)


def expected_text(value: object) -> str | None:
    """What a field holding `value` gives, for the plain cases (None: not a plain case)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return None


def _text(obj: object, spec: TextSpec) -> str | None:
    try:
        text = extract_text(obj, spec, WHERE)
    except ALLOWED as e:
        assert str(e).startswith("fuzz.jsonl:7: "), str(e)
        return None
    assert isinstance(text, str), type(text)
    return text


def _id(obj: object, spec: TextSpec) -> str | None:
    try:
        found = extract_id(obj, spec, WHERE)
    except ALLOWED as e:
        assert str(e).startswith("fuzz.jsonl:7: "), str(e)
        assert spec.id_field is not None or not isinstance(obj, dict), "auto id raised"
        return None
    assert found is None or isinstance(found, str), type(found)
    return found


def check_value(obj: object, pick: int, which: int) -> None:
    _text(obj, TextSpec())
    _id(obj, TextSpec())
    paths = paths_in(obj)
    spec_kind = pick % 5
    if isinstance(obj, dict) and paths:
        path, value = paths[which % len(paths)]
        plain = _resolves_uniquely(obj, path)
        if spec_kind == 0:
            got = _text(obj, TextSpec(fields=(path,)))
            want = expected_text(value)
            if want is not None and plain:
                assert got == want, (path, got, want)
        elif spec_kind == 1:
            second, value2 = paths[(which // 7) % len(paths)]
            got = _text(obj, TextSpec(fields=(path, second)))
            want1, want2 = expected_text(value), expected_text(value2)
            if want1 is not None and want2 is not None and plain:
                if _resolves_uniquely(obj, second):
                    assert got == f"{want1}\n{want2}", (path, second, got)
        elif spec_kind == 2:
            found = _id(obj, TextSpec(id_field=path))
            if not plain:
                pass
            elif isinstance(value, str):
                assert found == value, (path, found)
            elif isinstance(value, int) and not isinstance(value, bool):
                assert found == str(value), (path, found)
            elif isinstance(value, float) and math.isfinite(value):
                assert found == repr(value), (path, found)
        elif spec_kind == 3:
            roles = ROLES[which % len(ROLES)]
            got = _text(obj, TextSpec(roles=roles))
            check_roles(obj, roles, got)
        else:
            _text(obj, TextSpec(fields=(path,), roles=ROLES[which % len(ROLES)]))
    _text(obj, TextSpec(fields=("missing.path",)))
    _id(obj, TextSpec(id_field="missing"))


def check_roles(obj: object, roles: tuple[str, ...], got: str | None) -> None:
    """A plain chat (string contents) keeps exactly the turns of `roles`, joined by newlines."""
    if not isinstance(obj, dict) or got is None:
        return
    key = next((k for k in ("text", "content", "question", "prompt", "instruction") if
                obj.get(k) is not None), None)  # fmt: skip
    if key is not None:
        return
    chat = obj.get("messages") if obj.get("messages") is not None else obj.get("conversations")
    if not isinstance(chat, list) or not all(isinstance(t, dict) for t in chat):
        return
    share = {"human": "user", "gpt": "assistant", "system": "system"}
    kept = []
    for t in chat:
        if "role" not in t and "from" not in t:
            return  # not a plain chat: parts and other shapes are checked elsewhere
        role = str(t.get("role", t.get("from")))
        content = t["content"] if "content" in t else t.get("value")
        if content is not None and not isinstance(content, str):
            return
        if (role in roles or share.get(role, role) in roles) and content is not None:
            kept.append(content)
    assert got == "\n".join(kept), (roles, got, kept)


def check(data: bytes) -> None:
    if len(data) < 3:
        return
    try:
        text = data[2:].decode("utf-8")
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return
    if _SURROGATE_ESCAPE.search(text):  # NOTE: as the readers do, only when there may be one
        obj, _ = without_surrogates(obj)
    check_value(obj, data[0], data[1])


if __name__ == "__main__":
    main(check)
