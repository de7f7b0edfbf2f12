"""Columnar formats (extra ``parquet``): Parquet files and Arrow IPC shards, streamed by batch."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING, Any

from contam_cli.errors import InputError, MissingExtraError
from contam_cli.io.formats import open_raw
from contam_cli.io.model import Locator, Record

if TYPE_CHECKING:
    from contam_cli.io.source import FileSource

__all__ = ["arrow_records", "arrow_rows", "parquet_records", "parquet_rows"]


def parquet_records(src: FileSource) -> Iterator[Record]:
    for index, row in enumerate(parquet_rows(src)):
        yield src.make(row, (src.path, None), str(index), Locator(src.path, None, index, None))


def parquet_rows(src: FileSource) -> Iterator[Any]:
    """The rows of a Parquet file as parsed records (dicts), batch by batch."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError("pyarrow", "parquet", str(src.path)) from None
    try:
        with _opened(src) as source:
            for batch in pq.ParquetFile(source).iter_batches(batch_size=4096):
                yield from batch.to_pylist()
    except (OSError, ValueError) as exc:  # NOTE: pyarrow's ArrowInvalid is a ValueError.
        raise InputError(src.path, f"cannot read parquet: {exc}") from None


@contextmanager
def _opened(src: FileSource) -> Iterator[Any]:
    """The file pyarrow reads: a path on disk as it is (pyarrow opens it, memory-mapped for
    Arrow), a remote object as a seekable file (ranged reads, checked against its listing)."""
    if src.remote is None:
        yield src.path
        return
    with open_raw(src.remote) as fh:
        yield fh


def arrow_records(src: FileSource) -> Iterator[Record]:
    """Rows of an Arrow IPC file (stream or file format), as `Dataset.save_to_disk` writes them."""
    for index, row in enumerate(arrow_rows(src)):
        yield src.make(row, (src.path, None), str(index), Locator(src.path, None, index, None))


def arrow_rows(src: FileSource) -> Iterator[Any]:
    """The rows of an Arrow IPC file as parsed records (dicts), batch by batch."""
    try:
        import pyarrow as pa
    except ImportError:
        raise MissingExtraError("pyarrow", "parquet", str(src.path)) from None
    try:
        with _opened(src) as given, closing(_arrow_source(pa, given)) as source:
            try:
                reader = pa.ipc.open_stream(source)
            except pa.ArrowInvalid:
                source.seek(0)
                reader = pa.ipc.open_file(source)
                batches: Iterator[Any] = (
                    reader.get_batch(i) for i in range(reader.num_record_batches)
                )
            else:
                batches = iter(reader)
            for batch in batches:
                yield from batch.to_pylist()
    except (OSError, ValueError) as exc:  # NOTE: pyarrow's ArrowInvalid is a ValueError.
        raise InputError(src.path, f"cannot read Arrow file: {exc}") from None


def _arrow_source(pa: Any, given: Any) -> Any:
    """A path memory-mapped, a file object wrapped, for pyarrow's IPC readers."""
    return pa.memory_map(given) if isinstance(given, str) else pa.PythonFile(given, mode="r")
