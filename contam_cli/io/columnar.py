"""Columnar formats (extra ``parquet``): Parquet files and Arrow IPC shards, streamed by batch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from contam_cli.errors import InputError, MissingExtraError
from contam_cli.io.model import Locator, Record

if TYPE_CHECKING:
    from contam_cli.io.source import FileSource

__all__ = ["arrow_records", "parquet_records"]


def parquet_records(src: FileSource) -> Iterator[Record]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError("pyarrow", "parquet", str(src.path)) from None
    try:
        batches = pq.ParquetFile(src.path).iter_batches(batch_size=4096)
        index = 0
        for batch in batches:
            for row in batch.to_pylist():
                where = (src.path, None)
                yield src.make(row, where, str(index), Locator(src.path, None, index, None))
                index += 1
    except (OSError, ValueError) as exc:  # NOTE: pyarrow's ArrowInvalid is a ValueError.
        raise InputError(src.path, f"cannot read parquet: {exc}") from None


def arrow_records(src: FileSource) -> Iterator[Record]:
    """Rows of an Arrow IPC file (stream or file format), as `Dataset.save_to_disk` writes them."""
    try:
        import pyarrow as pa
    except ImportError:
        raise MissingExtraError("pyarrow", "parquet", str(src.path)) from None
    try:
        with pa.memory_map(str(src.path)) as source:
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
            index = 0
            for batch in batches:
                for row in batch.to_pylist():
                    yield src.make(
                        row, (src.path, None), str(index), Locator(src.path, None, index, None)
                    )
                    index += 1
    except (OSError, ValueError) as exc:  # NOTE: pyarrow's ArrowInvalid is a ValueError.
        raise InputError(src.path, f"cannot read Arrow file: {exc}") from None
