#!/usr/bin/env bash
# Build VerifAI Desktop for Linux: a PyInstaller onedir bundle (installers/verifai.spec), a
# self-contained tarball of it with a .desktop file and icon, and a .deb (dpkg-deb) that
# installs it to /opt/verifai-desktop.
#
# Usage: installers/linux/build.sh            (from anywhere; prints sizes and times at the end)
#
# Environment:
#   VERIFAI_BUILD_VENV  build virtual environment (default: dist/installers/venv). Created when
#                       missing, with llama-cpp-python compiled from source (portable AVX2 flags,
#                       8-15 min on two cores) and `.[cpu]` + PyInstaller; never PyTorch.
#   VERIFAI_LLAMA_WHEELS  a folder holding a llama-cpp-python wheel built with the same flags
#                       (`pip wheel -w DIR ...`): installed instead of compiling again.
#   VERIFAI_BUILD_OUT   output folder (default: dist/installers; dist/ is git-ignored).
#   DEB_COMPRESSION     dpkg-deb compressor (default gzip: every dpkg reads it; zstd needs
#                       dpkg >= 1.21.18, Debian 12 / Ubuntu 21.10; none: no compression, as
#                       the smoke test builds it) and DEB_COMPRESSION_LEVEL (default 1: the
#                       GGUF that is most of the package does not compress).
#   VERIFAI_BUILD_TARBALL  0: no tarball, only the .deb (the smoke test, which never opens the
#                       tarball, saves its copy and compression); default 1.
#
# Needs: python3 (3.11+, with venv), a C/C++ toolchain and cmake for llama.cpp, tar, and
# dpkg-deb and objdump (Debian: dpkg-dev).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${VERIFAI_BUILD_OUT:-$repo/dist/installers}
venv=${VERIFAI_BUILD_VENV:-$out/venv}
compression=${DEB_COMPRESSION:-gzip}
compression_level=${DEB_COMPRESSION_LEVEL:-1}
tarball=${VERIFAI_BUILD_TARBALL:-1}
pyinstaller_version=6.22.3
llama_version=0.3.36
# GGML_NATIVE=OFF: a portable build, not one tuned to the build machine's CPU (see README).
llama_cmake_args='-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON'

# The .deb's Depends (libc6 is added with the newest glibc symbol version the bundle uses). The
# bundle carries most libraries itself; PyInstaller leaves out libc, GL/EGL/GLX, libdrm, libxcb
# and Wayland's client libraries on purpose, so those come from the system (checked with ldd
# below). The X11 libraries of the main README's list are bundled from the build machine when
# it has them, and depended on as well, for a build machine that lacks some. Tesseract and its
# English data (24 MB) read scanned pages, the default OCR engine (ingest.ocr_engine; issue 28).
deb_depends='libegl1, libgl1, libglx0, libglvnd0, libdrm2, libxcb1, libwayland-client0,
libwayland-cursor0, libwayland-egl1, libxcb-cursor0, libxcb-icccm4, libxcb-keysyms1,
libxcb-image0, libxcb-render-util0, libxcb-randr0, libxcb-shape0, libxcb-xfixes0, libxcb-xkb1,
libxkbcommon-x11-0, libfontconfig1, libdbus-1-3, tesseract-ocr, tesseract-ocr-eng'

step_start=$SECONDS
step() {
    echo "== $1 ($(( SECONDS - step_start )) s since start; load: $(cut -d' ' -f1-3 /proc/loadavg))"
}

mkdir -p "$out"

step "build environment $venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
fi
if ! "$venv/bin/python" -c 'import llama_cpp' 2>/dev/null; then
    links=()
    if [ -n "${VERIFAI_LLAMA_WHEELS:-}" ]; then links=(--find-links "$VERIFAI_LLAMA_WHEELS"); fi
    CMAKE_ARGS=$llama_cmake_args "$venv/bin/pip" install --no-cache-dir "${links[@]}" \
        "llama-cpp-python==$llama_version"
fi
"$venv/bin/pip" install --quiet -e "${repo}[cpu]" "pyinstaller==$pyinstaller_version"
if "$venv/bin/python" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("torch") is None)'; then
    echo "error: $venv has PyTorch installed; build from a virtual environment without it" >&2
    exit 1
fi

version=$("$venv/bin/python" -c 'import verifai_desktop; print(verifai_desktop.__version__)')
deb_arch=$(dpkg --print-architecture)
name=verifai-desktop-$version-linux-$(uname -m)

step "PyInstaller onedir bundle"
"$venv/bin/python" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$out/pyinstaller" --workpath "$out/build" "$repo/installers/verifai.spec"
bundle=$out/pyinstaller/verifai-desktop
"$bundle/verifai" --version

step "system libraries the bundle needs"
# The frozen app puts _internal/ first on LD_LIBRARY_PATH: whatever ldd then resolves outside
# the bundle must come from a package in Depends.
internal=$bundle/_internal
find "$bundle" -type f \( -name '*.so*' -o -name verifai -o -name verifai-desktop \) -print0 \
    | LD_LIBRARY_PATH=$internal xargs -0 ldd > "$out/ldd.txt" 2>/dev/null || true
awk '/=> \// {print $3}' "$out/ldd.txt" | { grep -v "^$internal/" || true; } | sort -u \
    > "$out/system-libs.txt"
# dpkg knows a file by the path its package installed it at: /lib/... or /usr/lib/...
needed=$(while read -r lib; do
    { dpkg -S "$lib" || dpkg -S "$(realpath "$lib")" || true; } 2>/dev/null | cut -d: -f1
done < "$out/system-libs.txt" | sort -u)
declared=$(echo "$deb_depends" | tr ',\n' '  ' | tr -s ' ' '\n' | sed '/^$/d' | sort -u)
uncovered=$(comm -23 <(echo "$needed" | grep -v '^libc6$' || true) <(echo "$declared"))
if [ -n "$uncovered" ]; then
    echo "error: the bundle needs system packages missing from Depends: $uncovered" >&2
    exit 1
fi
if grep -q 'not found' "$out/ldd.txt"; then
    echo "note: not on this machine (add their packages to Depends if the app needs them):"
    grep 'not found' "$out/ldd.txt" | sort -u
fi
glibc=$({ find "$bundle" -type f \( -name '*.so*' -o -name verifai -o -name verifai-desktop \) \
    -exec objdump -T {} + 2>/dev/null || true; } | grep -o 'GLIBC_2\.[0-9]*' \
    | sort -t. -k2,2n -u | tail -1 | cut -d_ -f2)
deb_depends="libc6 (>= $glibc), $deb_depends"
echo "system packages used: $(echo "$needed" | tr '\n' ' ')(glibc >= $glibc)"

stage=$out/stage
if [ "$tarball" != 0 ]; then
    step "tarball $name.tar.gz"
    rm -rf "$stage"
    mkdir -p "$stage/$name"
    cp -a "$bundle/." "$stage/$name/"
    cp "$repo/installers/linux/verifai-desktop.desktop" "$stage/$name/"
    cp "$repo/installers/icons/verifai-desktop-256.png" "$stage/$name/verifai-desktop.png"
    cp "$repo/installers/linux/install-desktop-entry.sh" "$stage/$name/"
    # gzip -1: most of the bundle is the quantised GGUF, which no compressor shrinks.
    tar -C "$stage" -cf - "$name" | gzip -1 > "$out/$name.tar.gz"
fi

step "Debian package"
pkg=$out/deb-root
rm -rf "$pkg"
mkdir -p "$pkg/DEBIAN" "$pkg/opt" "$pkg/usr/bin" "$pkg/usr/share/applications" \
    "$pkg/usr/share/doc/verifai-desktop" \
    "$pkg/usr/share/icons/hicolor/256x256/apps" "$pkg/usr/share/icons/hicolor/512x512/apps" \
    "$pkg/usr/share/icons/hicolor/scalable/apps"
cp -a "$bundle" "$pkg/opt/verifai-desktop"
ln -s /opt/verifai-desktop/verifai "$pkg/usr/bin/verifai"
ln -s /opt/verifai-desktop/verifai-desktop "$pkg/usr/bin/verifai-desktop"
cp "$repo/installers/linux/verifai-desktop.desktop" "$pkg/usr/share/applications/"
cp "$repo/installers/icons/verifai-desktop-256.png" \
    "$pkg/usr/share/icons/hicolor/256x256/apps/verifai-desktop.png"
cp "$repo/installers/icons/verifai-desktop-512.png" \
    "$pkg/usr/share/icons/hicolor/512x512/apps/verifai-desktop.png"
cp "$repo/verifai_desktop/resources/icons/app.svg" \
    "$pkg/usr/share/icons/hicolor/scalable/apps/verifai-desktop.svg"
cp "$repo/installers/linux/copyright" "$pkg/usr/share/doc/verifai-desktop/copyright"
chmod -R u+rwX,go+rX,go-w "$pkg"
installed_kib=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
{
    echo "Package: verifai-desktop"
    echo "Version: $version"
    echo "Architecture: $deb_arch"
    echo "Maintainer: VerifAI Desktop developers <verifai-desktop@users.noreply.invalid>"
    echo "Installed-Size: $installed_kib"
    echo "Depends: $(echo "$deb_depends" | tr '\n' ' ' | tr -s ' ' | sed 's/ *$//')"
    echo "Section: science"
    echo "Priority: optional"
    echo "Description: ask questions of your own documents offline, with verified citations"
    echo " VerifAI Desktop indexes PDF, Word, PowerPoint, EPUB, Markdown and text files and"
    echo " answers questions from them with a local language model (llama.cpp). Every answer"
    echo " sentence cites its sources and is checked by an NLI verifier (ONNX Runtime)."
    echo " Self-contained: Python, Qt and the default models are bundled in /opt/verifai-desktop."
} > "$pkg/DEBIAN/control"
deb=$out/verifai-desktop_${version}_$deb_arch.deb
dpkg-deb --root-owner-group -Z"$compression" -z"$compression_level" --build "$pkg" "$deb"

rm -rf "$stage" "$pkg"  # two more copies of the bundle; the tarball and the .deb hold them

step "done"
echo "bundle:    $bundle ($(du -sh "$bundle" | cut -f1))"
if [ "$tarball" != 0 ]; then
    echo "tarball:   $out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1))"
fi
echo "deb:       $deb ($(du -h "$deb" | cut -f1), installed size $((installed_kib / 1024)) MiB)"
echo "total time: $(( SECONDS - step_start )) s"
