"""The Streamlit script of ``contam app``: ``streamlit run contam_cli/app/page.py`` serves it.

Started by ``contam app`` (see docs/app.md for hosting it). The page itself is
:func:`contam_cli.app.view.main`.
"""

from __future__ import annotations

# NOTE: Streamlit runs a script as ``__main__``; imported (by the test suite's doctest
# collection), this module does nothing.
if __name__ == "__main__":
    from contam_cli.app.view import main

    main()
