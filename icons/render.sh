#!/usr/bin/env bash
# Renders the PNG icons from the two SVG sources. Needs rsvg-convert (Debian: librsvg2-bin).
# The PNGs are committed, so building the app does not need this.
set -euo pipefail
cd "$(dirname "$0")"
for size in 32 128 256 512; do
  rsvg-convert -w "$size" -h "$size" icon.svg -o "icon-$size.png"
done
mv icon-32.png 32x32.png
mv icon-128.png 128x128.png
mv icon-256.png 128x128@2x.png
mv icon-512.png icon.png
# 44 px = the 22 pt menu bar at 2x; Linux trays scale the same file down.
rsvg-convert -w 44 -h 44 tray.svg -o tray-template.png
rsvg-convert -w 64 -h 64 icon.svg -o tray-color.png
