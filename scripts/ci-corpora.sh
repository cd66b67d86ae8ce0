#!/usr/bin/env bash
# CI only: lays out ../shared/corpora/tldr (the read-only test corpus that sits next to a
# developer's checkout) from a checkout of tldr-pages/tldr at commit 08e345f4, the commit it
# was taken from: `pages/` flattened to its platform folders, plus LICENSE.md; 7,426 files,
# byte for byte what the tests expect. The checkout is removed afterwards.
#
#   scripts/ci-corpora.sh TLDR_CHECKOUT
set -euo pipefail
cd "$(dirname "$0")/.."

src=${1:?usage: scripts/ci-corpora.sh TLDR_CHECKOUT}
dest=../shared/corpora/tldr
if [[ -d $dest ]]; then
  echo "ci-corpora: $dest already exists; left as it is"
else
  mkdir -p "$dest"
  cp -R "$src/pages/." "$dest/"
  cp "$src/LICENSE.md" "$dest/"
fi
n=$(find "$dest" -type f -name '*.md' | wc -l | tr -d ' ')
[[ $n == 7426 ]] || { echo "ci-corpora: $dest holds $n notes, the tests expect 7426" >&2; exit 1; }
rm -rf "$src"
echo "ci-corpora: $dest ($n notes)"
