// Recent traces the key may see; opening one shows its answer, timeline and findings.

import { api } from "./api.js";
import { $, clear, el } from "./dom.js";
import { answerNodes, findings, timeline } from "./render.js";

async function openTrace(id, showError, openChunk) {
  try {
    const t = await api(`/traces/${encodeURIComponent(id)}`);
    clear($("trace-detail")).append(
      el("h2", {}, t.query),
      el("p", { class: "muted" }, `trace ${t.trace_id} · ${t.method} · context ${t.context.join(", ") || "empty"}`),
      ...answerNodes(t, openChunk),
      el("div", { class: "timeline" }, ...timeline(t.timings || {})),
      el("ul", { class: "findings" }, ...findings(t.findings)),
    );
  } catch (err) {
    showError(err);
  }
}

async function loadTraces(showError, openChunk) {
  try {
    const list = await api("/traces?limit=30");
    clear($("trace-list")).append(
      ...list.map((t) =>
        el(
          "li",
          {},
          el("button", { type: "button", class: "link", onclick: () => openTrace(t.trace_id, showError, openChunk) }, t.query),
          el("span", { class: "muted" }, ` ${t.abstained ? "abstained" : "answered"} · ${t.method}`),
        ),
      ),
    );
    if (list.length === 0) $("trace-list").append(el("li", { class: "muted" }, "no traces yet: ask a question"));
  } catch (err) {
    showError(err);
  }
}

export function initTraces(showError, openChunk) {
  const tab = document.querySelector('.tab[data-view="traces-view"]');
  tab.addEventListener("click", () => loadTraces(showError, openChunk));
}
