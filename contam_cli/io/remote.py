"""Remote corpora through fsspec (extra ``remote``): URLs, listing, and checked reads.

A corpus may be given as a URL (``s3://bucket/prefix/``, ``gs://...``, ``hf://datasets/...``:
any protocol fsspec has a backend for). A prefix is listed once, in the process that plans the
scan, and every object becomes a :class:`RemoteFile`: its URL with the size and ETag (or
checksum) the listing gave. Workers open the objects themselves, and an object whose size or
ETag differs from the listing when it is opened (or, on S3, when any byte range of it is
fetched: s3fs sends the ETag as ``If-Match``) is an :class:`~contam_cli.errors.InputError`:
a scan never mixes two versions of an object. Credentials come from the backend's own
configuration (for S3 the environment and ``~/.aws``, the endpoint from ``AWS_ENDPOINT_URL`` or
``AWS_ENDPOINT_URL_S3``); a URL carrying a password is refused, as it would be written to the
report, and so is one whose query carries a signature or token (a presigned URL). Whatever a
backend says in an error passes through :func:`mask` first: a URL's password or signature, or
the value of ``AWS_SECRET_ACCESS_KEY`` or ``AWS_SESSION_TOKEN``, never reaches a message.
"""

from __future__ import annotations

import errno
import io
import os
import re
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from contam_cli.errors import ArgumentError, ContamError, InputError, MissingExtraError

__all__ = [
    "READ_BLOCK",
    "RemoteFile",
    "Url",
    "is_url",
    "list_objects",
    "mask",
    "open_object",
    "url_parts",
]

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")
READ_BLOCK = 8 << 20
"""Bytes fetched per request beyond what a read asks for (fsspec's read-ahead cache): a 64 MiB
range is a handful of requests, and a range reads at most this much past its end."""
#: A URL's user and password (``scheme://user:pw@host``), and query parameters that are
#: credentials: S3 and GCS presigned URLs, CloudFront signed URLs, Azure SAS, bearer tokens (a
#: value ends where a URL-encoded one cannot go on: at ``&``, a quote, space, ``:`` or ``)``).
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@\"'`]*@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&](?:x-amz-(?:signature|credential|security-token)|x-goog-(?:signature|credential)"
    r"|signature|sig|token|access_token|key-pair-id|policy)=)[^&#\s\"'`:;,)\]]*"
)
_SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")
_VERSION_KEYS = ("ETag", "etag", "md5Hash", "crc32c", "blob_id", "checksum")
#: What a listing says of when an object was written (S3, Azure, GCS, local files: mtime and
#: st_ctime as ``created``, SFTP, FTP): kept beside the ETag, for backends that list none.
_STAMP_KEYS = ("LastModified", "last_modified", "updated", "mtime", "modify", "created")


def is_url(value: object) -> bool:
    """Whether `value` is a URL string (a scheme of two or more letters, then ``://``).

    >>> is_url("s3://bucket/prefix/"), is_url("data/corpus"), is_url("C://x")
    (True, False, False)
    """
    return isinstance(value, str) and _URL.match(value) is not None


def resolved(location: str | os.PathLike[str]) -> str:
    """A corpus location as paths are compared: a URL as it is, a path absolute with its links
    followed (so that the same files spelled another way are the same)."""
    if is_url(location):
        return str(location)
    return str(Path(os.fspath(location)).resolve())


def mask(text: str) -> str:
    """`text` with every URL's user and password, every credential in a query string, and the
    values of the secret AWS variables of this environment replaced by ``***``.

    >>> mask('Could not connect to "http://u:pw@h:9/b?X-Amz-Signature=ab12&list-type=2"')
    'Could not connect to "http://***@h:9/b?X-Amz-Signature=***&list-type=2"'
    """
    text = _SECRET_QUERY.sub(r"\1***", _USERINFO.sub(r"\1***@", text))
    for name in _SECRET_ENV:
        value = os.environ.get(name, "")
        if len(value) >= 4:
            text = text.replace(value, "***")
    return text


class Url(str):
    """A remote location as given (``s3://bucket/prefix/``): a str, so it prints and compares as
    the URL, that tells the input rule it is a location, where a str in a list is a text."""

    __slots__ = ()

    def __new__(cls, value: str) -> Url:
        if not is_url(value):
            raise ArgumentError(f"not a URL: {value!r} (expected SCHEME://...)")
        return super().__new__(cls, value)


@dataclass(frozen=True)
class RemoteFile:
    """One listed remote object: what the rest of io needs of a file (name, suffix, size, str).

    It has no ``__fspath__`` on purpose: code that would open it as a local file fails loudly.
    """

    url: str
    size: int
    etag: str | None
    """The ETag the store listed (quotes removed), else another checksum or version id it gives
    (GCS ``md5Hash``, a Hugging Face blob id); None when it gives none."""
    rel: str = ""
    """Its path below the prefix that was listed ("" for an object given by its own URL)."""
    stamp: str = ""
    """When the listing says it was written (:data:`_STAMP_KEYS`), "" when it says nothing."""

    def __str__(self) -> str:
        return self.url

    @property
    def name(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.name).suffix

    @property
    def version(self) -> str:
        """Size, ETag and write times: what says that the object is still the one listed (a
        backend that lists no ETag, such as ``file://`` or ``sftp://``, has its times)."""
        return f"{self.size}:{self.etag}:{self.stamp}"

    def stat(self) -> os.stat_result:
        """A read-only regular file of the listed size (modification time unknown: 0)."""
        return os.stat_result((stat.S_IFREG | 0o444, 0, 0, 1, 0, 0, self.size, 0, 0, 0))

    def describe(self) -> dict[str, Any]:
        """Its record in a report: no sha256 (that would read the object once more)."""
        return {"path": self.url, "bytes": self.size, "sha256": None, "etag": self.etag}


def url_parts(value: object, what: str) -> list[Url | str | os.PathLike[str]] | None:
    """The URLs and paths of an input that holds a URL, in order; None when it holds none (then
    the input rule applies as it is). A URL is a str alone, or a :class:`Url` in a list."""
    if isinstance(value, str):
        return [Url(value)] if is_url(value) else None
    if not isinstance(value, Sequence) or isinstance(value, (bytes, bytearray)):
        return None
    if not any(isinstance(v, Url) for v in value):
        if value and all(is_url(v) for v in value):
            raise ArgumentError(
                f"{what}: a list of str is texts in memory, and these are URLs; give URLs in a "
                "list as contam_cli.io.remote.Url(...) (or one URL as a str)"
            )
        return None
    parts: list[Url | str | os.PathLike[str]] = []
    for v in value:
        if not isinstance(v, (Url, os.PathLike)):
            raise ArgumentError(
                f"{what}: a list mixes URLs and texts; give Url(...) and pathlib.Path objects"
            )
        parts.append(v)
    return parts


#: How long S3 may keep a scan waiting: 5 s to connect, 15 s for an answer to go on (s3fs's
#: own values), each request made at most 2 times by botocore (unless ``AWS_MAX_ATTEMPTS`` or
#: ``AWS_RETRY_MODE`` say otherwise) inside at most 2 tries by s3fs (it retries timeouts, not
#: refused connections). A closed port fails in about a second, a host that drops packets in
#: about 10 s, one that accepts and never answers in about a minute (4 x 15 s): defaults of 5 x 5
#: attempts waited over 6 minutes for that last one, per request.
S3_WAITS = {"connect_timeout": 5, "read_timeout": 15, "attempts": 2, "tries": 2}


def _options(scheme: str) -> dict[str, Any]:
    """The backend's storage options: for S3, the waits of :data:`S3_WAITS`."""
    if scheme not in ("s3", "s3a"):
        return {}
    config: dict[str, Any] = {k: S3_WAITS[k] for k in ("connect_timeout", "read_timeout")}
    if not (os.environ.get("AWS_MAX_ATTEMPTS") or os.environ.get("AWS_RETRY_MODE")):
        config["retries"] = {"total_max_attempts": S3_WAITS["attempts"], "mode": "standard"}
    return {"config_kwargs": config}


def _filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of `url` and the path in it; a missing backend is an error naming
    the URL and what to install."""
    parts = urlsplit(url)
    if parts.password is not None or _SECRET_QUERY.search("?" + parts.query):
        what = "a password" if parts.password is not None else "a signature or token"
        raise ArgumentError(
            f"{mask(url)}: a URL with {what} is refused (it would be written to the "
            "report); give credentials through the environment"
        )
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise MissingExtraError("fsspec", "remote", url) from None
    try:
        fs, path = url_to_fs(url, **_options(parts.scheme))
    except ImportError as e:
        if parts.scheme in ("s3", "s3a"):
            raise MissingExtraError("s3fs", "remote", url) from None
        raise InputError(url, f"no fsspec backend installed for {parts.scheme}:// ({e})") from None
    except ValueError as e:
        raise InputError(url, f"cannot open this URL: {e}") from None
    if parts.scheme in ("s3", "s3a"):
        fs.retries = S3_WAITS["tries"]  # NOTE: s3fs's own loop, around botocore's attempts
    return fs, path


@contextmanager
def _errors(url: str, doing: str) -> Iterator[None]:
    """What the store says, as an InputError naming `url`."""
    try:
        yield
    except ContamError:
        raise
    except FileNotFoundError as e:
        why = f"cannot {doing}: no such bucket, object or prefix ({e})"
        raise InputError(url, mask(why)) from None
    except Exception as e:  # NOTE: backends raise their own kinds (botocore's, aiohttp's, ...)
        raise InputError(url, mask(f"cannot {doing}: {type(e).__name__}: {e}")) from None


def _version(info: dict[str, Any]) -> str | None:
    for key in _VERSION_KEYS:
        value = info.get(key)
        if value:
            return str(value).strip('"')
    return None


def list_objects(url: str) -> tuple[bool, list[RemoteFile]]:
    """``(single, objects)``: the object named by `url` (single), or every object below it with
    its path below it, unfiltered and in listing order. Nothing there is an InputError."""
    fs, root = _filesystem(url)
    with _errors(url, "list"):
        fs.invalidate_cache()  # NOTE: a listing is always fresh, never a cached one
        if not url.endswith("/"):
            info = fs.info(root)
            if info.get("type") == "file":
                _check_s3(fs, url, info)
                return True, [_remote_file(fs, root, info, "")]
        found = fs.find(root, detail=True)
    base = root.rstrip("/") + "/"
    for info in found.values():
        _check_s3(fs, url, info)
    objects = [
        _remote_file(fs, name, info, name[len(base) :])
        for name, info in found.items()
        if info.get("type", "file") == "file" and name.startswith(base)
    ]
    if not objects:
        raise InputError(url, "nothing is stored below this prefix (no object listed)")
    return False, objects


def _check_s3(fs: Any, url: str, info: dict[str, Any]) -> None:
    """S3 lists every object with its ETag: a listing without one is no S3's (an endpoint that
    answers any request with a page, whose body would be scanned as the corpus)."""
    if "s3" in _protocols(fs) and info.get("type", "file") == "file" and not _version(info):
        raise InputError(
            url,
            "the endpoint's answer is not S3's (an object without an ETag): check "
            "AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL",
        )


def _protocols(fs: Any) -> tuple[str, ...]:
    protocol = getattr(fs, "protocol", ())
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


def _remote_file(fs: Any, name: str, info: dict[str, Any], rel: str) -> RemoteFile:
    stamp = ";".join(f"{k}={info[k]}" for k in _STAMP_KEYS if info.get(k) is not None)
    size = int(info.get("size") or 0)
    return RemoteFile(fs.unstrip_protocol(name), size, _version(info), rel, stamp)


def open_object(file: RemoteFile | str) -> io.RawIOBase:
    """The raw bytes of a remote object, seekable; a RemoteFile is checked against its listing
    (size, ETag), and a missing or unreadable object is an InputError naming it."""
    url = str(file)
    fs, path = _filesystem(url)
    with _errors(url, "read object"):
        fs.invalidate_cache(path)  # NOTE: what the store says now, not a listing cached here
        fh = fs.open(path, "rb", block_size=READ_BLOCK, cache_type="readahead")
    if isinstance(file, RemoteFile):
        try:
            _check_same(file, int(fh.size), _version(getattr(fh, "details", None) or {}))
        except BaseException:
            fh.close()
            raise
    return _Checked(fh, url)


def _check_same(file: RemoteFile, size: int, etag: str | None) -> None:
    changed = []
    if size != file.size:
        changed.append(f"{file.size} bytes when listed, {size} now")
    if etag is not None and file.etag is not None and etag != file.etag:
        changed.append(f"ETag {file.etag} when listed, {etag} now")
    if changed:
        raise InputError(file.url, f"changed since it was listed ({'; '.join(changed)})")


def _expired(e: OSError) -> bool:
    """s3fs's FileExpired: the object changed after it was opened (If-Match failed)."""
    return type(e).__name__ == "FileExpired" or e.errno == errno.EBUSY


class _Checked(io.RawIOBase):
    """An fsspec file whose reads fail as InputErrors naming the object when it is gone, not
    readable (an archived storage class, no permission) or changed; other OSErrors (a flaky
    network) stay OSErrors, which the Ray engine retries, and so become the backend's own
    errors (a lost endpoint: botocore's EndpointConnectionError), masked."""

    def __init__(self, fh: Any, url: str) -> None:
        self._fh, self._url = fh, url

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self._fh.seek(offset, whence))

    def tell(self) -> int:
        return int(self._fh.tell())

    def read(self, size: int | None = -1) -> bytes:
        try:
            data = self._fh.read(-1 if size is None else size)
        except (FileNotFoundError, PermissionError) as e:
            raise InputError(self._url, mask(f"cannot read object: {e}")) from None
        except OSError as e:
            if _expired(e):
                raise InputError(
                    self._url, "changed while it was read (its ETag no longer matches)"
                ) from None
            raise
        except ContamError:
            raise
        except Exception as e:  # NOTE: botocore's and aiohttp's own kinds, from a lost endpoint
            # NOTE: as an OSError, what a flaky network raises: Ray retries it; the readers
            # name the object.
            raise OSError(mask(f"cannot read object: {type(e).__name__}: {e}")) from None
        return data if isinstance(data, bytes) else bytes(data)

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._fh.close()
        super().close()
