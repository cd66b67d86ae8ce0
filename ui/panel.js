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
  capture: null, // while Cmd+N is open: {title, types, at}
  history: null, // earlier queries, most recent first; loaded on the first Alt+Up
  historyAt: -1, // -1: the box holds what was typed, not a history entry
  draft: "",
};

// Timings the end-to-end test reads back: keystroke -> results painted, hotkey -> panel painted.
const perf = (window.__brainPerf = { search: [], shown: [] });

// ---- searching ----------------------------------------------------------------------

function schedule() {
  if (state.inflight) {
    state.again = true;
    return;
  }
  clearTimeout(state.timer);
  const wait = DEBOUNCE_MS - (performance.now() - state.lastSent);
  if (wait <= 0) send();
  else state.timer = setTimeout(send, wait);
}

async function send() {
  const query = ui.query.value.trim();
  const seq = ++state.seq;
  const inputAt = state.lastInputAt;
  state.lastSent = performance.now();
  // No letter or digit yet (the `"` that starts a phrase, a lone `-`, an emoji): nothing
  // to search for; the backend would refuse it, and an error would flash while typing.
  if (!query || /^[^\p{L}\p{N}]*$/u.test(query)) {
    showHits([]);
    return;
  }
  state.inflight = true;
  try {
    const res = await invoke("search", { query, mode: state.mode });
    if (seq !== state.seq) return; // a newer search (or a cleared box) won
    state.notice = res.notice || "";
    showHits(res.results, query);
    afterPaint(() => perf.search.push({ query, ms: performance.now() - inputAt }));
  } catch (err) {
    if (seq !== state.seq) return;
    state.notice = "";
    showHits([]);
    showError(String(err));
  } finally {
    state.inflight = false;
    if (state.again) {
      state.again = false;
      schedule();
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

function showHits(hits, query) {
  state.hits = hits;
  state.selected = 0;
  ui.results.replaceChildren(...hits.map(resultRow));
  if (hits.length) {
    hideMessage();
    select(0);
  } else if (query) {
    const kw = state.mode === "bm25" ? "Meaning mode" : "Keywords mode";
    showMessage("none", `No notes match “${query}”`, `Try fewer or different words, or ${kw} (Tab).`);
  } else {
    showIdle();
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
    showMessage("empty", `Search ${count}`, `Type a few words${where}. Enter opens, Tab switches between hybrid, keyword and meaning search.`);
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
      passage = await invoke("preview", { path: hit.path, line: hit.line || 1 });
      state.previews.set(key, passage);
    }
    if (seq !== state.previewSeq) return;
    ui.previewLines.textContent = `lines ${passage.start_line}–${passage.end_line} of ${passage.total_lines}`;
    const words = ui.query.value.trim().split(/\s+/);
    ui.previewText.replaceChildren(previewLines(passage, hit.line, words));
    const hitLine = ui.previewText.querySelector(".hit");
    ui.previewText.scrollTop = hitLine ? Math.max(0, hitLine.offsetTop - 60) : 0;
  } catch (err) {
    if (seq !== state.previewSeq) return;
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
  const line = (head, items) => {
    const div = el("div", "ctx-line");
    div.append(el("span", "ctx-head", head), ...items.map((t) => el("span", "ctx-item", t)));
    return div;
  };
  const lines = [];
  const from = [...new Set(ctx.linked_from.map((l) => l.path))]; // a note linking twice is one note
  if (from.length) {
    lines.push(line(`Linked from (${from.length})`, from));
  }
  if (ctx.similar.length) {
    lines.push(line("Like it", ctx.similar.map((n) => `${n.path} (${n.verdict})`)));
  }
  ui.context.replaceChildren(...lines);
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
    b.title = noModel && b.dataset.mode !== "bm25" ? "Needs the embedding model (tray menu → Download Model…)" : "";
  }
}

function drawFooter() {
  const s = state.status;
  let notice = "";
  let warn = false;
  if (s && s.hotkey_notice) [notice, warn] = [s.hotkey_notice, true];
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
  state.lastInputAt = performance.now();
  state.lastSent = -Infinity;
  schedule();
}

function onKey(e) {
  if (e.isComposing) return;
  if (state.capture) {
    onCaptureKey(e);
    return;
  }
  const mod = IS_MAC ? e.metaKey : e.ctrlKey;
  const hit = current();
  if (mod && (e.key === "n" || e.key === "N") && !ui.query.disabled) {
    e.preventDefault();
    openCapture();
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
      select(state.selected + (e.key === "ArrowDown" ? 1 : -1));
      return;
    case "Enter":
      e.preventDefault();
      if (hit) act(mod ? "reveal" : "open", { path: hit.path });
      return;
    case "Tab":
      e.preventDefault();
      if (!ui.query.disabled) cycleMode(e.shiftKey ? -1 : 1);
      return;
    case "Escape":
      e.preventDefault();
      act("hide_panel", {});
      return;
  }
  if (mod && (e.key === "c" || e.key === "C") && hit) {
    // Plain copy of selected text in the box keeps working.
    if (!e.shiftKey && ui.query.selectionStart !== ui.query.selectionEnd) return;
    e.preventDefault();
    const kind = e.shiftKey ? "wikilink" : "path";
    act("copy", { path: hit.path, kind }, (text) => toast(`Copied ${kind === "path" ? "path" : text}`));
  }
}

// ---- wiring ---------------------------------------------------------------------------

ui.query.addEventListener("input", (e) => {
  state.historyAt = -1;
  state.lastInputAt = keystrokeTime(e);
  schedule();
});
document.addEventListener("keydown", onKey);
ui.results.addEventListener("mousedown", (e) => {
  const row = e.target.closest(".row");
  if (row) select(Number(row.dataset.index));
  e.preventDefault(); // keep the focus in the box
});
ui.results.addEventListener("dblclick", () => {
  const hit = current();
  if (hit) act("open", { path: hit.path });
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
$("create-brain").addEventListener("click", () => act("create_brain", {}, applyStatus));
$("choose-folder").addEventListener("click", () => act("choose_folder", {}, (s) => s && applyStatus(s)));

listen("status", (e) => {
  state.contexts.clear(); // links and likenesses move as the notes do
  applyStatus(e.payload);
});
listen("panel-shown", (e) => {
  state.history = null; // searches made since the panel last showed join the history
  state.historyAt = -1;
  ui.query.focus();
  ui.query.select();
  const asked = e.payload.requested_at_ms;
  afterPaint(() => perf.shown.push(Date.now() - asked));
});

drawKeys();
drawModes();
invoke("status").then(applyStatus, (err) => showError(String(err)));
ui.query.focus();
