// Rendering of passages, answers, traces and chunks. Document text is inserted as text only.

import { $, clear, el, fmt, highlighted } from "./dom.js";

const STAGES = ["rewrite", "retrieval", "rerank", "context", "generation", "validation"];
const GRADE_TEXT = { 2: "labelled relevant: answers", 1: "labelled relevant: context", 0: "not labelled relevant" };

// Where a chunk is: its page(s) when its source has pages (a PDF), else its lines.
export function place(loc) {
  const pages = loc.pages || [];
  if (pages.length) {
    const first = pages[0], last = pages[pages.length - 1];
    return first === last ? `page ${first}` : `pages ${first}–${last}`;
  }
  return loc.first_line === loc.last_line ? `line ${loc.first_line}` : `lines ${loc.first_line}–${loc.last_line}`;
}

function where(row) {
  const loc = row.location || {};
  const heading = (loc.heading_path || []).join(" › ") || "(top)";
  return `${row.source_path || row.doc_id} · ${place(loc)} · ${heading}`;
}

// The parts a score was made from, for its tooltip: each leg's rank and raw score.
function scoreParts(row) {
  const parts = row.parts || [];
  if (!parts.length) return "";
  return parts.map((p) => `${p.source}: rank ${p.rank}, raw score ${fmt(p.score)}`).join("\n");
}

function legRanks(row) {
  if (!row.parts || row.parts.length < 2) return null;
  const ranks = row.parts.map((p) => `${p.source} #${p.rank}`).join(" · ");
  return el("span", { class: "legs" }, ranks);
}

// One ranked passage. `grade` is null when no labelled question is selected.
export function passage(row, grade, onOpen) {
  const badge =
    grade === null || grade === undefined
      ? null
      : el("span", { class: `badge grade-${grade}` }, GRADE_TEXT[grade] ?? `grade ${grade}`);
  return el(
    "li",
    { class: "passage", "data-chunk-id": row.chunk_id, "data-grade": grade ?? "" },
    el(
      "div",
      { class: "passage-head" },
      el("span", { class: "rank" }, `#${row.rank}`),
      el("button", { type: "button", class: "link", onclick: () => onOpen(row.chunk_id) }, row.chunk_id),
      el("span", { class: "score", title: scoreParts(row) || null }, `score ${fmt(row.score)}`),
      legRanks(row),
      badge,
    ),
    el("div", { class: "where muted" }, `${row.title} — ${where(row)}`),
    el("p", { class: "text" }, ...highlighted(row.text, row.shared_words)),
    row.shared_words && row.shared_words.length
      ? el("div", { class: "shared muted" }, `shared words: ${row.shared_words.join(", ")}`)
      : null,
  );
}

export function renderPassages(list, rows, grades, onOpen) {
  clear(list).append(...rows.map((row) => passage(row, grades ? grades[row.chunk_id] ?? 0 : null, onOpen)));
}

export function renderContext(context) {
  $("context").textContent = context.text;
  $("context-info").textContent = `${context.context.length} chunk(s), ${context.tokens} tokens`;
  clear($("dropped")).append(
    ...context.dropped.map((d) => el("li", {}, `dropped ${d.chunk_id}: ${d.reason}${d.detail ? " — " + d.detail : ""}`)),
  );
}

// The answer with each [chunk id] it cites turned into a button that opens the chunk.
export function answerNodes(out, onOpen) {
  if (out.abstained) {
    return [el("p", { class: "abstained" }, el("strong", {}, "Abstained. "), out.abstain_reason || out.answer || "")];
  }
  const cited = new Set(out.citations || []);
  const nodes = [];
  const text = out.answer || "";
  let last = 0;
  for (const m of text.matchAll(/\[([^\[\]]+)\]/g)) {
    const ids = m[1].split(/\s*,\s*/);
    if (!ids.every((id) => cited.has(id))) continue;
    nodes.push(text.slice(last, m.index));
    for (const id of ids) {
      nodes.push(el("button", { type: "button", class: "citation", "data-chunk-id": id, onclick: () => onOpen(id) }, id));
    }
    last = m.index + m[0].length;
  }
  nodes.push(text.slice(last));
  return [el("p", { class: "answer-text" }, ...nodes)];
}

export function timeline(timings) {
  const stages = STAGES.filter((s) => s in timings).concat(Object.keys(timings).filter((s) => !STAGES.includes(s)));
  const longest = Math.max(...stages.map((s) => timings[s]), 0.001);
  return stages.map((stage) => {
    const bar = el("span", { class: "bar" });
    bar.style.width = `${Math.max(0.5, (100 * timings[stage]) / longest)}%`;
    return el(
      "div",
      { class: "stage", "data-stage": stage },
      el("span", { class: "stage-name" }, stage),
      el("span", { class: "track" }, bar),
      el("span", { class: "ms" }, `${timings[stage].toFixed(1)} ms`),
    );
  });
}

export function findings(list) {
  if (!list || list.length === 0) return [el("li", { class: "muted" }, "no findings")];
  return list.map((f) => el("li", {}, el("strong", {}, `${f.stage}/${f.label} `), f.detail));
}

export function showChunk(chunk) {
  $("chunk-title").textContent = `${chunk.id || chunk.chunk_id} — ${chunk.title || ""}`;
  const meta = chunk.metadata || {};
  const source = chunk.source_path || chunk.source || chunk.doc_id; // a candidate's `source` is its searcher
  $("chunk-where").textContent = `${where({ ...chunk, source_path: source })} · ${meta.status}, ${meta.audience}, ${meta.lang}`;
  $("chunk-text").textContent = chunk.parent_text || chunk.text;
  const dialog = $("chunk-view");
  if (!dialog.open) dialog.showModal();
}
