// The evaluation page: run the labelled questions, show the metrics table and the report's charts.

import { api } from "./api.js";
import { $, clear, el, fmt } from "./dom.js";

function metricsTable(run) {
  const rows = Object.entries(run.overall).map(([name, st]) =>
    el("tr", {}, el("td", {}, name), el("td", {}, String(st.n)), el("td", {}, fmt(st.mean, 3)), el("td", {}, fmt(st.se, 3))),
  );
  const head = el("tr", {}, ...["metric", "n", "mean", "± SE"].map((h) => el("th", {}, h)));
  clear($("eval-table")).append(el("thead", {}, head), el("tbody", {}, ...rows));
}

async function showRun(runId, summary) {
  $("eval-info").textContent = summary;
  // The report is a self-contained page with escaped text; it is shown in a sandboxed frame (no scripts).
  $("eval-report").srcdoc = await api(`/eval/runs/${runId}/report`, undefined, "text/html");
}

async function runEval(event, showError) {
  event.preventDefault();
  showError(null);
  $("eval-btn").disabled = true;
  $("eval-info").textContent = "running…";
  try {
    const body = { method: $("eval-method").value, k: Number($("eval-k").value), size_series: $("eval-series").checked };
    const run = await api("/eval", body);
    metricsTable(run);
    const summary = `run ${run.run_id}: ${run.method}, k=${run.k}, ${run.n_questions} questions, ${run.n_failed} with findings`;
    await showRun(run.run_id, summary);
  } catch (err) {
    showError(err);
    $("eval-info").textContent = "";
  } finally {
    $("eval-btn").disabled = false;
  }
}

export function initEval(showError) {
  $("eval-form").addEventListener("submit", (event) => runEval(event, showError));
}
