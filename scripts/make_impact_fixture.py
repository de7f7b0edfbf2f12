"""Write fixtures/impact/: an eval set, a corpus that leaks some of it, and per-example results.

    python scripts/make_impact_fixture.py                # seed 0, into fixtures/impact/

Seeded, so the same command writes the same bytes. What it writes:

* ``eval.jsonl``: 200 quiz questions (``id`` 0..199, the 0-based position, as lm-eval's
  ``doc_id``; ``question``, four ``choices``, ``answer`` a letter), two of them too short to
  score at n=13;
* ``web.jsonl`` and ``books.jsonl``: two corpus sources of generated prose. 24 questions are
  copied whole (with their answer) into web documents and 8 into book documents; 10 more have a
  24-word piece of their question copied into web documents (a partial leak: overlap below 0.5,
  run below 30, so only a lenient level flags them);
* ``samples_quiz.jsonl``: what lm-evaluation-harness writes with ``--log_samples`` for a
  multiple-choice task (``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``,
  ``filtered_resps``, ``filter``, ``metrics``, the hashes, ``acc``). A question is answered
  correctly with probability 0.5 when clean, 0.7 when partly leaked, 0.9 when leaked whole.

The text comes from the benchmark's synthetic text model (contam_cli.features.bench.textmodel).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np

from contam_cli.features.bench.textmodel import TextModel, TextParams

N_EVAL = 200
WHOLE_WEB, WHOLE_BOOKS, PARTIAL = 24, 8, 10
SHORT = (17, 123)
"""Questions written too short to score (fewer than 13 tokens)."""
P_CORRECT = {"clean": 0.5, "partial": 0.7, "whole": 0.9}
LETTERS = "ABCD"


def _questions(model: TextModel, rng: np.random.Generator) -> list[dict[str, object]]:
    lengths = rng.integers(34, 46, size=N_EVAL)
    lengths[list(SHORT)] = 6
    texts = model.prose(rng, lengths)
    choices = model.prose(rng, rng.integers(2, 5, size=4 * N_EVAL))
    out = []
    for i, text in enumerate(texts):
        answer = LETTERS[int(rng.integers(0, 4))]
        question = text.rstrip(".!?") + "?"
        out.append(
            {"id": i, "question": question, "choices": choices[4 * i : 4 * i + 4], "answer": answer}
        )
    return out


def _corpus(
    model: TextModel, rng: np.random.Generator, leaks: list[str], n_docs: int
) -> list[dict[str, object]]:
    """``n_docs`` prose documents; each leaked text is put inside a random one of them."""
    bodies = model.prose(rng, rng.integers(80, 240, size=n_docs))
    hosts = rng.integers(0, n_docs, size=len(leaks)).tolist()
    for host in sorted(set(hosts)):
        words = bodies[host].split(" ")
        texts = [text for text, h in zip(leaks, hosts) if h == host]
        # NOTE: cut points in the original words, so that no leak lands inside another one.
        cuts = sorted(rng.integers(0, len(words) + 1, size=len(texts)).tolist())
        pieces = np.split(np.array(words, dtype=object), cuts)
        parts = [" ".join(pieces[0])]
        for text, piece in zip(texts, pieces[1:]):
            parts += [text, " ".join(piece)]
        bodies[host] = " ".join(p for p in parts if p)
    return [{"id": f"doc-{k:04d}", "text": body} for k, body in enumerate(bodies)]


def _partial(question: str, rng: np.random.Generator) -> str:
    words = question.split(" ")
    start = int(rng.integers(0, len(words) - 24))
    return " ".join(words[start : start + 24])


def _sample(doc: dict[str, object], correct: bool, rng: np.random.Generator) -> dict[str, object]:
    """One lm-eval ``--log_samples`` row of a 4-way multiple-choice task."""
    prompt = f"Question: {doc['question']}\nAnswer:"
    target = LETTERS.index(str(doc["answer"]))
    loglik = -rng.uniform(2.0, 9.0, size=4).round(4)
    best = target if correct else int(rng.choice([k for k in range(4) if k != target]))
    loglik[best] = float(loglik.max()) + 0.5
    choices = [str(c) for c in doc["choices"]]  # type: ignore[attr-defined]
    resps = [[[float(v), bool(k == best)]] for k, v in enumerate(loglik.round(4).tolist())]
    return {
        "doc_id": doc["id"],
        "doc": doc,
        "target": target,
        "arguments": {
            f"gen_args_{k}": {"arg_0": prompt, "arg_1": f" {c}"} for k, c in enumerate(choices)
        },
        "resps": resps,
        "filtered_resps": [r[0] for r in resps],
        "filter": "none",
        "metrics": ["acc"],
        "doc_hash": _sha256(json.dumps(doc, indent=2, ensure_ascii=False)),
        "prompt_hash": _sha256(prompt),
        "target_hash": _sha256(str(target)),
        "acc": 1.0 if correct else 0.0,
    }


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def _whole(doc: dict[str, object]) -> str:
    """A question leaked whole: its text and its answer."""
    return f"{doc['question']} {doc['answer']}"


def _tally(kind: dict[int, str], correct: list[bool]) -> str:
    n_correct, n_kind = dict.fromkeys(P_CORRECT, 0), dict.fromkeys(P_CORRECT, 0)
    for i, ok in enumerate(correct):
        n_kind[kind.get(i, "clean")] += 1
        n_correct[kind.get(i, "clean")] += int(ok)
    return ", ".join(f"{k} {n_correct[k]}/{n_kind[k]} correct" for k in n_kind)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("fixtures/impact"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    model = TextModel.build(rng, TextParams(vocab_size=6000, n_phrases=3000, non_ascii_share=0.0))
    docs = _questions(model, rng)
    scorable = [i for i in range(N_EVAL) if i not in SHORT]
    leaked = rng.permutation(scorable)[: WHOLE_WEB + WHOLE_BOOKS + PARTIAL].tolist()
    web, books = leaked[:WHOLE_WEB], leaked[WHOLE_WEB : WHOLE_WEB + WHOLE_BOOKS]
    partial = leaked[WHOLE_WEB + WHOLE_BOOKS :]
    web_leaks = [_whole(docs[i]) for i in web]
    web_leaks += [_partial(str(docs[i]["question"]), rng) for i in partial]
    kind = dict.fromkeys(web + books, "whole") | dict.fromkeys(partial, "partial")
    correct = [bool(rng.random() < P_CORRECT[kind.get(i, "clean")]) for i in range(N_EVAL)]
    args.out.mkdir(parents=True, exist_ok=True)
    _write(args.out / "eval.jsonl", docs)
    _write(args.out / "web.jsonl", _corpus(model, rng, web_leaks, 80))
    _write(args.out / "books.jsonl", _corpus(model, rng, [_whole(docs[i]) for i in books], 40))
    _write(args.out / "samples_quiz.jsonl", [_sample(d, c, rng) for d, c in zip(docs, correct)])
    print(f"wrote {args.out}: {_tally(kind, correct)}")


if __name__ == "__main__":
    main()
