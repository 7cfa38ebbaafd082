"""Render the app icon (resources/icons/app.svg) into the files the installers need.

Writes, beside this script: ``verifai-desktop-256.png`` and ``verifai-desktop-512.png`` (Linux
hicolor theme), ``verifai-desktop.ico`` (Windows: 16, 32, 48, 256 px) and
``verifai-desktop.icns`` (macOS: 128, 256, 512 px). The outputs are committed; run this again
only when app.svg changes. Needs ``rsvg-convert`` (Debian: librsvg2-bin).

ICO and ICNS both accept PNG images as entries (ICO since Windows Vista; ICNS types ic07, ic08
and ic09 since Mac OS X 10.5), so they are packed here without an imaging library.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
SVG = HERE.parents[1] / "verifai_desktop" / "resources" / "icons" / "app.svg"
ICO_SIZES_PX = (16, 32, 48, 256)
ICNS_TYPES = {128: b"ic07", 256: b"ic08", 512: b"ic09"}


def render_png(size_px: int) -> bytes:
    """app.svg as a square PNG of ``size_px`` pixels."""
    done = subprocess.run(
        ["rsvg-convert", "-w", str(size_px), "-h", str(size_px), str(SVG)],
        check=True,
        capture_output=True,
    )
    return done.stdout


def pack_ico(pngs: dict[int, bytes]) -> bytes:
    """An ICO file of PNG entries (ICONDIR, one ICONDIRENTRY per image, then the images)."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = len(header) + 16 * len(pngs)
    entries, images = b"", b""
    for size_px, png in sorted(pngs.items()):
        side = 0 if size_px >= 256 else size_px  # 0 means 256 in an ICONDIRENTRY
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset)
        images += png
        offset += len(png)
    return header + entries + images


def pack_icns(pngs: dict[int, bytes]) -> bytes:
    """An ICNS file of PNG entries (big-endian type + length including the 8-byte header)."""
    body = b"".join(
        ICNS_TYPES[size_px] + struct.pack(">I", len(png) + 8) + png
        for size_px, png in sorted(pngs.items())
    )
    return b"icns" + struct.pack(">I", len(body) + 8) + body


def main() -> None:
    """Render and write every icon file."""
    pngs = {size_px: render_png(size_px) for size_px in {*ICO_SIZES_PX, *ICNS_TYPES}}
    for size_px in (256, 512):
        (HERE / f"verifai-desktop-{size_px}.png").write_bytes(pngs[size_px])
    (HERE / "verifai-desktop.ico").write_bytes(pack_ico({s: pngs[s] for s in ICO_SIZES_PX}))
    (HERE / "verifai-desktop.icns").write_bytes(pack_icns({s: pngs[s] for s in ICNS_TYPES}))


if __name__ == "__main__":
    main()
