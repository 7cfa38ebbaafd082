"""Run the real ``verifai`` command in a subprocess, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_verifai(
    *args: str, home: Path | None = None, timeout_s: float = 900
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m verifai_desktop ARGS`` offline; ``home`` overrides ``$VERIFAI_HOME``.

    Without ``home`` the autouse fixture's ``VERIFAI_HOME`` (already in ``os.environ``) applies.
    """
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if home is not None:
        env["VERIFAI_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "verifai_desktop", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout_s,
    )
