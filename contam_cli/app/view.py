"""The page's widgets and results (Streamlit), for :mod:`contam_cli.app.page` to run.

Every step is a library call the command line makes too (:mod:`contam_cli.app.run`); this
module only lays out the widgets, checks the caps before anything is parsed, and shows what came
back. Inputs and results live in the server's memory for the browser session only.

NOTE: Streamlit is imported inside each function, so that importing this module (the test
suite's doctest collection does) works without the ``app`` extra.
"""

from __future__ import annotations

import math
from typing import Any

from contam_cli.app.inputs import PASTE_FORMATS, NamedBytes, corpus_inputs, eval_input
from contam_cli.app.launch import keep_uploads_in_memory
from contam_cli.app.limits import MB, Limits
from contam_cli.app.run import ScanOutcome, ScanRequest, Settings, run_scan
from contam_cli.errors import ContamError

PRIVACY = (
    "**Private by design.** What you paste or upload is processed in this server's memory "
    "only: it is never written to disk, stored, logged or sent anywhere, and it is gone when "
    "you close the tab. Streamlit's usage statistics are off."
)
USAGE_STATS_ON = (
    "This server was started with Streamlit's usage statistics ON "
    "(browser.gatherUsageStats): start it with `contam app`, or pass "
    "`--browser.gatherUsageStats false`."
)
UPLOAD_TYPES = ["jsonl", "ndjson", "json", "txt", "gz", "bz2", "xz", "zst"]
_OUTCOME = "contam_outcome"


def main() -> None:
    import streamlit as st

    st.set_page_config(page_title="contam: did your eval set leak?", layout="wide")
    try:
        limits = Limits.from_env()
    except ContamError as e:
        st.error(str(e))
        st.stop()
    keep_uploads_in_memory(limits.upload_mb * MB)
    _header(limits)
    settings = _settings()
    given = _input_widgets(limits)
    if st.button("Scan", type="primary", key="scan"):
        st.session_state.pop(_OUTCOME, None)
        _scan(given, settings, limits)
    outcome = st.session_state.get(_OUTCOME)
    if isinstance(outcome, ScanOutcome):
        _results(outcome)


def _header(limits: Limits) -> None:
    import streamlit as st

    st.title("Did your eval set leak into the training data?")
    st.markdown(
        "Paste your eval examples and a corpus (or upload files): each example gets its overlap "
        "with the corpus, its longest verbatim run and the evidence, as `contam scan` gives them."
    )
    if st.get_option("browser.gatherUsageStats"):
        st.warning(USAGE_STATS_ON)
    else:
        st.info(PRIVACY)
    st.caption(
        f"Limits of this server: {limits.describe()}. No limits when you run "
        "`pip install contam-cli` and `contam scan` on your own machine."
    )


def _settings() -> Settings:
    import streamlit as st

    with st.sidebar:
        st.header("Settings")
        n = st.number_input("n (tokens per n-gram)", min_value=1, max_value=200, value=13, key="n")
        overlap = st.number_input(
            "min overlap (flag at or above)", 0.0, 1.0, 0.5, step=0.05, key="min_overlap"
        )
        run = st.number_input(
            "min run (tokens in a row, flag at or above)", min_value=1, value=30, key="min_run"
        )
        roles = st.text_input(
            "roles (chat turns to keep, e.g. user,assistant; empty: all)", key="roles"
        )
        st.caption("Defaults follow the GPT-3 paper's 13-grams and the published tools.")
    kept = tuple(r.strip() for r in roles.split(",") if r.strip())
    return Settings(n=int(n), min_overlap=float(overlap), min_run=int(run), roles=kept or None)


def _input_widgets(limits: Limits) -> dict[str, Any]:
    import streamlit as st

    left, right = st.columns(2)
    with left:
        st.subheader("Eval examples")
        eval_text = st.text_area(
            'Paste: JSONL (`{"id": ..., "text": ...}`, chat `messages` or ShareGPT '
            "`conversations`), a JSON array, or one example per line",
            height=220,
            key="eval_text",
        )
        eval_fmt = st.selectbox("Pasted eval format", list(PASTE_FORMATS), key="eval_format")
        eval_file = st.file_uploader(
            "…or upload one file (.jsonl, .json, .txt; .gz .bz2 .xz .zst too)",
            type=UPLOAD_TYPES,
            key="eval_file",
            max_upload_size=math.ceil(limits.max_eval_bytes / MB),
        )
    with right:
        st.subheader("Corpus")
        corpus_text = st.text_area(
            "Paste a document (or JSONL, one document per line)", height=220, key="corpus_text"
        )
        corpus_fmt = st.selectbox("Pasted corpus format", list(PASTE_FORMATS), key="corpus_format")
        corpus_files = st.file_uploader(
            "…and/or upload files (a .txt file is one document)",
            type=UPLOAD_TYPES,
            accept_multiple_files=True,
            key="corpus_files",
            max_upload_size=math.ceil(limits.max_corpus_bytes / MB),
        )
    return {
        "eval": (eval_text, eval_fmt, eval_file),
        "corpus": (corpus_text, corpus_fmt, list(corpus_files or [])),
    }


def _scan(given: dict[str, Any], settings: Settings, limits: Limits) -> None:
    """Check the caps, then scan in a child process; any problem is one line in the page."""
    import streamlit as st

    try:
        # NOTE: the caps are checked on byte lengths here, before anything is parsed.
        eval_text, eval_fmt, eval_file = given["eval"]
        corpus_text, corpus_fmt, corpus_files = given["corpus"]
        eval_in: NamedBytes = eval_input(eval_text, eval_fmt, eval_file, limits)
        corpus_in = corpus_inputs(corpus_text, corpus_fmt, corpus_files, limits)
        with st.spinner("Scanning…"):
            outcome = run_scan(ScanRequest(eval_in, corpus_in, settings), limits.max_seconds)
    except ContamError as e:
        st.error(str(e))
        return
    st.session_state[_OUTCOME] = outcome


def _results(outcome: ScanOutcome) -> None:
    import streamlit as st

    st.header("Results")
    # NOTE: st.error is kept for errors; a verdict is a result, in its colour.
    colour = "red" if outcome.contaminated else "green"
    took = (
        f"{outcome.seconds:.1f} s" if outcome.seconds >= 1 else f"{outcome.seconds * 1000:.0f} ms"
    )
    st.markdown(f":{colour}-background[**{outcome.summary}**] (scanned in {took})")
    if outcome.warnings:
        # NOTE: as plain text: a warning can quote a file name or text, never read as Markdown.
        st.warning("The scan has warnings (they are in the JSON report too):")
        st.code("\n".join(outcome.warnings), language=None)
    st.dataframe(
        list(outcome.rows),
        hide_index=True,
        key="results_table",
        column_config={
            "overlap": st.column_config.NumberColumn(format="%.3f"),
            "z": st.column_config.NumberColumn(format="%.2f"),
        },
    )
    if outcome.unscorable:
        st.markdown("**Unscorable** (fewer than n tokens; not evidence of being clean):")
        st.dataframe(list(outcome.unscorable), hide_index=True, key="unscorable_table")
    _downloads(outcome)
    with st.expander("As text (what `contam scan` prints)"):
        st.code(outcome.table, language=None)
    st.subheader("The report: each flagged example's leaked span beside its evidence")
    # NOTE: the HTML report's own page, as `contam scan --html` writes it: every value in it
    # is escaped, and its Content-Security-Policy forbids any network load.
    st.iframe(outcome.html, height=900, alt="contam HTML report")


def _downloads(outcome: ScanOutcome) -> None:
    import streamlit as st

    cols = st.columns(4)
    files = [
        ("JSON report", outcome.json, "contam-report.json", "application/json", "dl_json"),
        ("HTML report", outcome.html.encode(), "contam-report.html", "text/html", "dl_html"),
        ("Cleaned eval set", outcome.cleaned, outcome.cleaned_name, "text/plain", "dl_clean"),
        ("Flagged examples", outcome.flagged_only, outcome.flagged_name, "text/plain", "dl_dirty"),
    ]
    for col, (label, data, name, mime, key) in zip(cols, files):
        with col:
            st.download_button(
                label, data=data, file_name=name, mime=mime, key=key, on_click="ignore"
            )
