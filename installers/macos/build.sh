#!/usr/bin/env bash
# Build "VerifAI Desktop.app" and a drag-to-Applications .dmg on macOS 11+.
#
# Usage: installers/macos/build.sh   (on a Mac with Xcode command line tools, cmake, python3.11+)
#
# The app is built for the architecture of the machine (arm64 on Apple silicon, x86_64 on
# Intel); llama.cpp uses Metal on Apple silicon. PyInstaller signs the bundle ad hoc (required
# to run on arm64); a release for other Macs must be signed with a Developer ID and notarised:
#   codesign --deep --force --options runtime --sign "Developer ID Application: ..." "$app"
#   xcrun notarytool submit "$dmg" --keychain-profile ... --wait && xcrun stapler staple "$dmg"
#
# Environment: VERIFAI_BUILD_VENV, VERIFAI_BUILD_OUT as in installers/linux/build.sh.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${VERIFAI_BUILD_OUT:-$repo/dist/installers}
venv=${VERIFAI_BUILD_VENV:-$out/venv}
pyinstaller_version=6.22.3
llama_version=0.3.36

mkdir -p "$out"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
fi
if ! "$venv/bin/python" -c 'import llama_cpp' 2>/dev/null; then
    # GGML_NATIVE=OFF: portable to other Macs of the same architecture (Metal stays on).
    CMAKE_ARGS='-DGGML_NATIVE=OFF' "$venv/bin/pip" install --no-cache-dir "llama-cpp-python==$llama_version"
fi
"$venv/bin/pip" install --quiet -e "${repo}[cpu]" "pyinstaller==$pyinstaller_version"

version=$("$venv/bin/python" -c 'import verifai_desktop; print(verifai_desktop.__version__)')
"$venv/bin/python" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$out/pyinstaller" --workpath "$out/build" "$repo/installers/verifai.spec"
app="$out/pyinstaller/VerifAI Desktop.app"
# Both executables are in Contents/MacOS; the command line one is for a Terminal or a symlink:
#   ln -s "/Applications/VerifAI Desktop.app/Contents/MacOS/verifai" /usr/local/bin/verifai
"$app/Contents/MacOS/verifai" --version

stage="$out/dmg-stage"
rm -rf "$stage"
mkdir -p "$stage"
cp -R "$app" "$stage/"
ln -s /Applications "$stage/Applications"
dmg="$out/verifai-desktop-$version-macos-$(uname -m).dmg"
hdiutil create -volname "VerifAI Desktop" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$dmg"
echo "app: $app ($(du -sh "$app" | cut -f1))"
echo "dmg: $dmg ($(du -h "$dmg" | cut -f1))"
