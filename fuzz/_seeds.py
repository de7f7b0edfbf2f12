"""Seed corpora for the fuzz targets, built from the files in fixtures/ (and a few hand-made
shapes the fixtures lack: chats with content parts, BOMs, CRLF, CJK, ligatures).

``python fuzz/_seeds.py TARGET OUTDIR`` writes one file per seed into OUTDIR (made if missing).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
CAP = 6000
"""Bytes kept of each fixture (the fuzzers run with -max_len=8192)."""

EXTRA_RECORDS = [
    {"id": "c1", "messages": [{"role": "user", "content": "What is 2+2?"},
                              {"role": "assistant", "content": "Four."}]},
    {"id": "c2", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "Describe the picture"},
        {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}]},
    {"conversations": [{"from": "human", "value": "hi there"}, {"from": "gpt", "value": "hello"}]},
    {"id": 1.5, "question": "Why?", "answer": 42},
    {"id": True, "prompt": "p", "completion": None},
    {"instruction": "Translate", "input": "chat", "output": "cat", "meta": {"id": "m1"}},
    {"a": {"b": "nested"}, "c": ["zero", "one"], "a.b": "dotted key"},
    {"text": "東京は晴れ ﬁsh Ｆｕｌｌ İstanbul café\u0301 ½ “quoted”"},
    {"text": "lone \ud800 surrogate"},
    {"id": "", "text": ""},
    [1, 2, 3],
    "a bare string",
    None,
]  # fmt: skip
EXTRA_TEXTS = [
    "The quick brown fox.\nJumps over the lazy dog!",
    "東京は晴れ、大阪は雨。ภาษาไทย ພາສາລາວ ၿမန္မာ ខ្មែរ",
    "ﬁ ﬂ ﬃ Ｆｕｌｌ ｗｉｄｔｈ ½ ² ℌ ㈱ ㍻ ｶﾞ",
    "İstanbul ΣΟΦΟΣ Straße ǅ ﬆ e\u0301 a\u0308\u0301",
    "tab\tsep\u00a0nbsp\u2003em\u2019quote\u2014dash\u3000ideo",
    "\ufeffBOM start\r\nCRLF line\r\n",
    "x\x00second doc\x00\x00third",
]


def _fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file())


def _lines() -> list[bytes]:
    out = []
    for p in _fixture_files():
        if p.suffix == ".jsonl":
            out.extend(line for line in p.read_bytes().splitlines()[:20] if line.strip())
    out.extend(json.dumps(r).encode() for r in EXTRA_RECORDS)
    return out


def _jsonl_docs() -> list[bytes]:
    docs = [p.read_bytes()[:CAP] for p in _fixture_files() if p.suffix == ".jsonl"]
    extra = b"\n".join(json.dumps(r).encode() for r in EXTRA_RECORDS) + b"\n"
    docs += [extra, b"\xef\xbb\xbf" + extra, extra.replace(b"\n", b"\r\n"), b"\n\n  \n", b""]
    return docs


def _json_docs() -> list[bytes]:
    lines = _lines()
    docs = [p.read_bytes()[:CAP] for p in _fixture_files() if p.suffix == ".json"]
    for k in range(0, len(lines), 8):
        part = lines[k : k + 8]
        arr = b"[\n  " + b",\n  ".join(part) + b"\n]\n"
        docs += [arr, b'{"version": 1, "data": ' + arr + b', "tags": ["a"]}']
    docs += [b"[]", b"\xef\xbb\xbf[1, 2]", b'{"a": [1], "b": [{"x": 1}]}', b"[1,]", b"{}", b"3"]
    return docs


def _txt_docs() -> list[bytes]:
    docs = [p.read_bytes()[:CAP] for p in _fixture_files() if p.suffix == ".txt"]
    return docs + [t.encode("utf-8", "surrogatepass") for t in EXTRA_TEXTS]


def seeds_readers() -> list[bytes]:
    sys.path.insert(0, str(Path(__file__).parent))
    from fuzz_readers import COMPRESS, SPECS, VARIANTS

    by_format = {".jsonl": _jsonl_docs(), ".json": _json_docs(), ".txt": _txt_docs()}
    out = []
    for v, (fmt, _role, comp, how) in enumerate(VARIANTS):
        for k, doc in enumerate(by_format[fmt]):
            payload = COMPRESS[comp](doc) if how == "compressed" else doc
            out.append(bytes([v, k % len(SPECS)]) + payload)
    return out


def seeds_extract() -> list[bytes]:
    return [bytes([a, b]) + line for line in _lines() for a, b in ((0, 0), (1, 3), (2, 5), (3, 1))]


def seeds_text() -> list[bytes]:
    texts = [t.encode("utf-8", "surrogatepass") for t in EXTRA_TEXTS]
    texts += [
        p.read_bytes()[:2000] for p in _fixture_files() if p.suffix in (".txt", ".jsonl", ".md")
    ]
    return [bytes([c]) + t for t in texts for c in (0, 0x81, 2, 3)]


def seeds_jsonarray() -> list[bytes]:
    return _json_docs()


SEEDS = {
    "readers": seeds_readers,
    "extract": seeds_extract,
    "text": seeds_text,
    "jsonarray": seeds_jsonarray,
}


def write_seeds(target: str, outdir: Path) -> int:
    outdir.mkdir(parents=True, exist_ok=True)
    seeds = SEEDS[target]()
    for s in seeds:
        (outdir / hashlib.sha1(s).hexdigest()).write_bytes(s)
    return len(seeds)


if __name__ == "__main__":
    target, outdir = sys.argv[1], Path(sys.argv[2])
    print(f"{target}: {write_seeds(target, outdir)} seeds in {outdir}")
