"""Static SVG charts: well-formed, deterministic, self-contained, escaped, bounded in size."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable

import numpy as np
import pytest

from contam_cli.render.svg import histogram, interval_plot, roc_curves, scatter
from contam_cli.render.svg_parts import PALETTE

NS = "{http://www.w3.org/2000/svg}"
NAN = math.nan
RNG = np.random.default_rng(0)
CLEAN, LEAKED = RNG.normal(0.2, 0.1, 300), RNG.normal(0.7, 0.1, 40)
FPR, TPR = np.array([0.0, 0.0, 0.1, 0.5, 1.0]), np.array([0.0, 0.4, 0.8, 0.9, 1.0])

Chart = Callable[[str], str]
"""A chart built with the given text in every label."""

CHARTS: dict[str, Chart] = {
    "histogram": lambda text: histogram(
        {f"flagged {text}": LEAKED, f"clean {text}": CLEAN}, title=text, x_label=text
    ),
    "roc": lambda text: roc_curves(
        {f"ngram {text}": (FPR, TPR, 0.87), text: (FPR, FPR, None)}, title=text
    ),
    "scatter": lambda text: scatter(
        np.r_[CLEAN, LEAKED],
        np.r_[CLEAN, LEAKED] * 40,
        np.r_[[f"clean {text}"] * 300, [f"flagged {text}"] * 40],
        title=text,
        x_label=text,
        y_label=text,
    ),
    "interval": lambda text: interval_plot(
        [f"strict {text}", "default", "loose"],
        [[0.5, 0.6, 0.7], [0.55, 0.7, 0.9]],
        [[0.4, 0.5, 0.6], [0.45, 0.6, 0.8]],
        [[0.6, 0.7, 0.8], [0.65, 0.8, 1.0]],
        title=text,
        y_label=text,
        series=[f"clean {text}", "dirty"],
        reference=0.5,
    ),
}


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    return root


def texts(root: ET.Element) -> list[str]:
    return [
        el.text or "" for el in root.iter() if el.tag in (f"{NS}text", f"{NS}title", f"{NS}desc")
    ]


@pytest.mark.parametrize("name", CHARTS)
def test_chart_is_well_formed_and_accessible(name: str) -> None:
    svg = CHARTS[name]("Scores")
    root = parse(svg)
    assert root.get("role") == "img"
    assert root.get("width") == "480" and root.get("height") == "300"
    title_id, desc_id = (root.get("aria-labelledby") or "").split()
    title, desc = root.find(f"{NS}title"), root.find(f"{NS}desc")
    assert title is not None and title.get("id") == title_id and title.text == "Scores"
    assert desc is not None and desc.get("id") == desc_id and len(desc.text or "") > 20
    assert PALETTE[0] in svg and PALETTE[1] in svg  # blue and orange, the colour-blind-safe pair


@pytest.mark.parametrize("name", CHARTS)
def test_chart_is_deterministic(name: str) -> None:
    assert CHARTS[name]("Scores") == CHARTS[name]("Scores")


@pytest.mark.parametrize("name", CHARTS)
def test_chart_is_self_contained(name: str) -> None:
    svg = CHARTS[name]("Scores")
    assert svg.count("http") == 1  # the SVG namespace, nothing else
    for banned in ("<script", "href", "url(", "@import", "<image", "<foreignObject", "on"):
        if banned == "on":
            assert not re.search(r"\son\w+=", svg)
        else:
            assert banned not in svg


@pytest.mark.parametrize("name", CHARTS)
def test_coordinates_have_at_most_two_decimals(name: str) -> None:
    numbers = re.findall(
        r"\d+\.\d+",
        " ".join(re.findall(r' (?:d|x|y|cx|cy|width|height)="([^"]*)"', CHARTS[name]("S"))),
    )
    assert numbers and all(len(n.split(".")[1]) <= 2 for n in numbers)


@pytest.mark.parametrize("name", CHARTS)
def test_labels_are_escaped(name: str) -> None:
    nasty = 'a <b> & "c" \x01 </svg>'
    svg = CHARTS[name](nasty)
    root = parse(svg)
    assert "<b>" not in svg and "</svg>" not in svg[:-8]
    shown = texts(root)
    assert 'a <b> & "c" \ufffd </svg>' in shown  # the title, control character replaced


@pytest.mark.parametrize(
    "svg",
    [
        pytest.param(lambda: histogram({}, title="t", x_label="x"), id="histogram, no group"),
        pytest.param(
            lambda: histogram({"a": [], "b": [NAN]}, title="t", x_label="x"),
            id="histogram, empty groups",
        ),
        pytest.param(
            lambda: scatter([], [], [], title="t", x_label="x", y_label="y"), id="scatter"
        ),
        pytest.param(
            lambda: scatter([NAN], [1.0], ["a"], title="t", x_label="x", y_label="y"),
            id="scatter, NaN only",
        ),
        pytest.param(lambda: interval_plot([], [], [], [], title="t", y_label="y"), id="interval"),
    ],
)
def test_empty_input_says_no_data(svg: Callable[[], str]) -> None:
    out = svg()
    assert "no data" in texts(parse(out))
    assert "nan" not in out.lower()


def test_empty_roc_draws_the_chance_line() -> None:
    root = parse(roc_curves({}, title="t"))
    assert "chance" in texts(root)
    assert "no method" in (root.find(f"{NS}desc").text or "")  # type: ignore[union-attr]


def test_nan_and_infinity_are_left_out() -> None:
    outs = [
        histogram({"a": [NAN, 1.0, 2.0, math.inf]}, title="t", x_label="x"),
        histogram({"flat": [3.0, 3.0]}, title="t", x_label="x"),
        roc_curves({"m": ([0.0, NAN, 1.0], [0.0, 0.5, 1.0], NAN)}, title="t"),
        scatter(
            [1.0, NAN, 3.0, math.inf],
            [1.0, 2.0, NAN, 4.0],
            ["a"] * 4,
            title="t",
            x_label="x",
            y_label="y",
        ),
        interval_plot(["a", "b"], [0.5, NAN], [NAN, 0.1], [0.7, 0.9], title="t", y_label="y"),
    ]
    for out in outs:
        parse(out)
        assert not re.search(r'="[^"]*(nan|inf)', out.lower())
    assert "(AUC n/a)" in outs[2]
    assert "a (n=2)" in outs[0]


def test_histogram_counts_and_normalized_shares() -> None:
    counts = histogram({"a": [0.0, 0.0, 1.0]}, bins=2, title="t", x_label="x")
    shares = histogram({"a": [0.0, 0.0, 1.0]}, bins=2, title="t", x_label="x", normalize=True)
    assert ">count<" in counts and ">share of group<" in shares
    assert "a: 3 values, median 0" in counts


def test_scatter_of_100k_points_is_sampled_and_bounded() -> None:
    rng = np.random.default_rng(1)
    n = 100_000
    flagged = rng.random(n) < 0.01
    x, y = rng.random(n), rng.random(n) * 60
    groups = np.where(flagged, "flagged", "not flagged")
    svg = scatter(x, y, groups, title="overlap against run", x_label="overlap", y_label="run")
    root = parse(svg)
    assert len(svg.encode()) < 150_000
    dots = {
        p.get("stroke"): (p.get("d") or "").count("h0")
        for p in root.iter(f"{NS}path")
        if "h0" in (p.get("d") or "") and p.get("stroke-width") == "4.5"
    }
    assert dots[PALETTE[0]] == int(flagged.sum())  # every point of the smaller group
    assert sum(dots.values()) == 5000
    assert f"not flagged (n={n - int(flagged.sum()):,}, {5000 - int(flagged.sum()):,} drawn)" in svg
    assert svg == scatter(
        x, y, groups, title="overlap against run", x_label="overlap", y_label="run"
    )


def test_scatter_fair_share_with_several_large_groups() -> None:
    groups = np.array(["a"] * 50 + ["b"] * 3000 + ["c"] * 8000)
    x = np.arange(groups.size, dtype=float)
    root = parse(scatter(x, x, groups, title="t", x_label="x", y_label="y", max_points=1000))
    dots = [
        (p.get("d") or "").count("h0")
        for p in root.iter(f"{NS}path")
        if p.get("stroke-width") == "4.5"
    ]
    assert sorted(dots) == [50, 475, 475]


def test_long_roc_curves_are_thinned() -> None:
    rng = np.random.default_rng(2)
    fpr = np.r_[0.0, np.sort(rng.random(100_000)), 1.0]
    tpr = np.sqrt(fpr)
    svg = roc_curves({"m": (fpr, tpr, 0.67)}, title="t")
    assert len(svg.encode()) < 40_000
    parse(svg)


@pytest.mark.parametrize(
    "call, message",
    [
        pytest.param(
            lambda: histogram({"a": [1.0]}, bins=0, title="t", x_label="x"), "bins", id="bins"
        ),
        pytest.param(
            lambda: scatter([1.0], [1.0], ["a"], title="t", x_label="x", y_label="y", max_points=0),
            "max_points",
            id="max_points",
        ),
        pytest.param(
            lambda: scatter([1.0, 2.0], [1.0], ["a"], title="t", x_label="x", y_label="y"),
            "length",
            id="scatter lengths",
        ),
        pytest.param(
            lambda: roc_curves({"m": ([0.0, 1.0], [0.0], 0.5)}, title="t"), "tpr", id="roc lengths"
        ),
        pytest.param(
            lambda: interval_plot(["a"], [1.0, 2.0], [0.0], [2.0], title="t", y_label="y"),
            "values per series",
            id="labels",
        ),
        pytest.param(
            lambda: interval_plot(["a"], [[1.0], [2.0]], [0.0], [2.0], title="t", y_label="y"),
            "same shape",
            id="rows",
        ),
        pytest.param(
            lambda: interval_plot(
                ["a"], [1.0], [0.0], [2.0], title="t", y_label="y", series=["x", "y"]
            ),
            "series names",
            id="series",
        ),
    ],
)
def test_invalid_input_is_refused(call: Callable[[], str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
