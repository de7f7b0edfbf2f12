"""The report: the value every detector fills, and its persistence."""

from __future__ import annotations

from contam_cli.report.model import *  # noqa: F403
from contam_cli.report.model import __all__ as __all__
