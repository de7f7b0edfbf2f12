"""The resumable record of a probe run: every scored example, appended beside the output.

``OUTPUT.partial.jsonl`` starts with a header line (the run's config and a digest of its eval
and control examples), then holds one JSON line per scored example, written, flushed and
fsynced a batch at a time. A run with the same output, config and examples skips what it holds;
one made by another model, config or set of examples is refused (or started over). Only whole
lines count: a line cut short by a kill is dropped and scored again. The probe removes the file
once the report is written.

An OpenAI-compatible endpoint's first answer of a run adds a line ``{"served": {...}}``: the model
and ``system_fingerprint`` it named, which a resumed run's answers must name too.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from contam_cli.errors import InputError, UsageError
from contam_cli.features.probe.methods import Entry
from contam_cli.io.model import Record, StrPath

__all__ = ["FORMAT", "Identity", "Sidecar", "records_digest", "sidecar_path"]

FORMAT, VERSION = "contam-probe-partial", 1
_RESTART = "start over with --restart (resume=False) or remove it"


def sidecar_path(output: StrPath) -> Path:
    """Where the run writing ``output`` keeps its progress: ``OUTPUT.partial.jsonl``."""
    return Path(f"{os.fspath(output)}.partial.jsonl")


def records_digest(records: Iterable[Record]) -> str:
    """sha256 of the records' ids and texts, in order (what the model is shown).

    >>> records_digest([]) == hashlib.sha256().hexdigest()
    True
    """
    h = hashlib.sha256()
    for r in records:
        for part in (r.id, r.text):
            data = part.encode("utf-8", "surrogatepass")
            h.update(len(data).to_bytes(8, "little") + data)
    return h.hexdigest()


@dataclass(frozen=True)
class Identity:
    """What makes two runs the same run: the report's config and digests of the examples."""

    config: Mapping[str, Any]
    inputs: Mapping[str, str]
    """Per set (``eval``, ``controls``): :func:`records_digest` of its records."""

    def header(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "config": dict(self.config),
            "inputs": dict(self.inputs),
        }


class Sidecar:
    """An open sidecar file; see the module docstring."""

    def __init__(self, path: Path, identity: Identity, sets: Mapping[str, Sequence[Record]]):
        self.path, self.identity, self.sets = path, identity, sets
        self._fh: IO[bytes] | None = None
        self.served: dict[str, str] | None = None
        """Who answered the scored examples (an ``openai:`` endpoint's model and fingerprint)."""

    def open(self, resume: bool) -> dict[tuple[str, int], Entry]:
        """Start the file (or continue it when ``resume``); the entries it already holds."""
        found = self._read() if resume and self.path.exists() else None
        if found is not None:
            done, good_end = found
            self._fh = open(self.path, "r+b")
            self._fh.truncate(good_end)  # NOTE: drops a line a kill cut short
            self._fh.seek(good_end)
            return done
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "wb")
        self._write([self.identity.header()])
        return {}

    def append(self, name: str, indices: Sequence[int], entries: Sequence[Entry]) -> None:
        """Record a scored batch of set ``name`` durably (flushed and fsynced)."""
        records = self.sets[name]
        self._write(
            {"set": name, "i": i, "id": records[i].id, **entry}
            for i, entry in zip(indices, entries)
        )

    def record_served(self, served: dict[str, str]) -> None:
        """Record who answered (once; a resumed run's answers are held to it)."""
        if self.served is None:
            self.served = dict(served)
            self._write([{"served": self.served}])

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def remove(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)

    def _write(self, items: Iterable[dict[str, Any]]) -> None:
        assert self._fh is not None
        self._fh.write(b"".join(orjson.dumps(item) + b"\n" for item in items))
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def _read(self) -> tuple[dict[tuple[str, int], Entry], int] | None:
        """The entries held and where the whole lines end; None when not even the header was
        written whole (a run killed at once: nothing to keep)."""
        data = self.path.read_bytes()
        good_end = data.rfind(b"\n") + 1
        lines = data[:good_end].splitlines()
        if not lines:
            return None
        try:
            header = orjson.loads(lines[0])
        except orjson.JSONDecodeError:
            header = None
        self._check_header(header)
        done: dict[tuple[str, int], Entry] = {}
        for number, line in enumerate(lines[1:], start=2):
            item = _parse(self.path, line, number)
            if _is_served(item) and self.served is None:
                self.served = dict(item["served"])
                continue
            key = self._key(item)
            if key is None:
                raise InputError(self.path, f"a damaged probe sidecar line: {_RESTART}", number)
            done[key] = {"scores": item["scores"], "probe": item.get("probe")}
        return done, good_end

    def _key(self, item: Any) -> tuple[str, int] | None:
        """(set, index) of a well-formed line about one of this run's records, else None."""
        if not isinstance(item, dict) or not isinstance(item.get("scores"), dict):
            return None
        name, i = item.get("set"), item.get("i")
        records = self.sets.get(name) if isinstance(name, str) else None
        if records is None or not isinstance(i, int) or not 0 <= i < len(records):
            return None
        return (str(name), i) if records[i].id == item.get("id") else None

    def _check_header(self, header: Any) -> None:
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise InputError(self.path, f"not a contam probe sidecar: {_RESTART}")
        if header.get("version") != VERSION:
            raise InputError(self.path, f"a probe sidecar of another version: {_RESTART}")
        mine, theirs = self.identity.header(), header
        if theirs.get("config", {}).get("model") != mine["config"].get("model"):
            what = "another model"
        elif theirs.get("config") != mine["config"]:
            keys = sorted(set(mine["config"]) | set(theirs.get("config") or {}))
            diff = [k for k in keys if mine["config"].get(k) != theirs["config"].get(k)]
            what = f"another configuration ({', '.join(diff)})"
        elif theirs.get("inputs") != mine["inputs"]:
            what = "other eval or control examples"
        else:
            return
        raise UsageError(f"{self.path}: partial results made with {what}: {_RESTART}")


def _is_served(item: Any) -> bool:
    """Whether a sidecar line is the ``{"served": {...}}`` line."""
    served = item.get("served") if isinstance(item, dict) and len(item) == 1 else None
    return isinstance(served, dict) and all(isinstance(v, str) for v in served.values())


def _parse(path: Path, line: bytes, number: int) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        raise InputError(path, f"a damaged probe sidecar line: {_RESTART}", number) from None
