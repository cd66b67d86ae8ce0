// The search panel: one input, results as you type, keyboard first.
import { el, previewLines, resultRow } from "./render.js";

const { invoke } = window.__TAURI__.core;
const { listen } = window.__TAURI__.event;

const MODES = ["hybrid", "bm25", "semantic"];
const MODE_NAMES = { hybrid: "Hybrid", bm25: "Keywords", semantic: "Meaning" };
// Keystrokes closer together than this share one search; a keystroke after a pause
// searches at once (leading edge), so typing never waits on a timer.
const DEBOUNCE_MS = 40;
const IS_MAC = /Mac/.test(navigator.platform || navigator.userAgent);
// How long Enter waits for the results of what was just typed before it opens the row on
// screen.
const ENTER_WAITS_MS = 1000;
// Results asked for at first, and how many more each time the list is read to its end
// (Down on the last row, or scrolled to the bottom), up to MAX_TOP (src-tauri/src/state.rs
// holds the same cap).
const PAGE = 20;
const MAX_TOP = 200;
// Filters typed in the box as words of their own, the CLI's --type, --tag, --since and
// --before: `type:lore`, `tag:retry`, `since:30d`, `before:2026-01-01`.
const FILTER = /(^|\s)(type|tag|since|before):(\S+)(?=\s|$)/gu;
// A filter's name typed, its value not yet (`checklist since:`): not words to search for.
const FILTER_NAMED = /(^|\s)(type|tag|since|before):(?=\s|$)/gu;
// A date a `since:` or `before:` takes, and one on its way there (`3` of `30d`, `2026-0`).
const DATE_DONE = /^(\d+[dw]|\d{4}-\d{2}-\d{2})$/iu;
const DATE_TYPING = /^[\d-]+$/u;
// How long a date half typed waits for the next keystroke before it is searched (and,
// if it is still no date, refused): `since:3` on the way to `since:30d` never flashes an
// error, and the results on screen stay until the date is there.
const SETTLE_MS = 700;

const $ = (id) => document.getElementById(id);
const ui = {
  panel: $("panel"), query: $("query"), modes: $("modes"), progress: $("progress"),
  results: $("results"), preview: $("preview"), previewPath: $("preview-path"),
  previewLines: $("preview-lines"), previewText: $("preview-text"),
  message: $("message"), messageTitle: $("message-title"), messageText: $("message-text"),
  searchView: $("search-view"), firstRun: $("first-run"), firstRunRoot: $("first-run-root"),
  firstRunError: $("first-run-error"), notice: $("notice"), toast: $("toast"), keys: $("keys"),
  context: $("preview-context"), capture: $("capture"), captureTitle: $("capture-title"),
  captureTypes: $("capture-types"), captureError: $("capture-error"),
};

const state = {
  mode: "hybrid",
  status: null,
  hits: [],
  selected: 0,
  top: PAGE, // results asked for; PAGE more each time the list is read to its end
  more: "", // what asked for more, until the search asking for them is sent: "down" or "scroll"
  seq: 0, // bumped for every search sent; an answer is drawn only if it is still the latest
  inflight: false,
  again: false,
  timer: 0,
  lastSent: -Infinity,
  lastInputAt: 0,
  previewSeq: 0,
  previews: new Map(),
  notice: "",
  contexts: new Map(), // path -> what links to it and what is like it
  jumps: [], // the notes listed under the preview, in order: Ctrl+1..9 (Cmd) opens one
  capture: null, // while Cmd+N is open: {title, types, at}
  history: null, // earlier queries, most recent first; loaded on the first Alt+Up
  historyAt: -1, // -1: the box holds what was typed, not a history entry
  draft: "",
  pending: false, // a search waits on the debounce timer
  moved: false, // the selection was moved by hand since the box last changed
  openAfter: null, // "open" or "reveal": Enter pressed while a search was on its way
  composing: false, // an input method (Chinese, Japanese) is composing a word
  measure: false, // the next answer is timed for the end-to-end test (a keystroke's)
};

// Timings the end-to-end test reads back: keystroke -> results painted, hotkey -> panel painted.
// `failed` counts the searches refused, for the test that a date half typed never is.
const perf = (window.__brainPerf = { search: [], shown: [], failed: 0 });
// The app runs for weeks: the timings keep the latest only.
const PERF_KEPT = 500;
function record(list, entry) {
  list.push(entry);
  if (list.length > PERF_KEPT) list.shift();
}

/** Whether the results on screen may not be for what the box holds yet. */
function searching() {
  return state.inflight || state.again || state.pending;
}
// The end-to-end test waits on it: the rows it reads are for the whole query, not a prefix.
perf.searching = searching;

// ---- searching ----------------------------------------------------------------------

function schedule() {
  if (state.inflight) {
    state.again = true;
    return;
  }
  clearTimeout(state.timer);
  const now = performance.now();
  let wait = DEBOUNCE_MS - (now - state.lastSent);
  if (splitFilters(ui.query.value).halfTyped) wait = Math.max(wait, SETTLE_MS - (now - state.lastInputAt));
  if (wait <= 0) send();
  else {
    state.pending = true;
    state.timer = setTimeout(send, wait);
  }
}

/** The box's words without its filters, the filters (the last of a kind wins), and
 *  whether a date is still being typed. */
function splitFilters(query) {
  const filters = {};
  const text = query.replace(FILTER, (_, space, key, value) => {
    filters[key] = value;
    return space;
  }).replace(FILTER_NAMED, "$1");
  const halfTyped = ["since", "before"].some((k) => k in filters && !DATE_DONE.test(filters[k]) && DATE_TYPING.test(filters[k]));
  return { text: text.replace(/\s+/g, " ").trim(), filters, halfTyped };
}

async function send() {
  state.pending = false;
  const query = ui.query.value.trim();
  const seq = ++state.seq;
  const inputAt = state.lastInputAt;
  const measure = state.measure;
  state.measure = false;
  // The answer to the search that asks for more is the one to draw them by.
  const why = state.more;
  state.more = "";
  state.lastSent = performance.now();
  const { text, filters } = splitFilters(query);
  // No letter or digit yet (the `"` that starts a phrase, a lone `-`, an emoji): nothing
  // to search for; the backend would refuse it, and an error would flash while typing.
  if (!text || /^[^\p{L}\p{N}]*$/u.test(text)) {
    state.openAfter = null;
    showHits([]);
    if (text !== query) showMessage("empty", "Filters set", "Type a few words to search for among the notes they keep.");
    return;
  }
  state.inflight = true;
  try {
    const res = await invoke("search", { query: text, mode: state.mode, top: state.top, filters });
    if (seq !== state.seq) return; // a newer search (or a cleared box) won
    state.notice = res.notice || "";
    showHits(res.results, query, why);
    if (measure) afterPaint(() => record(perf.search, { query, ms: performance.now() - inputAt }));
  } catch (err) {
    perf.failed++;
    if (seq !== state.seq) return;
    state.notice = "";
    state.openAfter = null;
    showHits([]);
    if (state.mode === "semantic" && state.status && !state.status.model_installed) {
      showMessage("error", "Meaning search needs the embedding model",
        "Download it from the menu (Download Model…), or press Tab for hybrid or keyword search.");
    } else {
      // A filter the backend refused is named as the box writes it (`since:`), not as
      // the CLI's flag (`--since:`).
      showError(String(err).replace(/--(type|tag|since|before)\b:?/g, "$1:"));
    }
  } finally {
    state.inflight = false;
    if (state.again) {
      state.again = false;
      schedule();
    } else if (state.openAfter && !state.pending) {
      // Enter pressed while this search was on its way: it meant these results.
      const what = state.openAfter;
      state.openAfter = null;
      const hit = current();
      if (hit) act(what, { path: hit.path });
    }
  }
}

/** Runs `f` just after the next frame is painted (rAF runs before paint; the message after). */
function afterPaint(f) {
  requestAnimationFrame(() => {
    const ch = new MessageChannel();
    ch.port1.onmessage = f;
    ch.port2.postMessage(0);
  });
}

// ---- drawing --------------------------------------------------------------------------

function showHits(hits, query, why = "") {
  // A row picked by hand while this search was on its way stays picked when it is there.
  const picked = state.moved ? current()?.path : undefined;
  const kept = picked === undefined ? -1 : hits.findIndex((h) => h.path === picked);
  // Down on the last row asked for more: the row after it, once they are there. Scrolled
  // to the end: the list stays where it was scrolled, not at the selected row.
  const step = why === "down" && kept >= 0 && kept + 1 < hits.length ? 1 : 0;
  const scrolled = why === "scroll" ? ui.results.scrollTop : -1;
  state.hits = hits;
  state.selected = Math.max(0, kept) + step;
  ui.results.replaceChildren(...hits.map(resultRow));
  ui.query.setAttribute("aria-expanded", String(hits.length > 0));
  if (hits.length) {
    hideMessage();
    select(state.selected);
    if (scrolled >= 0) ui.results.scrollTop = scrolled;
  } else {
    ui.query.removeAttribute("aria-activedescendant");
    if (query) {
      const noModel = state.status && !state.status.model_installed;
      const other = state.mode !== "bm25" ? "Keywords mode" : noModel ? "" : "Meaning mode";
      const hint = other ? `Try fewer or different words, or ${other} (Tab).` : "Try fewer or different words.";
      showMessage("none", `No notes match “${query}”`, hint);
    } else {
      showIdle();
    }
  }
  drawFooter();
}

function showIdle() {
  const s = state.status;
  if (s && s.indexing && !s.notes) {
    showMessage("indexing", "Indexing your notes…", "Results appear as soon as the first notes are in.");
  } else if (s && s.error) {
    showMessage("error", "Something went wrong", s.error);
  } else {
    const n = s ? s.notes : 0;
    const count = `${n} ${n === 1 ? "note" : "notes"}`;
    const where = s ? ` in ${s.root}` : "";
    showMessage("empty", `Search ${count}`, `Type a few words${where}. Enter opens, Tab switches between hybrid, keyword and meaning search; type:lore, tag:retry or since:30d narrows it.`);
  }
}

function showError(text) {
  showMessage("error", "Search failed", text);
}

function showMessage(kind, title, text) {
  $("message").dataset.kind = kind;
  ui.messageTitle.textContent = title;
  ui.messageText.textContent = text;
  ui.message.hidden = false;
}

function hideMessage() {
  ui.message.hidden = true;
}

function select(i) {
  if (!state.hits.length) return;
  state.selected = Math.max(0, Math.min(i, state.hits.length - 1));
  for (const row of ui.results.children) {
    row.setAttribute("aria-selected", String(Number(row.dataset.index) === state.selected));
  }
  const row = ui.results.children[state.selected];
  if (row) {
    row.scrollIntoView({ block: "nearest" });
    ui.query.setAttribute("aria-activedescendant", row.id);
  }
  loadPreview(state.hits[state.selected]);
}

async function loadPreview(hit) {
  const seq = ++state.previewSeq;
  const key = `${hit.path}:${hit.line}`;
  ui.previewPath.textContent = hit.path;
  try {
    let passage = state.previews.get(key);
    if (!passage) {
      // The last note's text stays until this one's comes, dimmed: not this note's.
      ui.preview.classList.add("loading");
      passage = await invoke("preview", { path: hit.path, line: hit.line || 1 });
      if (state.previews.size >= 200) state.previews.clear();
      state.previews.set(key, passage);
    }
    if (seq !== state.previewSeq) return;
    ui.preview.classList.remove("loading");
    ui.previewLines.textContent = `lines ${passage.start_line}–${passage.end_line} of ${passage.total_lines}`;
    const words = ui.query.value.trim().split(/\s+/);
    ui.previewText.replaceChildren(previewLines(passage, hit.line, words));
    const hitLine = ui.previewText.querySelector(".hit");
    // Both offsets are from the same positioned box: the difference is within the text.
    const within = hitLine ? hitLine.offsetTop - ui.previewText.offsetTop : 0;
    ui.previewText.scrollTop = Math.max(0, within - 60);
  } catch (err) {
    if (seq !== state.previewSeq) return;
    ui.preview.classList.remove("loading");
    ui.previewLines.textContent = "";
    ui.previewText.replaceChildren(el("span", "error-text", String(err)));
  }
  loadContext(hit, seq);
}

/** Under the preview: the notes linking to this one, and the notes most like it. */
async function loadContext(hit, seq) {
  let ctx = state.contexts.get(hit.path);
  if (!ctx) {
    ui.context.replaceChildren();
    try {
      ctx = await invoke("context", { path: hit.path });
    } catch {
      ctx = { linked_from: [], similar: [] };
    }
    state.contexts.set(hit.path, ctx);
  }
  if (seq !== state.previewSeq) return;
  // Each note listed is a jump: the first nine by Ctrl+1..9 (Cmd on a Mac), any by a click.
  state.jumps = [];
  const mod = IS_MAC ? "⌘" : "Ctrl+";
  const item = (path, text) => {
    const n = state.jumps.push(path);
    const span = el("span", "ctx-item");
    span.dataset.jump = String(n - 1);
    span.title = `Open ${path}`;
    if (n <= 9) span.append(el("kbd", "", `${mod}${n}`), " ");
    span.append(text);
    return span;
  };
  const line = (head, items) => {
    const div = el("div", "ctx-line");
    div.append(el("span", "ctx-head", head), ...items);
    return div;
  };
  const lines = [];
  const from = [...new Set(ctx.linked_from.map((l) => l.path))]; // a note linking twice is one note
  if (from.length) {
    lines.push(line(`Linked from (${from.length})`, from.map((p) => item(p, p))));
  }
  if (ctx.similar.length) {
    lines.push(line("Like it", ctx.similar.map((n) => item(n.path, `${n.path} (${n.verdict})`))));
  }
  ui.context.replaceChildren(...lines);
}

/** Opens the `i`-th note listed under the preview, as Enter opens a result. */
function jump(i) {
  const path = state.jumps[i];
  if (path) act("open", { path });
}

// ---- capture (Cmd+N) ------------------------------------------------------------------

async function openCapture() {
  const title = ui.query.value.trim();
  if (!title) {
    toast("Type the new note's title first");
    return;
  }
  let types;
  try {
    types = await invoke("capture_types");
  } catch (err) {
    toast(String(err));
    return;
  }
  if (!types.length) {
    toast("No type folders in this brain");
    return;
  }
  state.capture = { title, types, at: 0 };
  ui.captureTitle.textContent = `New note: “${title}”`;
  ui.captureError.hidden = true;
  ui.capture.hidden = false;
  drawCapture();
}

function drawCapture() {
  const c = state.capture;
  ui.captureTypes.replaceChildren(
    ...c.types.map((t, i) => {
      const b = el("button", "", t);
      b.type = "button";
      b.setAttribute("role", "radio");
      b.setAttribute("aria-checked", String(i === c.at));
      b.dataset.index = String(i);
      return b;
    }),
  );
}

function closeCapture() {
  state.capture = null;
  ui.capture.hidden = true;
  ui.query.focus();
}

async function writeCapture() {
  const c = state.capture;
  try {
    const entry = await invoke("capture", { kind: c.types[c.at], title: c.title });
    closeCapture();
    toast(`Wrote ${entry.path}`);
  } catch (err) {
    ui.captureError.textContent = String(err);
    ui.captureError.hidden = false;
  }
}

function onCaptureKey(e) {
  const c = state.capture;
  e.preventDefault();
  switch (e.key) {
    case "ArrowLeft":
    case "ArrowUp":
      c.at = (c.at - 1 + c.types.length) % c.types.length;
      drawCapture();
      return;
    case "ArrowRight":
    case "ArrowDown":
    case "Tab":
      c.at = (c.at + 1) % c.types.length;
      drawCapture();
      return;
    case "Enter":
      writeCapture();
      return;
    case "Escape":
      closeCapture();
  }
}

function drawModes() {
  const noModel = state.status && !state.status.model_installed;
  for (const b of ui.modes.children) {
    const on = b.dataset.mode === state.mode;
    b.setAttribute("aria-checked", String(on));
    b.classList.toggle("unavailable", noModel && b.dataset.mode === "semantic");
    b.title = !noModel ? ""
      : b.dataset.mode === "semantic" ? "Needs the embedding model (tray menu → Download Model…)"
      : b.dataset.mode === "hybrid" ? "Keywords only until the embedding model is downloaded" : "";
  }
}

function drawFooter() {
  const s = state.status;
  let notice = "";
  let warn = false;
  if (s && s.error) [notice, warn] = [s.error, true];
  else if (s && s.hotkey_notice) [notice, warn] = [s.hotkey_notice, true];
  else if (s && s.open_with_notice) [notice, warn] = [s.open_with_notice, true];
  else if (s && s.backend_notice) notice = s.backend_notice;
  else if (s && !s.model_installed) notice = "Keywords only: no model yet (menu → Download Model…)";
  else if (state.notice) notice = state.notice;
  else if (s) notice = s.line;
  ui.notice.textContent = notice;
  ui.notice.classList.toggle("warn", warn);
  ui.progress.hidden = !(s && s.indexing);
}

function drawKeys() {
  const mod = IS_MAC ? "⌘" : "Ctrl+";
  const parts = [["↵", "open"], [`${mod}↵`, "reveal"], [`${mod}C`, "path"], [IS_MAC ? "⇧⌘C" : "Ctrl+⇧C", "link"], ["⇥", "mode"], [IS_MAC ? "⌥↑" : "Alt+↑", "history"], [`${mod}N`, "new"]];
  ui.keys.replaceChildren(...parts.flatMap(([k, what], i) => [i ? " · " : "", el("kbd", "", k), ` ${what}`]));
}

function applyStatus(s) {
  const wasFirstRun = state.status ? !state.status.root_exists : false;
  state.status = s;
  const firstRun = !s.root_exists;
  ui.firstRun.hidden = !firstRun;
  ui.searchView.hidden = firstRun;
  ui.modes.hidden = firstRun;
  ui.query.disabled = firstRun;
  ui.firstRunRoot.textContent = s.root;
  $("create-brain").textContent = `Create ${shortHome(s.root)}`;
  drawModes();
  drawFooter();
  if (!firstRun && !ui.query.value.trim()) showIdle();
  // The folder just made or chosen: what is typed next is a search.
  if (wasFirstRun && !firstRun) ui.query.focus();
}

function shortHome(path) {
  const m = /^(\/Users\/[^/]+|\/home\/[^/]+|\/root)(\/.*)$/.exec(path);
  return m ? `~${m[2]}` : path;
}

let toastTimer = 0;
function toast(text) {
  ui.toast.textContent = text;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (ui.toast.textContent = ""), 1800);
}

// ---- actions --------------------------------------------------------------------------

async function act(command, args, done) {
  try {
    const out = await invoke(command, args);
    if (done) done(out);
  } catch (err) {
    toast("");
    ui.notice.textContent = String(err);
    ui.notice.classList.add("warn");
  }
}

function current() {
  return state.hits[state.selected];
}

/** When the key was pressed: the event's own stamp when it is on the page clock. */
function keystrokeTime(e) {
  const now = performance.now();
  return e && e.timeStamp > 0 && e.timeStamp <= now ? e.timeStamp : now;
}

function cycleMode(step) {
  const i = MODES.indexOf(state.mode);
  state.mode = MODES[(i + step + MODES.length) % MODES.length];
  drawModes();
  toast(MODE_NAMES[state.mode]);
  changed();
  state.lastInputAt = performance.now();
  state.lastSent = -Infinity;
  schedule();
}

/** Alt+Up / Alt+Down: walk earlier queries (the recall log), as Omnisearch does. */
async function walkHistory(step) {
  if (state.history === null) {
    try {
      state.history = await invoke("history");
    } catch (err) {
      state.history = [];
      perf.historyError = String(err);
      toast(String(err));
    }
    perf.history = state.history.length; // the end-to-end test reports both when a check fails
  }
  const h = state.history;
  if (state.historyAt === -1) state.draft = ui.query.value;
  let at = state.historyAt + step;
  // Skip the entry the box already shows, so the first Alt+Up always changes something.
  if (at >= 0 && at < h.length && h[at] === ui.query.value.trim()) at += step;
  if (at < -1 || at >= h.length) return;
  state.historyAt = at;
  ui.query.value = at === -1 ? state.draft : h[at];
  ui.query.setSelectionRange(ui.query.value.length, ui.query.value.length);
  changed();
  state.lastInputAt = performance.now();
  state.lastSent = -Infinity;
  schedule();
}

/** Whether the list on screen may not be all there is: as long as what was asked (once
 *  more are asked for, the list is shorter than that until they come). */
function mayHaveMore() {
  return state.hits.length === state.top && state.top < MAX_TOP;
}

/** Asks for PAGE more results of the same search, for `why`: "down" (Down on the last row:
 *  the row after it is selected once it is there) or "scroll" (the selection stays). */
function more(why) {
  state.top = Math.min(state.top + PAGE, MAX_TOP);
  state.moved = true;
  state.more = why;
  state.lastSent = -Infinity;
  schedule();
}

/** What the box asks changed (typed, a mode, a history entry): a new search, timed, its
 *  best hit selected. */
function changed() {
  state.moved = false;
  state.top = PAGE;
  state.more = "";
  state.measure = true;
  state.openAfter = null; // an Enter pressed before meant what the box held then
}

function onKey(e) {
  // An input method's keys (Enter confirms a word, Escape drops it) are its own. WebKit
  // sends the confirming Enter after compositionend, with isComposing false: keyCode 229.
  if (e.isComposing || e.keyCode === 229 || state.composing) return;
  if (state.capture) {
    onCaptureKey(e);
    return;
  }
  // The first-run screen: Tab and Enter reach its buttons.
  if (ui.query.disabled && e.key !== "Escape") return;
  const mod = IS_MAC ? e.metaKey : e.ctrlKey;
  const hit = current();
  if (mod && (e.key === "n" || e.key === "N") && !ui.query.disabled) {
    e.preventDefault();
    openCapture();
    return;
  }
  // The digit by its key as well as its character: on a French keyboard the key of 1
  // types `&` unshifted.
  const digit = /^[1-9]$/.test(e.key) ? e.key : /^(?:Digit|Numpad)([1-9])$/.exec(e.code || "")?.[1];
  if (mod && digit && !e.shiftKey && !e.altKey && !ui.query.disabled) {
    e.preventDefault();
    jump(Number(digit) - 1);
    return;
  }
  if (e.altKey && (e.key === "ArrowUp" || e.key === "ArrowDown") && !ui.query.disabled) {
    e.preventDefault();
    walkHistory(e.key === "ArrowUp" ? 1 : -1);
    return;
  }
  switch (e.key) {
    case "ArrowDown":
    case "ArrowUp":
      e.preventDefault();
      state.moved = true;
      if (e.key === "ArrowDown" && state.selected === state.hits.length - 1 && mayHaveMore()) {
        more("down");
        return;
      }
      select(state.selected + (e.key === "ArrowDown" ? 1 : -1));
      return;
    case "Enter":
      e.preventDefault();
      // Typed fast and Enter: the results for what the box holds are still coming. A
      // search slower than a moment (the model loading) does not hold the key back.
      if (searching() && performance.now() - state.lastSent < ENTER_WAITS_MS) {
        state.openAfter = mod ? "reveal" : "open";
      } else if (hit) act(mod ? "reveal" : "open", { path: hit.path });
      return;
    case "Tab":
      e.preventDefault();
      if (!ui.query.disabled) cycleMode(e.shiftKey ? -1 : 1);
      return;
    case "Escape":
      e.preventDefault();
      state.openAfter = null;
      act("hide_panel", {});
      return;
  }
  if (mod && (e.key === "c" || e.key === "C") && hit) {
    // Plain copy of selected text keeps working: in the box, or in the preview.
    if (!e.shiftKey && ui.query.selectionStart !== ui.query.selectionEnd) return;
    if (!e.shiftKey && document.activeElement !== ui.query && String(window.getSelection() || "").trim()) return;
    e.preventDefault();
    const kind = e.shiftKey ? "wikilink" : "path";
    act("copy", { path: hit.path, kind }, (text) => toast(`Copied ${kind === "path" ? "path" : text}`));
  }
}

// ---- wiring ---------------------------------------------------------------------------

ui.query.addEventListener("input", (e) => {
  // A word an input method is still composing (pinyin, romaji) is not searched for: its
  // letters would flash "no notes match" and land in the history as searches.
  if (state.composing || e.isComposing) return;
  state.historyAt = -1;
  state.history = null; // the searches typed since the last Alt+Up join the history
  changed();
  state.lastInputAt = keystrokeTime(e);
  schedule();
});
ui.query.addEventListener("compositionstart", () => {
  state.composing = true;
});
ui.query.addEventListener("compositionend", (e) => {
  state.composing = false;
  state.historyAt = -1;
  changed();
  state.lastInputAt = keystrokeTime(e);
  schedule();
});
document.addEventListener("keydown", onKey);
ui.results.addEventListener("mousedown", (e) => {
  const row = e.target.closest(".row");
  if (row) {
    state.moved = true;
    select(Number(row.dataset.index));
  }
  e.preventDefault(); // keep the focus in the box
});
ui.results.addEventListener("scroll", () => {
  const r = ui.results;
  if (r.scrollTop + r.clientHeight >= r.scrollHeight - 2 && mayHaveMore()) more("scroll");
});
ui.results.addEventListener("dblclick", () => {
  const hit = current();
  if (hit) act("open", { path: hit.path });
});
ui.context.addEventListener("mousedown", (e) => {
  const item = e.target.closest(".ctx-item");
  if (!item) return;
  e.preventDefault(); // keep the focus in the box
  jump(Number(item.dataset.jump));
});
ui.modes.addEventListener("mousedown", (e) => {
  const b = e.target.closest("button");
  e.preventDefault();
  if (b) cycleMode(MODES.indexOf(b.dataset.mode) - MODES.indexOf(state.mode));
});
ui.captureTypes.addEventListener("mousedown", (e) => {
  const b = e.target.closest("button");
  e.preventDefault();
  if (b && state.capture) {
    state.capture.at = Number(b.dataset.index);
    writeCapture();
  }
});
/** A first-run action: its failure is said on the first-run screen, where the person looks. */
async function firstRunAct(command) {
  ui.firstRunError.hidden = true;
  try {
    const s = await invoke(command, {});
    if (s) applyStatus(s);
  } catch (err) {
    ui.firstRunError.textContent = String(err);
    ui.firstRunError.hidden = false;
    // The folder may be there by now, and the first-run screen gone with it.
    if (ui.firstRun.hidden) showMessage("error", "Could not open the brain", String(err));
  }
}
$("create-brain").addEventListener("click", () => firstRunAct("create_brain"));
$("choose-folder").addEventListener("click", () => firstRunAct("choose_folder"));

// The panel hidden by a click elsewhere: an Enter still waiting meant nothing any more.
window.addEventListener("blur", () => {
  state.openAfter = null;
});
listen("status", (e) => {
  state.contexts.clear(); // links and likenesses move as the notes do
  // And the notes' text, once a sync is over (not on every progress step of a pass).
  const before = state.status;
  if (!before || before.notes !== e.payload.notes || (before.indexing && !e.payload.indexing)) {
    state.previews.clear();
  }
  applyStatus(e.payload);
});
listen("panel-shown", (e) => {
  state.composing = false; // a composition left open when the panel hid ends with it
  state.history = null; // searches made since the panel last showed join the history
  state.historyAt = -1;
  ui.query.focus();
  ui.query.select();
  const asked = e.payload.requested_at_ms;
  afterPaint(() => {
    record(perf.shown, Date.now() - asked);
    // The results shown are from before the panel hid: notes may have changed since.
    // Searched again once the panel is on screen, so showing it never waits on that.
    if (ui.query.value.trim() && !ui.query.disabled) {
      state.previews.clear();
      state.lastSent = -Infinity;
      schedule();
    }
  });
});

drawKeys();
drawModes();
invoke("status").then(applyStatus, (err) => showError(String(err)));
ui.query.focus();
