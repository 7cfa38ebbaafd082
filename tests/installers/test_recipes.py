"""Static checks of the installer recipes that cannot be run here (Windows, macOS, CI workflow).

The Linux build itself is exercised by test_linux_bundle.py; these run in every test run.
"""

from __future__ import annotations

import ast
import configparser
import re
import shutil
import struct
import subprocess

import pytest
import yaml

from tests.conftest import REPO_ROOT

INSTALLERS = REPO_ROOT / "installers"


def _iss_sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith((";", "#")):
            continue
        if re.fullmatch(r"\[\w+\]", line):
            current = line[1:-1]
            sections[current] = []
        elif current:
            sections[current].append(line)
    return sections


def test_inno_setup_script_has_what_iscc_needs() -> None:
    iss = INSTALLERS / "windows" / "verifai.iss"
    text = iss.read_text("utf-8")
    sections = _iss_sections(text)
    assert {"Setup", "Languages", "Files", "Icons", "Run", "Code"} <= set(sections)
    setup = dict(line.split("=", 1) for line in sections["Setup"])
    # AppName, AppVersion and DefaultDirName are the directives ISCC refuses to compile without.
    assert setup["AppName"] == "VerifAI Desktop"
    assert setup["AppVersion"] == "{#AppVersion}"
    assert setup["DefaultDirName"] == r"{autopf}\VerifAI Desktop"
    assert re.fullmatch(r"\{\{[0-9A-F]{8}(-[0-9A-F]{4}){3}-[0-9A-F]{12}\}", setup["AppId"])
    icon = (iss.parent / setup["SetupIconFile"].replace("\\", "/")).resolve()
    assert icon == INSTALLERS / "icons" / "verifai-desktop.ico"
    assert text.count("#ifndef") == text.count("#endif") == 3
    assert r'"..\..\dist\installers\pyinstaller\verifai-desktop"' in text
    assert any(r"{app}\verifai-desktop.exe" in line for line in sections["Icons"])
    assert text.count("begin") == text.count("end;")


def test_workflow_builds_each_platform_on_its_own_runner() -> None:
    workflow = yaml.safe_load((REPO_ROOT / ".github/workflows/installers.yml").read_text("utf-8"))
    jobs = workflow["jobs"]
    assert {name: job["runs-on"].split("-")[0] for name, job in jobs.items()} == {
        "linux": "ubuntu",
        "windows": "windows",
        "macos": "macos",
    }
    for job in jobs.values():
        steps = job["steps"]
        assert all(("uses" in step) != ("run" in step) for step in steps)
        uploads = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
        assert len(uploads) == 1
        assert uploads[0]["with"]["if-no-files-found"] == "error"
    scripts = [s["run"] for job in jobs.values() for s in job["steps"] if "run" in s]
    assert any("installers/linux/build.sh" in s for s in scripts)
    assert any("installers/macos/build.sh" in s for s in scripts)
    assert any("installers\\windows\\verifai.iss" in s for s in scripts)


@pytest.mark.parametrize(
    ("shell", "script"),
    [
        ("bash", "linux/build.sh"),
        ("bash", "macos/build.sh"),
        ("sh", "linux/install-desktop-entry.sh"),
    ],
)
def test_shell_scripts_parse(shell: str, script: str) -> None:
    done = subprocess.run([shell, "-n", str(INSTALLERS / script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    if shutil.which("shellcheck"):
        lint = subprocess.run(["shellcheck", str(INSTALLERS / script)], capture_output=True)
        assert lint.returncode == 0, lint.stdout.decode()


def test_spec_is_python_and_bundles_both_entry_points() -> None:
    spec = (INSTALLERS / "verifai.spec").read_text("utf-8")
    ast.parse(spec)
    assert 'analysis("launch_verifai.py"' in spec
    assert 'analysis("launch_verifai_desktop.py"' in spec
    assert 'collect_dynamic_libs("llama_cpp")' in spec


@pytest.mark.parametrize("script", ["launch_verifai.py", "launch_verifai_desktop.py"])
def test_launchers_call_freeze_support_before_importing_the_app(script: str) -> None:
    tree = ast.parse((INSTALLERS / script).read_text("utf-8"))
    (main_block,) = [node for node in tree.body if isinstance(node, ast.If)]
    first, second = main_block.body[0], main_block.body[1]
    assert ast.unparse(first) == "multiprocessing.freeze_support()"
    assert isinstance(second, ast.ImportFrom)
    assert second.module is not None and second.module.startswith("verifai_desktop")


def test_desktop_entry() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(INSTALLERS / "linux" / "verifai-desktop.desktop", encoding="utf-8")
    desktop = entry["Desktop Entry"]
    assert (desktop["Type"], desktop["Exec"], desktop["Icon"]) == (
        "Application",
        "verifai-desktop",
        "verifai-desktop",
    )
    assert desktop["Terminal"] == "false"


def test_icon_files_are_well_formed() -> None:
    icons = INSTALLERS / "icons"
    ico = (icons / "verifai-desktop.ico").read_bytes()
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind, count) == (0, 1, 4)
    for i in range(count):
        _w, _h, _c, _r, _p, _bpp, size, offset = struct.unpack(
            "<BBBBHHII", ico[6 + 16 * i : 22 + 16 * i]
        )
        assert ico[offset : offset + 8] == b"\x89PNG\r\n\x1a\n"
        assert offset + size <= len(ico)
    icns = (icons / "verifai-desktop.icns").read_bytes()
    assert icns[:4] == b"icns"
    assert struct.unpack(">I", icns[4:8])[0] == len(icns)
    for size_px in (256, 512):
        png = (icons / f"verifai-desktop-{size_px}.png").read_bytes()
        assert struct.unpack(">II", png[16:24]) == (size_px, size_px)
