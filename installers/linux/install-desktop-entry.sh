#!/usr/bin/env sh
# Add VerifAI Desktop (this unpacked folder) to your desktop's application menu: writes
# ~/.local/share/applications/verifai-desktop.desktop and the icon, pointing at this folder.
# Undo: rm ~/.local/share/applications/verifai-desktop.desktop \
#          ~/.local/share/icons/hicolor/256x256/apps/verifai-desktop.png
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
mkdir -p "$data/applications" "$data/icons/hicolor/256x256/apps"
cp "$here/verifai-desktop.png" "$data/icons/hicolor/256x256/apps/verifai-desktop.png"
sed "s|^Exec=.*|Exec=\"$here/verifai-desktop\"|" "$here/verifai-desktop.desktop" \
    > "$data/applications/verifai-desktop.desktop"
echo "added $data/applications/verifai-desktop.desktop"
