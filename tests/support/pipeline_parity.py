"""Every labelled question through every path that ranks or answers, over one store and one settings.

``collect`` ranks each question with ``Desk.search``, ``Desk.evaluate`` (its per-question ranking), the
service's ``POST /search`` and the lab's ``POST /lab/search`` (the request built as ``lab.js`` builds it:
the method and legs ``/lab/options`` names as the defaults), and ``ask`` without a reranker (its first
stage); it answers each with ``Desk.ask`` and with ``Desk.evaluate(answers=...)``, and diagnoses them with
``Desk.diagnose``. The stores: the example corpus, and three FinanceBench development filings (PDFs).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from evidencedesk.config import Settings, parse_settings
from evidencedesk.desk import Desk
from evidencedesk.evaluation.answers import AnswerRecord
from evidencedesk.evaluation.labels import Label, load_labels
from evidencedesk.server.app import create_app
from evidencedesk.server.state import ServiceState
from tests.support.parity import SERVICE
from tests.support.paths import DATASETS

FINANCEBENCH = Path(os.environ.get("EVIDENCEDESK_DATASETS", str(DATASETS))) / "financebench-dev"
FILINGS = ("PEPSICO_2023Q1_EARNINGS", "JOHNSON_JOHNSON_2022Q4_EARNINGS", "FOOTLOCKER_2022_8K_dated_2022-08-19")
# a short phrase of each question's evidence page (its ``evidence_text``), as the filing's chunks hold it
PHRASES = {
    "financebench_id_00839": "Chief Executive Officer of Ulta Beauty",
    "financebench_id_00651": "reflecting growth of 3.5%",
    "financebench_id_01484": "46,363",
    "financebench_id_01474": "strong start to the year",
    "financebench_id_01476": "core constant currency EPS to increase 9 percent",
}
# the example corpus with the default hybrid (BM25 + dense, normalised fusion); the filings with BM25, one
# chunk per page and maximal marginal relevance; both search the same index in every front end
HYBRID = {"retrieval": {"k": 5, "tenant_statistics": False}}
BM25_MMR = {
    "retrieval": {"k": 5, "tenant_statistics": False, "legs": [{"method": "bm25"}], "diversity": {"method": "mmr"}}
}


def settings_of(raw: dict[str, Any]) -> Settings:
    return parse_settings(raw)


def financebench_docs(folder: Path) -> Path:
    """The three filings copied into ``folder``; skips when the data set is absent, fails instead under CI."""
    pdfs = FINANCEBENCH / "pdfs"
    if not all((pdfs / f"{name}.pdf").is_file() for name in FILINGS):
        message = f"needs the FinanceBench development filings under {FINANCEBENCH} (EVIDENCEDESK_DATASETS)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; CI is set, so they must be there", pytrace=False)
        pytest.skip(message)
    folder.mkdir(parents=True, exist_ok=True)
    for name in FILINGS:
        shutil.copyfile(pdfs / f"{name}.pdf", folder / f"{name}.pdf")
    return folder


def financebench_labels(path: Path) -> Path:
    """A labels file for the filings' questions: each question as written, a phrase of its evidence as gold."""
    rows = [json.loads(line) for line in (FINANCEBENCH / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            if row["financebench_id"] in PHRASES:
                gold = [{"evidence": PHRASES[row["financebench_id"]], "grade": 2}]
                label = {"id": row["financebench_id"], "question": row["question"], "answerable": True, "gold": gold}
                out.write(json.dumps({**label, "answer": row["answer"]}) + "\n")
    return path


def label_row(label: Label) -> dict[str, Any]:
    """A label as a line of a labels file."""
    row = {"id": label.id, "question": label.question, "tags": list(label.tags), "answerable": label.answerable}
    return {**row, "gold": [g.to_dict() for g in label.gold], "answer": label.answer}


def ids(rows: list[dict[str, Any]]) -> list[str]:
    return [r["chunk_id"] for r in rows]


def answer_of(out: dict[str, Any]) -> tuple[str, bool, list[str], list[str]]:
    """An answer as ``ask`` returns it: the text, whether it abstained, its citations and its context."""
    return out["answer"], out["abstained"], list(out["citations"]), list(out["context"])


def record_of(record: AnswerRecord) -> tuple[str, bool, list[str], list[str]]:
    """The same fields of one ``eval --answers`` record."""
    return record.answer, record.abstained, list(record.cited), list(record.context)


@dataclass
class Paths:
    """Per labelled question (in the labels' order), what each path gave."""

    questions: list[str]
    search: list[list[str]] = field(default_factory=list)
    eval: list[list[str]] = field(default_factory=list)
    http: list[list[str]] = field(default_factory=list)
    lab: list[list[str]] = field(default_factory=list)
    ask_first_stage: list[list[str]] = field(default_factory=list)
    ask: list[tuple[str, bool, list[str], list[str]]] = field(default_factory=list)
    eval_answers: list[tuple[str, bool, list[str], list[str]]] = field(default_factory=list)
    eval_findings: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    diagnosed: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    gold_found: int = 0  # questions whose gold phrase is in search's top k


def collect(store: str, settings: Settings, labels_path: Path, answer_every: int = 1) -> Paths:
    """Rank every labelled question on every path; answer and diagnose every ``answer_every``-th one
    (answering is the slow part: each answer runs the cross-encoder and the reader)."""
    labels = load_labels(labels_path)
    got = Paths([x.question for x in labels])
    asked = labels[::answer_every]
    subset = labels_path.with_name(f"{labels_path.stem}-answered.jsonl")
    subset.write_text("".join(json.dumps(label_row(x)) + "\n" for x in asked), encoding="utf-8")
    with Desk(store, settings) as desk:
        for x in labels:
            found = desk.search(x.question)
            got.search.append([c.chunk.id for c in found])
            got.gold_found += any(x.grade_of(c.chunk) == 2 for c in found)
        for x in asked:
            got.ask.append(answer_of(desk.ask(x.question, save=False).to_dict()))
            got.ask_first_stage.append([p.chunk_id for p in desk.ask(x.question, rerank="none", save=False).reranked])
        run = desk.evaluate(labels_path, save=False, unfiltered=False, answers=None)
        got.eval = [q.ranking[: q.returned] for q in run.questions]
        run = desk.evaluate(subset, save=False, unfiltered=False, answers=settings.generator.name)
        assert run.answers is not None
        got.eval_answers = [record_of(r) for r in run.answers.records]
        got.eval_findings = {r.id: [f.to_dict() for f in r.findings] for r in run.answers.records if r.findings}
        got.diagnosed = {d.question_id: [f.to_dict() for f in d.findings] for d in desk.diagnose(subset)}
    with TestClient(create_app(ServiceState(store, settings, SERVICE))) as client:
        options = client.get("/lab/options").json()
        lab_body: dict[str, Any] = {"method": options["default_method"], "k": settings.retrieval.k, "scope": {}}
        if lab_body["method"] == "hybrid":
            lab_body["legs"] = options["default_legs"]
        for q in got.questions:
            r = client.post("/search", json={"query": q})
            assert r.status_code == 200, r.text
            got.http.append(ids(r.json()))
            r = client.post("/lab/search", json={**lab_body, "query": q})
            assert r.status_code == 200, r.text
            got.lab.append(ids(r.json()["results"]))
    return got


def check(got: Paths, k: int, answer_every: int = 1) -> None:
    """Every path ranks every question alike, and ``eval --answers`` answers as ``ask`` does."""
    for n, q in enumerate(got.questions):
        assert got.search[n], f"search found nothing for {q!r}"
        assert len(got.search[n]) <= k
        assert got.eval[n] == got.search[n], f"eval ranks {q!r} otherwise than search"
        assert got.http[n] == got.search[n], f"POST /search ranks {q!r} otherwise than search"
        assert got.lab[n] == got.search[n], f"the lab ranks {q!r} otherwise than search"
    for n, q in enumerate(got.questions[::answer_every]):
        assert got.ask_first_stage[n] == got.search[n * answer_every], f"ask's first stage ranks {q!r} otherwise"
        assert got.eval_answers[n] == got.ask[n], f"eval --answers answers {q!r} otherwise than ask"
    assert got.diagnosed == got.eval_findings  # diagnose reads the same answers' traces
    assert got.gold_found > 0  # the rankings hold evidence, not only agree
    assert any(not abstained and cited for _, abstained, cited, _ in got.ask)  # answers, not only abstentions
