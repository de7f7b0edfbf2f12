"""Each way a remote corpus fails, as a user meets it on the command line, against the suite's
moto server (and closed or foreign local ports, never the network): one line on stderr, exit 2,
naming the URL, no traceback, no credential (a URL's password or signature, the secret AWS
variables' values), no long wait."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("s3fs", reason="needs the extra: pip install 'contam-cli[remote]'")
pytest.importorskip("moto.server", reason="the S3 tests need moto's server")

import s3fs  # noqa: E402
from test_remote_s3 import CD, SECRET, run, s3  # noqa: E402, F401  # NOTE: s3, the server

from contam_cli.errors import ArgumentError  # noqa: E402
from contam_cli.io.discover import list_files  # noqa: E402
from contam_cli.io.remote import mask  # noqa: E402

EVAL = str(CD / "examples/benchmark.jsonl")
TOKEN = "contam-test-session-token-9e2a"


@pytest.fixture
def endpoint(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Point S3 at another endpoint for one test (s3fs's cached clients forgotten before and
    after), with a session token set as well, inside the server fixture's environment."""
    request.getfixturevalue("s3")
    monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)

    def point(url: str) -> None:
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", url)
        s3fs.S3FileSystem.clear_instance_cache()

    s3fs.S3FileSystem.clear_instance_cache()
    yield point
    s3fs.S3FileSystem.clear_instance_cache()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fails(out: Any, url: str) -> str:
    """The one line a failed command wrote, checked: exit 2, the URL, no secret, no traceback."""
    text = out.output
    assert out.exit_code == 2, text
    assert text.startswith("contam: error: ") and text.count("\n") == 1, text
    assert url in text and "Traceback" not in text
    for secret in (SECRET, TOKEN, "pw-contam", "SIG-contam", "CRED-contam"):
        assert secret not in text, text
    return text


def test_mask_hides_passwords_signatures_and_secret_variables(endpoint: Any) -> None:
    said = (
        f'Could not connect to "http://me:pw-contam@h:9/b?list-type=2&X-Amz-Signature=SIG-contam'
        f'&X-Amz-Credential=CRED-contam%2F": {SECRET} {TOKEN}'
    )
    assert mask(said) == (
        'Could not connect to "http://***@h:9/b?list-type=2&X-Amz-Signature=***'
        '&X-Amz-Credential=***": *** ***'
    )
    assert mask("s3://bucket/key@2: cannot list") == "s3://bucket/key@2: cannot list"


def test_an_endpoint_url_with_credentials_never_reaches_stderr(
    endpoint: Any, tmp_path: Path
) -> None:
    url = "s3://contam-remote-test/cd/corpus/"
    endpoint(
        f"http://me:{SECRET}@127.0.0.1:{closed_port()}/?X-Amz-Signature=SIG-contam"
        "&X-Amz-Credential=CRED-contam"
    )
    report = tmp_path / "r.json"
    line = fails(run("scan", EVAL, "--corpus", url, "--report", str(report)), url)
    assert "***" in line and not report.exists()


def test_a_presigned_url_is_refused_masked(endpoint: Any) -> None:
    url = f"http://127.0.0.1:{closed_port()}/b/a.jsonl"
    signed = f"{url}?X-Amz-Credential=CRED-contam&X-Amz-Signature=SIG-contam"
    with pytest.raises(ArgumentError, match="a URL with a signature or token is refused"):
        list_files(signed)
    line = fails(run("scan", EVAL, "--corpus", signed), url)
    assert "X-Amz-Signature=***: a URL" in line


def test_an_unreachable_endpoint_fails_within_a_stated_bound(endpoint: Any) -> None:
    url = "s3://contam-remote-test/cd/corpus/"
    endpoint(f"http://127.0.0.1:{closed_port()}")
    start = time.monotonic()
    assert "Could not connect" in fails(run("scan", EVAL, "--corpus", url), url)
    assert time.monotonic() - start < 5  # NOTE: botocore's and s3fs's defaults waited 9 s


def test_an_endpoint_that_never_answers_fails_after_the_stated_tries(
    endpoint: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contam_cli.io import remote

    monkeypatch.delenv("AWS_MAX_ATTEMPTS", raising=False)
    monkeypatch.delenv("AWS_RETRY_MODE", raising=False)
    fs, _ = remote._filesystem("s3://b/x/")
    assert fs.retries == 2 and fs.config_kwargs == {
        "connect_timeout": 5, "read_timeout": 15,
        "retries": {"total_max_attempts": 2, "mode": "standard"},
    }  # fmt: skip
    monkeypatch.setitem(remote.S3_WAITS, "read_timeout", 0.25)
    url = "s3://contam-remote-test/cd/corpus/"
    with socket.socket() as silent:  # NOTE: the kernel accepts; nobody ever answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        endpoint(f"http://127.0.0.1:{silent.getsockname()[1]}")
        start = time.monotonic()
        assert "Read timeout" in fails(run("scan", EVAL, "--corpus", url), url)
        took = time.monotonic() - start
    assert 4 * 0.25 <= took < 4  # 2 tries of 2 attempts, each waiting read_timeout


@pytest.fixture
def web_page() -> Iterator[str]:
    """A local HTTP server that answers every request with the same HTML page (200)."""
    import http.server
    import threading

    class Page(http.server.BaseHTTPRequestHandler):
        def _page(self) -> None:
            body = b"<html><body>the quick brown fox jumps over the lazy dog</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_HEAD = do_POST = do_PUT = _page

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("url", ["s3://bucket-one/ok/doc.txt", "s3://bucket-one/ok/"])
def test_an_endpoint_that_is_not_s3_is_refused(endpoint: Any, web_page: str, url: str) -> None:
    """Before, the object's listing had no ETag and its body was the page: a scan of a .txt
    object read the page as the corpus and said clean (exit 0)."""
    endpoint(web_page)
    text = fails(run("scan", EVAL, "--corpus", url), url.rstrip("/"))
    assert "not S3's" in text or "nothing is stored" in text, text


def test_a_connection_lost_while_an_object_is_read_is_one_line(
    endpoint: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The endpoint gone after the listing (botocore's EndpointConnectionError, which is not an
    OSError, raised from a read): before, 'contam: internal error: ...' with the endpoint URL as
    botocore quotes it, a password included."""
    from botocore.exceptions import EndpointConnectionError

    def lost(self: Any, start: int, end: int) -> bytes:
        raise EndpointConnectionError(endpoint_url="http://me:pw-contam@127.0.0.1:9/b/k")

    monkeypatch.setattr(s3fs.core.S3File, "_fetch_range", lost)
    url = "s3://contam-remote-test/cd/corpus/"
    line = fails(run("scan", EVAL, "--corpus", url), url)
    assert "cannot read object: EndpointConnectionError: Could not connect" in line, line
    assert "Errno" not in line
    assert "internal error" not in line and "http://***@127.0.0.1:9/b/k" in line, line
