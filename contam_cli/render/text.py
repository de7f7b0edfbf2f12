"""Plain-text columns for the terminal renderers: aligned, two spaces apart, no trailing blanks.

>>> print("\\n".join(columns(["id", "run"], [["q1", "23"], ["q10", "4"]], "lr")))
id   run
q1    23
q10    4
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["columns", "one_line"]


def columns(headers: Sequence[str], rows: Sequence[Sequence[str]], justify: str) -> list[str]:
    """The lines of a table: `justify` holds ``l`` or ``r`` per column; a cell's newlines and
    tabs become spaces so that every row stays on one line."""
    cells = [[one_line(c) for c in row] for row in [list(headers), *rows]]
    widths = [max(len(row[k]) for row in cells) for k in range(len(headers))]
    out = []
    for row in cells:
        parts = [c.rjust(w) if j == "r" else c.ljust(w) for c, w, j in zip(row, widths, justify)]
        out.append("  ".join(parts).rstrip())
    return out


def one_line(cell: str) -> str:
    """`cell` on one line, its control characters shown, never sent: an ESC in an id or a text
    must not reach the terminal (it could rewrite what the table shows).

    >>> one_line("a\\tb\\x1b[2Jc")
    'a b\\\\x1b[2Jc'
    """
    cell = cell.replace("\r", " ").replace("\n", " ").replace("\t", " ")
    if cell.isprintable():
        return cell
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in cell)
