"""``contam app``: the browser page (Streamlit) over the same library calls as the command line.

``page.py`` is the Streamlit script; the rest is plain Python that the page calls: the input caps
(``limits``), reading pasted and uploaded inputs (``inputs``), the scan in a child process with a
time budget (``run``) and the server's settings (``server``). Nothing here imports Streamlit but
the page and ``server`` (inside its functions), so ``contam app`` can say what is missing.
"""
