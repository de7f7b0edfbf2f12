"""What every format reader knows about the file it reads, and how it makes a Record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from contam_cli.io.extract import TextSpec, Where, extract_text, find_id
from contam_cli.io.model import Locator, ReadNotes, Record
from contam_cli.io.remote import RemoteFile

__all__ = ["FileSource", "Role", "ranged_id"]

Role = Literal["eval", "corpus"]


@dataclass(frozen=True, slots=True)
class FileSource:
    """What every format reader needs to know about the file it reads."""

    path: str
    role: Role
    spec: TextSpec
    name: str
    """File name relative to the directory given (or the basename of a file given): the id of a
    one-document TXT file and the prefix of qualified ids."""
    qualify_ids: bool = False
    """Prefix positional ids with ``name:`` (read_eval over several files)."""
    notes: ReadNotes | None = None
    """Where to note what was replaced while reading (None: not noted)."""
    remote: RemoteFile | None = None
    """The remote object `path` (its URL) names, checked against its listing when opened."""

    @property
    def target(self) -> str | RemoteFile:
        """What to open: the remote object, else the path."""
        return self.path if self.remote is None else self.remote

    def make(
        self,
        obj: object,
        where: Where,
        position: str,
        locator: Locator,
        written: bytes | str | None = None,
    ) -> Record:
        """The record parsed to `obj` (from the JSON text `written`, where there is one: a
        number id is read from it as written)."""
        unread: list[str] | None = None if self.notes is None else []
        text = extract_text(obj, self.spec, where, unread)
        if unread and self.notes is not None:
            self.notes.unread_turn(locator, unread[0])
        found = find_id(obj, self.spec, where, self.role == "eval", written)
        if found is None:
            found = f"{self.name}:{position}" if self.qualify_ids else position
        elif position[:1] == "@":
            found = ranged_id(found, position)
        return Record(found, text, locator)


def ranged_id(found: str, position: str) -> str:
    """A record's own id `found` as a byte-range read gives it (`position`: ``"@<offset>"``,
    the id it gives a record without one there): an id of the form ``"@...@<offset>"`` gets one
    more ``"@"``, so that no record's own id is that generated one (whole_read_id takes it off).

    >>> ranged_id("@120", "@120"), ranged_id("@@120", "@120"), ranged_id("@7", "@120")
    ('@@120', '@@@120', '@7')
    """
    if found[:1] == "@" and found.lstrip("@") == position[1:]:
        return "@" + found
    return found
