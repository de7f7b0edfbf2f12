"""run_bench's arithmetic on hand-built cases, its plumbing (detectors as entries, progress,
errors), the probe through the built-in n-gram LM, and the Markdown and JSON renderers."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from contam_cli.errors import UsageError
from contam_cli.features.bench import runner
from contam_cli.features.bench.labelled import LabelledSet
from contam_cli.features.bench.model_signals import fuzzy_missing
from contam_cli.features.bench.runner import DETECTORS, BenchResult, Detector, run_bench
from contam_cli.features.bench.signals import Settings, Signal
from contam_cli.features.bench.summary import RowBuilder, Stat, seed_values
from contam_cli.render.bench import (
    BENCH_SCHEMA,
    bench_command,
    render_bench_json,
    render_bench_markdown,
)

KINDS = np.array(["verbatim", "verbatim", "paraphrased", "clean", "clean", "boilerplate"])
SCORES = np.array([0.9, 0.8, 0.3, 0.4, 0.1, 0.8])


def _signal(scores: np.ndarray, threshold: float = 0.5) -> Signal:
    return Signal("score >= 0.5", scores, np.nan_to_num(scores, nan=-1.0) >= threshold)


# -- the arithmetic --------------------------------------------------------------------------


def test_one_seed_by_hand() -> None:
    v = seed_values(KINDS, _signal(SCORES))
    # all: leaks verbatim, paraphrased; negatives clean + boilerplate = [0.4, 0.1, 0.8]
    assert v["all:auc:verbatim"] == pytest.approx(5.5 / 6)  # 0.8 ties the boilerplate 0.8
    assert v["all:auc:paraphrased"] == pytest.approx(1 / 3)
    assert v["all:auc:overall"] == pytest.approx(6.5 / 9)
    assert v["all:auc:partial"] is None  # no partial leak in this set
    assert v["all:recall"] == pytest.approx(2 / 3) and v["all:fpr"] == pytest.approx(1 / 3)
    # seed: the same leaks against the clean examples alone = [0.4, 0.1]
    assert v["seed:auc:verbatim"] == 1.0 and v["seed:auc:paraphrased"] == 0.5
    assert v["seed:auc:overall"] == pytest.approx(5 / 6)
    assert v["seed:recall"] == pytest.approx(2 / 3) and v["seed:fpr"] == 0.0
    assert (v["rate:verbatim"], v["rate:paraphrased"], v["rate:boilerplate"]) == (1.0, 0.0, 1.0)
    assert v["rate:near_miss"] is None and v["mean:clean"] == pytest.approx(0.25)
    assert v["unscorable"] == 0.0


def test_an_unscored_example_is_left_out_of_auc_and_never_flagged() -> None:
    scores = SCORES.copy()
    scores[0] = np.nan
    flags = np.ones(len(scores), dtype=bool)  # NOTE: a flag without a score does not count
    v = seed_values(KINDS, Signal("all", scores, flags))
    assert v["unscorable"] == 1.0
    assert v["all:auc:verbatim"] == pytest.approx(2.5 / 3)  # 0.8 alone against the negatives
    assert v["all:recall"] == pytest.approx(2 / 3)
    assert v["rate:verbatim"] == 0.5


def test_a_signal_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError, match="6 examples"):
        seed_values(KINDS, _signal(SCORES[:5]))


def test_seeds_average_and_the_deployment_view() -> None:
    b = RowBuilder(13, "test", "score", "score >= 0.5")
    b.add(KINDS, _signal(SCORES))  # recall 2/3, FPR 1/3
    b.add(KINDS, _signal(np.array([0.9, 0.8, 0.7, 0.4, 0.1, 0.2])))  # recall 1, FPR 0
    row = b.row(documents=10_000, prevalence=0.01)
    v = row.views["all"]
    assert v.recall.mean == pytest.approx(5 / 6) and v.recall.sd == pytest.approx(1 / 6)
    assert v.fpr.mean == pytest.approx(1 / 6) and v.fpr.sd == pytest.approx(1 / 6)
    verbatim = v.auc["verbatim"]
    assert verbatim.mean == pytest.approx((5.5 / 6 + 1.0) / 2) and verbatim.seeds == 2
    assert verbatim.sd == pytest.approx(1 / 24)
    q = v.queue
    assert q is not None
    true, false = 100 * 5 / 6, 9_900 / 6
    assert [q.true, q.false, q.missed] == pytest.approx([true, false, 100 - true])
    assert q.flagged == pytest.approx(true + false) and q.precision == pytest.approx(
        true / (true + false)
    )
    assert row.rate["near_miss"] == Stat(None, None, 0)


def test_a_rule_must_not_change_between_seeds() -> None:
    b = RowBuilder(13, "test", "score", "score >= 0.5")
    with pytest.raises(ValueError, match="rule changed"):
        b.add(KINDS, Signal("score >= 0.6", SCORES, SCORES >= 0.6))


# -- the runner's plumbing -------------------------------------------------------------------


def _oracle(data: LabelledSet, s: Settings) -> dict[str, Signal]:
    """A perfect detector: it reads the labels."""
    labels = np.array([data.labels[e.id] for e in data.examples], dtype=np.float64)
    return {"oracle": Signal("label == 1", labels + s.n / 1000, labels == 1)}


def _coin(data: LabelledSet, s: Settings) -> dict[str, Signal]:
    """A detector without n that flags nothing and scores everything alike."""
    n = len(data.examples)
    return {"coin": Signal("never", np.zeros(n), np.zeros(n, dtype=bool))}


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        runner,
        "DETECTORS",
        (
            Detector("oracle", _oracle),
            Detector("coin", _coin, per_n=False),
            Detector("absent", _coin, missing=lambda: "absent: left out (not built here)"),
        ),
    )


def test_a_detector_is_one_entry(fakes: None) -> None:
    calls: list[tuple[int, int]] = []
    r = run_bench(seeds=2, ns=(5, 13), progress=lambda done, total: calls.append((done, total)))
    assert [row.label for row in r.rows] == ["n=5 oracle", "n=13 oracle", "coin"]
    assert r.config.detectors == ("oracle", "coin") and r.notes == (
        "absent: left out (not built here)",
    )
    assert calls == [(k, 6) for k in range(7)]  # 2 seeds x (2 sizes + 1)
    oracle = r.row("oracle", 13)
    for view in oracle.views.values():
        assert all(s.mean == 1.0 and s.seeds == 2 for s in view.auc.values())
        assert (view.recall.mean, view.fpr.mean) == (1.0, 0.0)
        assert view.queue is not None and view.queue.precision == 1.0
        assert view.queue.true == pytest.approx(100.0) and view.queue.false == 0.0
    coin = r.row("coin").views["all"]
    assert coin.auc["overall"].mean == 0.5 and coin.queue is not None
    assert coin.queue.flagged == 0.0 and coin.queue.precision is None
    assert r.examples_per_seed["clean"] == 60 and len(r.corpus_documents) == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"detectors": ["nope"]}, "unknown detector"),
        ({"detectors": ["probe"]}, "needs --model"),
        ({"methods": "ppl"}, "give --model too"),
        ({"ns": (0,)}, "--n must list"),
        ({"ns": (13, 13)}, "--n must list"),
        ({"ns": ()}, "--n must list"),
        ({"seeds": 0}, "--seeds"),
        ({"prevalence": 0.0}, "--prevalence"),
        ({"documents": -1}, "--documents"),
        ({"ignore_common": -1}, "--ignore-common"),
    ],
)
def test_usage_errors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        run_bench(**{"seeds": 1, "ns": (13,), "detectors": ["ngram"], **kwargs})


def test_fuzzy_runs_when_the_engine_is_there() -> None:
    why = fuzzy_missing()
    r = run_bench(seeds=1, ns=(13,), detectors=["fuzzy"])
    if why is None:
        fuzzy = r.row("fuzzy").views["all"]
        assert fuzzy.auc["verbatim"].mean == 1.0 and fuzzy.fpr.mean is not None
    else:
        assert r.rows == () and r.notes == (why,)


def test_the_probe_with_the_built_in_lm_is_a_membership_signal() -> None:
    r = run_bench(seeds=1, ns=(13,), detectors=["probe"], model="ngram-lm", methods="min-k++")
    row = r.row("min_k_pp@20")
    assert row.n is None and row.rule == "above p99 of 200 controls"
    auc = row.views["all"].auc["verbatim"].mean
    assert auc is not None and auc > 0.7
    assert r.config.model == {"spec": "ngram-lm", "source": "each seed's labelled corpus"}


# -- the renderers ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small() -> BenchResult:
    return run_bench(seeds=2, ns=(8, 13), detectors=["ngram", "calibrated"])


def _strict(text: str) -> Any:
    def refuse(name: str) -> None:
        raise AssertionError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def test_json_is_versioned_strict_and_deterministic(small: BenchResult) -> None:
    text = render_bench_json(small)
    assert text == render_bench_json(small) and text.endswith("\n")
    doc = _strict(text)
    assert doc["schema"] == BENCH_SCHEMA == "contam.bench/1"
    assert list(doc)[:3] == ["schema", "tool", "command"]
    assert doc["config"]["seeds"] == [0, 1] and doc["config"]["ns"] == [8, 13]
    assert doc["command"] == (
        "contam bench --seeds 2 --prevalence 0.01 --documents 10000 --n 8,13 "
        "--detectors ngram,calibrated"
    )
    assert len(doc["rows"]) == len(small.rows)
    row = next(r for r in doc["rows"] if r["signal"] == "overlap_fraction" and r["n"] == 13)
    want = small.row("overlap_fraction", 13).views["seed"]
    assert row["views"]["seed"]["recall"]["mean"] == pytest.approx(want.recall.mean, abs=1e-12)
    assert set(row["views"]["all"]["deployment"]) == {
        "flagged",
        "true",
        "false",
        "missed",
        "precision",
    }
    # NOTE: the calibrated score is infinite where a threshold is 0; its mean is null, not Infinity.
    calibrated = [r for r in doc["rows"] if r["signal"] == "calibrated"]
    assert calibrated and all(r["info"]["run_threshold"]["mean"] >= 1 for r in calibrated)


def test_the_command_names_the_detectors_when_some_were_left_out(small: BenchResult) -> None:
    # NOTE: it said "contam bench --seeds 2 ... --n 8,13", which reruns every detector.
    assert bench_command(small).endswith(" --n 8,13 --detectors ngram,calibrated")
    every = tuple(d.name for d in DETECTORS if not d.needs_model)
    assert "--detectors" not in bench_command(
        replace(small, config=replace(small.config, detectors=every))
    )
    probe = replace(small.config, detectors=every, model={"spec": "ngram-lm"})
    assert bench_command(replace(small, config=probe)).endswith(
        "--detectors "
        + ",".join(every)
        + " --model ngram-lm --methods "
        + ",".join(small.config.settings.methods)
    )


def test_the_same_run_gives_the_same_bytes(small: BenchResult) -> None:
    again = run_bench(seeds=2, ns=(8, 13), detectors=["ngram", "calibrated"])
    assert render_bench_json(again) == render_bench_json(small)


def test_markdown_has_every_table(small: BenchResult) -> None:
    text = render_bench_markdown(small)
    assert text.startswith("## contam bench\n") and text.endswith("\n")
    assert (
        "`contam bench --seeds 2 --prevalence 0.01 --documents 10000 --n 8,13 "
        "--detectors ngram,calibrated`"
    ) in text
    for title in (
        "### AUC per leak kind",
        "### Recall and false-positive rate at each rule",
        "### Recall per leak kind",
        "### Deployment: 10,000 documents at 0.01 contamination",
        "### The seed project's make-up",
        "### What calibration chose",
        "Best at this prevalence:",
    ):
        assert title in text, title
    line = next(
        x for x in text.splitlines() if x.startswith("| 13 | overlap_fraction | overlap >= 0.5")
    )
    assert "± 0.000" in line
    # NOTE: every row of a table has as many cells as its header
    blocks: list[list[str]] = [[]]
    for x in text.splitlines():
        if x.startswith("|"):
            blocks[-1].append(x)
        elif blocks[-1]:
            blocks.append([])
    for block in (b for b in blocks if b):
        assert len({x.replace("\\|", "").count("|") for x in block}) == 1, block[0]
