#!/usr/bin/env bash
# End-to-end test of the menu-bar app, for real: builds brain-app, starts Xvfb on a display
# of its own, tauri-driver and WebKitWebDriver, launches the app on a copy of
# examples/brain with the panel shown, and drives the panel through WebDriver (plus the
# global hotkey through xdotool). Prints `N passed, N failed`; exits non-zero on failure.
# Leaves a screenshot, the timings and the logs in target/e2e/.
#
#   tests/e2e/run.sh            # set up (apt packages, tauri-driver) if needed, build, test
#   E2E_NO_BUILD=1 tests/e2e/run.sh   # reuse the binary already built
#   E2E_PROFILE=release tests/e2e/run.sh   # release binaries: the timings a user sees (the
#                                          # suite runs debug ones, where brain's own crate,
#                                          # the query pass included, is not optimised)
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out="$repo/target/e2e"
mkdir -p "$out"
rm -f "$out"/*.png "$out"/*.log "$out/metrics.json"

"$repo/scripts/setup-app-deps.sh" || { echo "setup failed"; exit 2; }
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

target_dir=$(cd "$repo" && cargo metadata --format-version 1 --no-deps | jq -r .target_directory)
profile=${E2E_PROFILE:-debug}
case $profile in
  debug) build_flags=() ;;
  release) build_flags=(--release) ;;
  *) echo "E2E_PROFILE must be debug or release, not $profile"; exit 2 ;;
esac
app="$target_dir/$profile/brain-app"
cli="$target_dir/$profile/brain"
if [[ -z ${E2E_NO_BUILD:-} ]]; then
  echo "building brain-app and brain ($profile)..."
  (cd "$repo" && cargo build "${build_flags[@]}" -p brain-app -p brain --bin brain-app --bin brain --quiet) || { echo "build failed"; exit 2; }
fi
[[ -x $app && -x $cli ]] || { echo "no binaries in $target_dir/$profile"; exit 2; }

# ---- a brain of our own, so nothing of the user's is read or written -------------------
work=$(mktemp -d)
cp -r "$repo/examples/brain" "$work/brain"
mkdir -m 700 "$work/run"
capture="$work/captured.tsv"
touch "$capture"
cat >"$work/config.toml" <<'TOML'
[app]
hotkey = "Alt+Space"
TOML
export BRAIN_DIR="$work/brain" BRAIN_DATA_DIR="$work/data" BRAIN_CONFIG="$work/config.toml"
# The model the hybrid phase installs (below); until then the app has none.
export BRAIN_MODEL=all-minilm-l6-v2
export BRAIN_SHOW_PANEL=1 BRAIN_CAPTURE_OPEN="$capture" XDG_RUNTIME_DIR="$work/run" BRAIN_LOG=info
# A session bus that is not there: the app's single-instance check must not hand over to a
# Brain the person is running (finding no bus, it starts on its own).
export DBUS_SESSION_BUS_ADDRESS="unix:path=$work/run/no-bus"
root_real=$(realpath "$work/brain")

# ---- everything started here is killed by PID on the way out ---------------------------
pids=()
session=""
port=""
cleanup() {
  if [[ -n $session ]]; then
    curl -s --max-time 10 -X DELETE "http://127.0.0.1:$port/session/$session" >/dev/null || true
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    # tauri-driver runs in its own process group (setsid) with WebKitWebDriver and the app.
    kill -- "-${pids[i]}" 2>/dev/null || kill "${pids[i]}" 2>/dev/null || true
  done
  sleep 0.3
  for p in "${pids[@]}"; do kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null || true; done
  # The app's own log (its backend's too) stays beside the timings, for a failure's cause.
  cp "$work"/data/logs/app.log "$out/app.log" 2>/dev/null || true
  # A CI clone, and this folder with it, may be gone before anyone reads them (a session
  # that ended mid-run could not be explained that way): a failure prints the logs' ends
  # into the run's own output.
  if ((${failed:-0} > 0)); then
    for log in "$out/app.log" "$out/driver.log"; do
      [[ -s $log ]] && { echo "---- the last lines of $log"; tail -n 25 "$log"; }
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 20000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  return 1
}

display=""
for n in $(seq 90 160); do
  if [[ ! -e /tmp/.X11-unix/X$n && ! -e /tmp/.X$n-lock ]]; then display=":$n"; break; fi
done
[[ -n $display ]] || { echo "no free X display"; exit 2; }
setsid Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >"$out/xvfb.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [[ -e /tmp/.X11-unix/X${display#:} ]] && break; sleep 0.1; done
export DISPLAY="$display"

port=$(free_port) && native_port=$(free_port) || { echo "no free port"; exit 2; }
setsid tauri-driver --port "$port" --native-port "$native_port" --native-driver "$(command -v WebKitWebDriver)" \
  >"$out/driver.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -s --max-time 1 "http://127.0.0.1:$port/status" >/dev/null && break; sleep 0.1; done

# ---- WebDriver in a few functions; every call has a time limit -------------------------
base="http://127.0.0.1:$port"
wd() { # METHOD PATH [JSON]
  curl -s --max-time 30 -X "$1" -H 'Content-Type: application/json' ${3:+-d "$3"} "$base/session/$session$2"
}
js() { # SCRIPT [ARGS-JSON]: the script's return value, as JSON
  wd POST /execute/sync "$(jq -nc --arg s "$1" --argjson a "${2:-[]}" '{script:$s,args:$a}')" | jq -c .value
}
query_el=""
keys() { # TEXT: typed into the search box (WebDriver key codes allowed)
  wd POST "/element/$query_el/value" "$(jq -nc --arg t "$1" '{text:$t}')" >/dev/null
}
wait_for() { # JS-CONDITION [SECONDS]: true once it holds
  local deadline=$((SECONDS + ${2:-10}))
  while ((SECONDS < deadline)); do
    [[ $(js "return !!($1);") == true ]] && return 0
    sleep 0.1
  done
  return 1
}
type_slowly() { # TEXT: one keystroke at a time, as a person types, each answered before the next
  local t=$1 i
  for ((i = 0; i < ${#t}; i++)); do
    keys "${t:i:1}"
    sleep 0.15
  done
}
type_timed_queries() { # four queries typed key by key, with the panel's timings reset first
  js 'window.__brainPerf.search.length = 0; return true;' >/dev/null
  local q
  for q in "sqlite busy timeout" "feature flag cleanup" "tokio select cancel" "idempotency keys"; do
    clear_box
    sleep 0.2
    type_slowly "$q"
    sleep 0.3
  done
}
clear_box() { js 'const q=document.getElementById("query"); q.value=""; q.dispatchEvent(new Event("input")); return true;' >/dev/null; }
screenshot() { wd GET /screenshot | jq -r .value | base64 -d >"$1"; }
panel_mapped() { xdotool search --onlyvisible --name '^Brain$' >/dev/null 2>&1; }
panel_hidden() { ! panel_mapped; }

DOWN=$'\uE015' UP=$'\uE013' ENTER=$'\uE007' TAB=$'\uE004' ESC=$'\uE00C' CTRL=$'\uE009' SHIFT=$'\uE008' ALT=$'\uE00A' NUL=$'\uE000'

passed=0
failed=0
check() { # NAME COMMAND...
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "ok   - $name"
  else
    failed=$((failed + 1))
    echo "FAIL - $name"
    return 1
  fi
}
captured() { grep -qxF "$1" "$capture"; }

# ---- a config the app cannot read: said, and in a dialog when no terminal reads it -------
bad="$work/bad.toml"
echo 'max_file_mb = "lots"' >"$bad"
BRAIN_CONFIG="$bad" DISPLAY='' WAYLAND_DISPLAY='' timeout 20 "$app" >/dev/null 2>"$out/bad-config.err"
bad_rc=$?
check "a config it cannot read stops the app, exit 1, one line naming the file" \
  test "$bad_rc" = 1 -a "$(grep -c 'bad.toml' "$out/bad-config.err")" = 1
# From Finder or at login nobody reads stderr: the reason is a dialog (the app waits on it).
BRAIN_CONFIG="$bad" setsid "$app" >/dev/null 2>"$out/bad-config-dialog.err" &
dialog_pid=$!
pids+=("$dialog_pid")
dialog_shown() { xdotool search --onlyvisible --name '^brain could not start$' >/dev/null 2>&1; }
shown=1
for _ in $(seq 100); do dialog_shown && { shown=0; break; }; sleep 0.1; done
check "without a terminal, a dialog says why the app could not start" test "$shown" = 0
kill -- "-$dialog_pid" 2>/dev/null || kill "$dialog_pid" 2>/dev/null || true

# ---- the session -------------------------------------------------------------------------
caps=$(jq -nc --arg app "$app" '{capabilities:{alwaysMatch:{"tauri:options":{application:$app}}}}')
session=$(curl -s --max-time 60 -X POST -H 'Content-Type: application/json' -d "$caps" "$base/session" | jq -r '.value.sessionId // empty')
check "WebDriver session starts the app" test -n "$session"
if [[ -z $session ]]; then
  echo "$passed passed, $failed failed"
  exit 1
fi
query_el=$(wd POST /element '{"using":"css selector","value":"#query"}' | jq -r '.value | to_entries[0].value')

check "panel loads with the search box" wait_for 'document.getElementById("query") && window.__brainPerf' 20
check "status arrives: notes indexed" wait_for '/^Search [1-9][0-9]* notes/.test(document.getElementById("message-title").textContent)' 30
check "no model: the panel says keywords only" \
  wait_for 'document.getElementById("notice").textContent.includes("Keywords only")'
js 'window.__alerts = []; window.alert = (m) => window.__alerts.push(String(m)); return true;' >/dev/null

# The app is brain's warm backend: the CLI's answers come from it, over its socket.
cli_status=$("$cli" status --json 2>"$out/cli.log")
backend_pid=$(jq -r '.backend.pid // empty' <<<"$cli_status")
check "the CLI is answered by the app's backend" \
  test -n "$backend_pid" -a "$(readlink "/proc/$backend_pid/exe" 2>/dev/null)" = "$(realpath "$app")"
check "the backend watches the folder" test "$(jq -r '.backend.watcher.state // empty' <<<"$cli_status")" = on
cli_hit=$("$cli" search "sqlite wal checkpoint" --json 2>>"$out/cli.log" | jq -r '.results[0].path // empty')
check "a CLI search answers through the socket" test "$cli_hit" = "lore/sqlite-wal-checkpoint-starvation.md"

# Results as you type.
keys "sqlite wal checkpoint"
check "typing shows results" wait_for 'document.querySelectorAll("#results .row").length > 0'
check "best hit is the WAL checkpoint note" \
  wait_for 'document.querySelector("#results .row .path").textContent === "lore/sqlite-wal-checkpoint-starvation.md"'
check "rows show badge, title, path and ranks" \
  wait_for '[...document.querySelectorAll("#results .row")].every(r => r.querySelector(".badge").textContent && r.querySelector(".title").textContent && /^bm25=#\d+ sem=-$/.test(r.querySelector(".ranks").textContent))'
check "snippets mark the matches" wait_for 'document.querySelector("#results .row .snippet mark")'
check "preview shows the note around the match" \
  wait_for 'document.getElementById("preview-path").textContent === "lore/sqlite-wal-checkpoint-starvation.md" && document.querySelector("#preview-text .pline.hit")'

# The keyboard moves the selection; Enter asks to open the selected note.
keys "$DOWN"
check "Down selects the second row" wait_for 'document.querySelector("#results .row[aria-selected=true]").dataset.index === "1"'
keys "$DOWN$UP$DOWN"
second=$(js 'return document.querySelector("#results .row[aria-selected=true] .path").textContent;' | jq -r .)
check "preview follows the selection" wait_for "document.getElementById('preview-path').textContent === '$second'"
keys "${CTRL}c${NUL}"
sleep 0.5
check "Ctrl+C copies the selected note's path" captured "copy	$root_real/$second"
keys "${CTRL}${SHIFT}c${NUL}"
sleep 0.5
check "Ctrl+Shift+C copies a [[type/slug]] link" captured "copy	[[${second%.md}]]"
keys "$ENTER"
sleep 0.5
check "Enter asks to open the selected note (its real path)" captured "open	$root_real/$second"
sleep 0.5
check "opening hides the panel" panel_hidden
check "opening a note logs a read" \
  test "$("$cli" stats --json | jq -r '.top_read[0].path // empty')" = "$second"

# The global hotkey brings it back (xdotool presses it on the Xvfb display).
for round in 1 2 3 4 5; do
  before=$(js 'return window.__brainPerf.shown.length;')
  if panel_mapped; then keys "$ESC"; sleep 0.5; fi
  xdotool key --clearmodifiers alt+space
  wait_for "window.__brainPerf.shown.length > $before" 5 || break
  sleep 0.3
done
check "Alt+Space shows the panel again (5 times)" test "$(js 'return window.__brainPerf.shown.length;')" -ge 5
check "the panel is on screen" panel_mapped
check "the panel keeps the query, selected for retyping" wait_for 'document.activeElement.id === "query"'
keys "${CTRL}${ENTER}${NUL}"
sleep 0.5
check "Ctrl+Enter asks to reveal the note in the file manager" captured "reveal	$(realpath "$work/brain")/$(js 'return document.querySelector("#results .row[aria-selected=true] .path").textContent;' | jq -r .)"
sleep 0.3
xdotool key --clearmodifiers alt+space
wait_for 'document.activeElement.id === "query"' 5
sleep 0.5

# Tab cycles the mode; without a model, meaning search says why it cannot run.
keys "$TAB"
check "Tab switches to keyword mode" wait_for 'document.querySelector("#modes [data-mode=bm25]").getAttribute("aria-checked") === "true"'
keys "$TAB"
check "meaning mode without a model explains itself" \
  wait_for 'document.getElementById("message-title").textContent === "Meaning search needs the embedding model" && /Download Model/.test(document.getElementById("message-text").textContent)'
keys "$TAB"
check "Tab comes back to hybrid" wait_for 'document.querySelector("#modes [data-mode=hybrid]").getAttribute("aria-checked") === "true" && document.querySelectorAll("#results .row").length > 0'

# A word still being typed already finds its note by keywords (`checkp`, of checkpoint).
clear_box
keys "checkp"
check "a word half typed finds its note" \
  wait_for 'document.querySelector("#results .row .path")?.textContent === "lore/sqlite-wal-checkpoint-starvation.md"'

# Designed states: nothing found, empty box.
clear_box
keys "zqxjkv"
check "no results has its own message" wait_for 'document.getElementById("message-title").textContent.startsWith("No notes match")'
clear_box
check "an empty box invites a search" wait_for '/^Search \d+ notes$/.test(document.getElementById("message-title").textContent)'

# Alt+Up walks back through earlier queries (the recall log), Alt+Down comes forward.
keys "${ALT}${UP}${NUL}"
check "Alt+Up brings back the last query" wait_for 'document.getElementById("query").value === "zqxjkv"' ||
  echo "  (the box holds $(js 'return document.getElementById("query").value;'); history entries: $(js 'return window.__brainPerf.history ?? null;'), error: $(js 'return window.__brainPerf.historyError ?? null;'))"
keys "${ALT}${UP}${NUL}"
check "Alt+Up again: an older query, searched" \
  wait_for '!["", "zqxjkv"].includes(document.getElementById("query").value) && (document.querySelectorAll("#results .row").length > 0 || !document.getElementById("message").hidden)'
keys "${ALT}${DOWN}${NUL}"
check "Alt+Down comes forward again" wait_for 'document.getElementById("query").value === "zqxjkv"'
keys "${ALT}${DOWN}${NUL}"
check "Alt+Down once more: what was typed (nothing)" wait_for 'document.getElementById("query").value === ""' ||
  echo "  (the box holds $(js 'return document.getElementById("query").value;'))"

# A note full of markup is text, never HTML.
clear_box
keys "rendering user notes treat text as text"
check "the hostile note is found" \
  wait_for '[...document.querySelectorAll("#results .path")].some(p => p.textContent === "lore/xss-note-rendering.md")'
idx=$(js 'return [...document.querySelectorAll("#results .row")].findIndex(r => r.querySelector(".path").textContent === "lore/xss-note-rendering.md");')
for ((i = 0; i < idx; i++)); do keys "$DOWN"; done
check "its preview shows <script> as text" \
  wait_for 'document.getElementById("preview-text").textContent.includes("<script>alert('"'"'xss'"'"')</script>")' 5
check "its preview shows <img onerror> as text" \
  wait_for 'document.getElementById("preview-text").textContent.includes("<img src=x onerror=\"alert(1)\">")' 5
check "no element came from note text" \
  wait_for '!document.querySelector("#results img, #results script, #preview img, #preview script, #results [onerror], #preview [onerror]")'
check "no alert ran" wait_for 'window.__alerts.length === 0'
screenshot "$out/xss.png"

# The screenshot for the README.
clear_box
keys "retry backoff jitter"
wait_for 'document.querySelectorAll("#results .row").length > 2'
sleep 0.5
screenshot "$out/panel.png"
check "screenshot saved" test -s "$out/panel.png"

# Keystroke to results painted, one key at a time, with the backend warm.
type_timed_queries
metrics=$(js 'const p = window.__brainPerf; return {search_ms: p.search.map(s => s.ms), shown_ms: p.shown};')
echo "$metrics" | jq . >"$out/metrics.json"
median() { jq -r "$1 | sort | if length == 0 then \"n/a\" else .[(length / 2 | floor)] end | if type == \"number\" then (. * 10 | round / 10) else . end" <<<"$metrics"; }
echo "keystroke -> results painted (keywords): median $(median .search_ms) ms over $(jq '.search_ms | length' <<<"$metrics") keystrokes (max $(jq '.search_ms | max // 0 | . * 10 | round / 10' <<<"$metrics") ms)"
echo "hotkey -> panel painted:      median $(median .shown_ms) ms over $(jq '.shown_ms | length' <<<"$metrics") shows"
# Timings are reported, not asserted: a loaded CI machine must not fail a correct panel.
check "keystroke-to-results timings recorded" test "$(jq '.search_ms | length > 10' <<<"$metrics")" = true
check "hotkey-to-panel timings recorded" test "$(jq '.shown_ms | length >= 5' <<<"$metrics")" = true

# With the real test model installed (the README's test command provides it), the same
# backend turns to hybrid search without a restart, and the keystroke timings are taken again.
if [[ -n ${BRAIN_TEST_MODEL_DIR:-} ]]; then
  "$cli" model import all-minilm-l6-v2 "$BRAIN_TEST_MODEL_DIR" >"$out/model.log" 2>&1 &&
    "$cli" index >>"$out/model.log" 2>&1
  check "the model installs and the notes are embedded" test "$?" = 0
  clear_box
  keys "sqlite wal checkpoint"
  check "with the model the panel searches by meaning too" \
    wait_for '[...document.querySelectorAll("#results .ranks")].some(r => /sem=#[0-9]/.test(r.textContent))' 20
  type_timed_queries
  hybrid=$(js 'return {search_ms: window.__brainPerf.search.map(s => s.ms)};')
  echo "$hybrid" | jq . >"$out/metrics-hybrid.json"
  metrics=$hybrid
  echo "keystroke -> results painted (hybrid): median $(median .search_ms) ms over $(jq '.search_ms | length' <<<"$hybrid") keystrokes (max $(jq '.search_ms | max // 0 | . * 10 | round / 10' <<<"$hybrid") ms)"
  check "hybrid keystroke timings recorded" test "$(jq '.search_ms | length > 10' <<<"$hybrid")" = true

  # 20 results at first (meaning ranks every note: more than 20 here); Down on the last row
  # asks for 20 more and selects the 21st, and a list scrolled to its end grows the same
  # way, its selection kept.
  clear_box
  # Typed at once, the word is searched first as its first letter: the rows are read once
  # the answer for the whole word is in (the panel says when it awaits none).
  keys "notes"
  check "the panel shows 20 results at first" \
    wait_for '!window.__brainPerf.searching() && document.querySelectorAll("#results .row").length === 20' 10
  for _ in $(seq 19); do keys "$DOWN"; done
  check "Down 19 times selects the 20th" \
    wait_for 'document.querySelector("#results .row[aria-selected=true]")?.dataset.index === "19"' 5
  keys "$DOWN"
  check "Down on the last row shows more, the next row selected" \
    wait_for 'document.querySelectorAll("#results .row").length > 20 && document.querySelector("#results .row[aria-selected=true]").dataset.index === "20"' 10
  clear_box
  keys "sqlite"
  wait_for '!window.__brainPerf.searching() && document.querySelectorAll("#results .row").length === 20' 10
  js 'const r = document.getElementById("results"); r.scrollTop = r.scrollHeight; r.dispatchEvent(new Event("scroll")); return true;' >/dev/null
  check "a list scrolled to its end shows more, the selection kept" \
    wait_for 'document.querySelectorAll("#results .row").length > 20 && document.querySelector("#results .row[aria-selected=true]").dataset.index === "0"' 10
fi

# An input method's word being composed (pinyin, romaji) is not searched, and the Enter
# that confirms it opens nothing; the confirmed word is searched.
# Results are on screen first: an Enter taken as the panel's would open the top one.
clear_box
keys "sqlite wal"
wait_for 'document.querySelector("#results .row .path")?.textContent === "lore/sqlite-wal-checkpoint-starvation.md"'
sleep 0.3
opens_before=$(grep -c '^open' "$capture")
js 'const q = document.getElementById("query");
    q.dispatchEvent(new CompositionEvent("compositionstart"));
    q.value = "zqxjzhong";
    q.dispatchEvent(new InputEvent("input", {isComposing: true}));
    document.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true}));
    return true;' >/dev/null
sleep 0.5
check "a word being composed is not searched" \
  test "$(js 'return document.querySelector("#results .row .path")?.textContent === "lore/sqlite-wal-checkpoint-starvation.md" && document.getElementById("message").hidden;')" = true
check "nor opened by the Enter that confirms it" test "$(grep -c '^open' "$capture")" = "$opens_before"
js 'const q = document.getElementById("query");
    q.value = "idempotency";
    q.dispatchEvent(new CompositionEvent("compositionend"));
    return true;' >/dev/null
check "the confirmed word is searched" \
  wait_for 'document.querySelector("#results .row .path")?.textContent === "lore/idempotency-keys-payments.md"'

# Enter typed right after the words opens the best note for those words, not for the
# prefix whose results were on screen.
clear_box
sleep 0.3
keys "idempotency keys${ENTER}"
for _ in $(seq 50); do captured "open	$root_real/lore/idempotency-keys-payments.md" && break; sleep 0.1; done
check "Enter right after typing opens the best note for all the words" \
  captured "open	$root_real/lore/idempotency-keys-payments.md" ||
  echo "  (last asked: $(tail -1 "$capture"))"
xdotool key --clearmodifiers alt+space
wait_for 'document.activeElement.id === "query"' 5
sleep 0.5

# Filters typed in the box narrow the search: type:idea keeps ideas only.
clear_box
keys "checklist"
check "a search finds notes of several types" \
  wait_for 'new Set([...document.querySelectorAll("#results .row .path")].map(p => p.textContent.split("/")[0])).size > 1' 10
clear_box
keys "checklist type:idea"
check "type:idea in the box keeps ideas only" \
  wait_for 'document.querySelectorAll("#results .row").length > 0 && [...document.querySelectorAll("#results .row .path")].every(p => p.textContent.startsWith("idea/"))' 10
# Alt+Up brings the search back with its filter, not its words alone.
clear_box
keys "${ALT}${UP}${NUL}"
check "Alt+Up brings back a search with its filter" \
  wait_for 'document.getElementById("query").value === "checklist type:idea"' 10 ||
  echo "  (the box holds $(js 'return document.getElementById("query").value;'))"
clear_box
keys '"type:idea" checklist'
check "in quotes, type:idea is words, not a filter" \
  wait_for '!window.__brainPerf.searching() && (!document.getElementById("message").hidden && document.getElementById("message-title").textContent.startsWith("No notes match") || ![...document.querySelectorAll("#results .row .path")].every(p => p.textContent.startsWith("idea/")))' 10
# A date half typed waits for the rest: `since:3` on its way to `since:3000d` is not refused.
clear_box
failed_before=$(js 'return window.__brainPerf.failed;')
keys "checklist since:3"
keys "000d"
check "a date being typed is not refused on the way" \
  wait_for "!window.__brainPerf.searching() && window.__brainPerf.failed === $failed_before && document.querySelectorAll('#results .row').length > 0" 10 ||
  echo "  (refused $(js 'return window.__brainPerf.failed;') times, $failed_before before; the panel said: $(js 'return document.getElementById("message-text").textContent;'))"
clear_box
keys "checklist since:3"
check "...and refused once the typing stops" \
  wait_for 'document.getElementById("message-title").textContent === "Search failed" && /since: "3"/.test(document.getElementById("message-text").textContent)' 10
clear_box
keys "checklist since:someday"
check "a filter it cannot read is named as typed" \
  wait_for 'document.getElementById("message-title").textContent === "Search failed" && /since: "someday"/.test(document.getElementById("message-text").textContent) && !/--since/.test(document.getElementById("message-text").textContent)' 10 ||
  echo "  (the panel said: $(js 'return document.getElementById("message-text").textContent;'))"
clear_box
keys "type:idea"
check "filters alone ask for words" wait_for 'document.getElementById("message-title").textContent === "Filters set"' 10

# The preview lists the notes linking to the selected note.
clear_box
keys "dense passage retrieval"
check "the preview lists the notes that link to it" \
  wait_for 'document.getElementById("preview-path").textContent === "research-link/dense-passage-retrieval.md" && /Linked from \(1\)/.test(document.getElementById("preview-context").textContent) && document.getElementById("preview-context").textContent.includes("research-link/hnsw-malkov-yashunin.md")' 10
# Ctrl+1 (Cmd+1) opens the first note listed there, as Enter opens a result.
linked="open	$root_real/research-link/hnsw-malkov-yashunin.md"
opened() { grep -cxF "$linked" "$capture"; }
opened_before=$(opened)
keys "${CTRL}1${NUL}"
for _ in $(seq 50); do (($(opened) > opened_before)) && break; sleep 0.1; done
check "Ctrl+1 opens the first note listed under the preview" test "$(opened)" -gt "$opened_before"
xdotool key --clearmodifiers alt+space
wait_for 'document.activeElement.id === "query"' 5
sleep 0.5
# On a French keyboard the same key types `&`: the key, not the character, is the digit.
opened_before=$(opened)
wait_for 'document.getElementById("preview-context").textContent.includes("research-link/hnsw-malkov-yashunin.md")' 10
js 'document.dispatchEvent(new KeyboardEvent("keydown", {key: "&", code: "Digit1", ctrlKey: true, metaKey: true, bubbles: true})); return true;' >/dev/null
for _ in $(seq 50); do (($(opened) > opened_before)) && break; sleep 0.1; done
check "Ctrl+& on the key of 1 (AZERTY) opens it too" test "$(opened)" -gt "$opened_before"
xdotool key --clearmodifiers alt+space
wait_for 'document.activeElement.id === "query"' 5
sleep 0.5

# Ctrl+N (Cmd+N) writes a note titled as the query through brain new, and opens it.
clear_box
keys "Panel capture writes this note"
wait_for 'document.querySelectorAll("#results .row").length > 0 || !document.getElementById("message").hidden' 5
keys "${CTRL}n${NUL}"
check "Ctrl+N asks for the type, the default first" \
  wait_for '!document.getElementById("capture").hidden && document.querySelector("#capture-types [aria-checked=true]").textContent === "lore"' 5
keys "$ENTER"
# The capture asks the brain for similar notes before it writes (a debug build, sharing two
# cores with WebKit): its time is reported, not asserted; a write that never comes fails.
written="$work/brain/lore/panel-capture-writes-this-note.md"
started=$(date +%s%N)
for _ in $(seq 100); do [[ -s $written ]] && break; sleep 0.1; done
echo "Enter -> captured note on disk: $((($(date +%s%N) - started) / 1000000)) ms (polled every 100 ms)"
check "Enter writes it from the type's template" grep -q '^category: lesson$' "$written" ||
  echo "  the panel said: $(js 'return document.getElementById("capture-error").textContent;')"
# The open follows the write's answer to the panel: waited for, as the write is (checked at
# once, it raced the answer and failed once in CI with the note written).
for _ in $(seq 50); do captured "open	$root_real/lore/panel-capture-writes-this-note.md" && break; sleep 0.1; done
check "and asks to open it" captured "open	$root_real/lore/panel-capture-writes-this-note.md"

# Esc hides the panel.
keys "$ESC"
sleep 0.5
check "Esc hides the panel" panel_hidden

echo "$passed passed, $failed failed"
((failed == 0))
