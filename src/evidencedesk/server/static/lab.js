// The retrieval lab: pick or type a question, choose chunker, size, method, k and scope; search or ask.

import { api, apiKey, apiStream } from "./api.js";
import { $, clear, el } from "./dom.js";
import { initEval } from "./eval.js";
import { answerNodes, findings, renderContext, renderPassages, showChunk, timeline } from "./render.js";
import { initTraces } from "./traces.js";

let options = null;
let seen = new Map(); // chunk id -> chunk seen in the last response, when the lab re-chunked in memory

export function showError(err) {
  const box = $("error");
  box.textContent = err ? String(err.message || err) : "";
  box.hidden = !err;
}

function fill(select, values, selected) {
  clear(select).append(...values.map((v) => el("option", { value: v, selected: v === selected }, v)));
}

function scopeBoxes(values) {
  const box = clear($("scope"));
  box.append(el("legend", {}, "Scope (narrow your key's)"));
  for (const [field, list] of Object.entries(values)) {
    if (list.length === 0) continue;
    const group = el("span", { class: "group" }, el("span", { class: "muted" }, `${field}:`));
    for (const v of list) {
      group.append(el("label", { class: "check" }, el("input", { type: "checkbox", "data-field": field, value: v, checked: true }), v));
    }
    box.append(group);
  }
}

function requestScope() {
  const scope = {};
  for (const input of $("scope").querySelectorAll("input[type=checkbox]")) {
    const field = input.dataset.field;
    scope[field] ??= [];
    if (input.checked) scope[field].push(input.value);
  }
  for (const [field, list] of Object.entries(scope)) {
    if (list.length === $("scope").querySelectorAll(`input[data-field=${field}]`).length) delete scope[field];
    else if (list.length === 0) throw new Error(`scope: tick at least one value of ${field}`);
  }
  return scope;
}

function labRequest() {
  const body = { method: $("method").value, k: Number($("k").value), scope: requestScope() };
  const qid = $("question").value;
  const typed = $("query").value.trim();
  if (qid) body.question_id = qid;
  if (typed) body.query = typed;
  if (!qid && !typed) throw new Error("pick a labelled question or type a query");
  if ($("chunker").value) {
    body.chunker = { name: $("chunker").value, size: Number($("size").value), unit: $("unit").value, overlap: 0 };
  }
  if (body.method === "hybrid") {
    body.legs = [...$("legs").querySelectorAll("input:checked")].map((i) => i.value);
  }
  return body;
}

async function openChunk(id) {
  try {
    // Stored chunks are fetched from the service; re-chunked ones exist only in the last response.
    showChunk(seen.get(id) || (await api(`/chunks/${encodeURIComponent(id)}`)));
  } catch (err) {
    showError(err);
  }
}

function remember(rows, chunking) {
  seen = chunking ? new Map(rows.map((r) => [r.chunk_id, r])) : new Map();
}

function describe(out) {
  const chunking = out.chunking ? `${out.chunking.name} ${out.chunking.size} ${out.chunking.unit}` : "as stored";
  const label = out.label ? ` · labelled question ${out.label.id}` : "";
  return `${out.results.length} passage(s) for “${out.query}” · ${chunking} · ${out.n_chunks} chunks in scope${label}`;
}

async function search(event) {
  event?.preventDefault();
  showError(null);
  try {
    const out = await api("/lab/search", labRequest());
    remember(out.results, out.chunking);
    const grades = out.label ? Object.fromEntries(out.results.map((r) => [r.chunk_id, r.grade])) : null;
    renderPassages($("results"), out.results, grades, openChunk);
    $("results-info").textContent = describe(out);
    renderContext(out.context);
  } catch (err) {
    showError(err);
  }
}

async function ask() {
  showError(null);
  try {
    $("answer-panel").hidden = false;
    const growing = el("p", { class: "answer-text answer-growing" });
    clear($("answer")).append(growing);
    // the answer as it is written (text only); the validated answer with its citations replaces it
    const out = await apiStream("/lab/ask", labRequest(), (text) => growing.append(text));
    remember([...out.retrieved, ...out.context_candidates], out.chunking);
    const hasLabel = Object.keys(out.grades).length > 0;
    renderPassages($("results"), out.retrieved, hasLabel ? out.grades : null, openChunk);
    $("results-info").textContent = `${out.retrieved.length} passage(s) retrieved for “${out.query}” (${out.method})`;
    $("answer-panel").hidden = false;
    clear($("answer")).append(...answerNodes(out, openChunk));
    $("trace-id").textContent = out.trace_id;
    clear($("timeline")).append(...timeline(out.timings));
    clear($("findings")).append(...findings(out.findings));
    renderContext({ text: out.prompt, context: out.context, tokens: out.context_tokens, dropped: out.dropped });
    $("context-info").textContent += " · the whole prompt the generator was sent";
  } catch (err) {
    showError(err);
  }
}

async function load() {
  showError(null);
  try {
    options = await api("/lab/options");
    $("caller").textContent = `as ${options.caller}`;
    // the settings' method and legs (a hybrid by default), so the lab ranks as search, ask and eval do
    fill($("method"), options.methods, options.default_method);
    fill($("eval-method"), options.methods, options.default_method);
    fill($("unit"), options.units, options.default_chunking?.unit || "words");
    clear($("chunker")).append(el("option", { value: "" }, "as stored"), ...options.chunkers.map((c) => el("option", { value: c }, c)));
    if (options.default_chunking) $("size").value = options.default_chunking.size;
    clear($("legs")).append(
      el("legend", {}, "Hybrid legs"),
      ...options.legs.map((leg) =>
        el("label", { class: "check" }, el("input", { type: "checkbox", value: leg, checked: options.default_legs.includes(leg) }), leg),
      ),
    );
    $("legs").hidden = $("method").value !== "hybrid";
    scopeBoxes(options.values);
    const questions = await api("/lab/questions");
    clear($("question")).append(
      el("option", { value: "" }, "(type your own below)"),
      ...questions.map((q) => el("option", { value: q.id }, `${q.id} · ${q.question}`)),
    );
  } catch (err) {
    showError(err);
  }
}

function showView(id) {
  for (const view of document.querySelectorAll(".view")) view.hidden = view.id !== id;
  for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("active", tab.dataset.view === id);
}

document.addEventListener("DOMContentLoaded", () => {
  $("api-key").value = apiKey.get();
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    apiKey.set($("api-key").value.trim());
    load();
  });
  for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => showView(tab.dataset.view));
  $("controls").addEventListener("submit", search);
  $("ask-btn").addEventListener("click", ask);
  $("method").addEventListener("change", () => ($("legs").hidden = $("method").value !== "hybrid"));
  $("question").addEventListener("change", () => ($("query").value = ""));
  initEval(showError);
  initTraces(showError, openChunk);
  load();
});
