"""Step 'install' of action.yml: contam in a virtual environment of its own under RUNNER_TEMP.

``CONTAM_VERSION`` empty: the action's own checkout (``GITHUB_ACTION_PATH``, the ref the workflow
named in ``uses:``); else that release of ``contam-cli``. The environment's interpreter goes to
the step output ``python``; the user's own Python and PATH are left as they were.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from _workflow import error, set_outputs

#: A release number (PEP 440 characters only): never an option, a path or a URL.
VERSION = re.compile(r"[0-9][0-9A-Za-z.+!-]*")


def main() -> int:
    version = os.environ.get("CONTAM_VERSION", "").strip()
    if version and not VERSION.fullmatch(version):
        error(f"the version input must be a release number such as 0.1.0, got {version!r}")
        return 2
    spec = f"contam-cli=={version}" if version else os.environ["GITHUB_ACTION_PATH"]
    root = Path(tempfile.mkdtemp(prefix="contam-", dir=os.environ.get("RUNNER_TEMP")))
    env_dir = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "install", "--quiet"]
    subprocess.run([*pip, spec], check=True)
    subprocess.run([str(python), "-m", "contam_cli", "--version"], check=True)
    set_outputs({"python": str(python)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
