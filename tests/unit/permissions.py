"""Run a command where the file permission bits apply, as root or not (issue 41 row 17).

Root reads and writes a ``chmod 000`` folder anyway, so a test of permission denied that runs
in-process passes or skips depending on who runs it. :func:`run_where_bits_apply` runs a
Python script in a subprocess: as root through ``setpriv``, which drops CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH so the kernel's real checks apply; as any other user directly (they apply
already). No fake: the errors are real EACCES from the file system.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT


def run_where_bits_apply(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -c script args`` with the permission bits enforced, in the repo with the
    test's environment (its ``VERIFAI_HOME``).

    Skips the test only as root on a system without ``setpriv`` (util-linux).
    """
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv (util-linux) to drop the override")
        caps = "-dac_override,-dac_read_search"
        prefix = [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]
    return subprocess.run(
        [*prefix, sys.executable, "-c", script, *args],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
