// DOM builders for the panel. Note text (titles, paths, snippets, previews) only ever
// becomes text nodes or textContent: nothing from a note passes through the HTML parser.

/** Builds `tag` with a class and, optionally, text. */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A snippet with «matches» as <mark> elements; unbalanced marks are shown as they are. */
export function markedText(snippet) {
  const frag = document.createDocumentFragment();
  let rest = String(snippet);
  for (;;) {
    const open = rest.indexOf("«");
    const close = open < 0 ? -1 : rest.indexOf("»", open + 1);
    if (open < 0 || close < 0) {
      if (rest) frag.append(rest);
      return frag;
    }
    if (open > 0) frag.append(rest.slice(0, open));
    frag.append(el("mark", "", rest.slice(open + 1, close)));
    rest = rest.slice(close + 1);
  }
}

/** `text` with every occurrence of one of `words` (case-insensitive) in a <mark>. */
export function highlighted(text, words) {
  const frag = document.createDocumentFragment();
  const terms = words.filter((w) => w.length > 1).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  if (!terms.length) {
    frag.append(text);
    return frag;
  }
  const re = new RegExp(terms.join("|"), "giu");
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) frag.append(text.slice(last, m.index));
    frag.append(el("mark", "", m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) frag.append(text.slice(last));
  return frag;
}

/** A stable hue per note type, so a type keeps its colour. */
export function hueOf(type) {
  const known = { lore: 32, idea: 140, "research-link": 210 };
  if (type in known) return known[type];
  let h = 0;
  for (const c of type) h = (h * 31 + c.codePointAt(0)) % 360;
  return h;
}

/** `bm25=#2 sem=#1`, with `-` where a list did not have the note. */
export function ranks(hit) {
  const r = (n) => (n ? `#${n}` : "-");
  return `bm25=${r(hit.bm25_rank)} sem=${r(hit.sem_rank)}`;
}

/** One result row. */
export function resultRow(hit, index) {
  const row = el("li", "row");
  row.id = `hit-${index}`;
  row.setAttribute("role", "option");
  row.dataset.index = String(index);
  const head = el("div", "row-head");
  const badge = el("span", "badge", hit.type);
  badge.style.setProperty("--hue", String(hueOf(hit.type)));
  head.append(badge, el("span", "title", hit.title || hit.path));
  const meta = el("div", "row-meta");
  meta.append(el("span", "path", hit.path));
  if (hit.date) meta.append(el("span", "date", hit.date));
  meta.append(el("span", "ranks", ranks(hit)));
  const snippet = el("div", "snippet");
  snippet.append(markedText(hit.snippet));
  row.append(head, meta, snippet);
  return row;
}

/** The preview's lines, numbered, with the matched line tinted and query words marked. */
export function previewLines(passage, hitLine, words) {
  const frag = document.createDocumentFragment();
  const lines = passage.text.split("\n");
  lines.forEach((text, i) => {
    const n = passage.start_line + i;
    const line = el("span", n === hitLine ? "pline hit" : "pline");
    line.append(el("span", "lno", String(n)), highlighted(text, words), "\n");
    frag.append(line);
  });
  return frag;
}
