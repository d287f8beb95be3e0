"""The typed evaluation run of the bundled example reads back from its JSON exactly, stored or not."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from evidencedesk.config import parse_settings
from evidencedesk.desk import Desk
from evidencedesk.results.evaluation import EvalRun
from tests.support.paths import KESTREL_DOCS, KESTREL_LABELS

BM25 = {"retrieval": {"legs": [{"method": "bm25"}]}}


def as_json(run: EvalRun) -> str:
    return json.dumps(run.to_dict(), ensure_ascii=False)


def test_the_kestrel_run_round_trips_through_its_json_and_the_store(tmp_path: Path) -> None:
    with Desk(tmp_path / "store", parse_settings(BM25)) as desk:
        desk.ingest(KESTREL_DOCS)
        run = desk.evaluate(KESTREL_LABELS, methods=["tfidf"], answers="extractive", save=False)
        assert run.answers is not None and run.strategies and run.label_counts_unfiltered is not None
        assert run.suggested_floor is not None and run.labels == str(KESTREL_LABELS)
        text = as_json(run)
        back = EvalRun.from_dict(json.loads(text))
        assert as_json(back) == text  # byte for byte, key order included
        assert back.overall == run.overall and back.answers is not None
        assert back.answers.selective == run.answers.selective

        run_id = desk.save_eval_run(run)
        stored = desk.store.load_eval_run(run_id)
        assert stored is not None
        assert {k: v for k, v in stored.items() if k not in ("id", "created_at")} == json.loads(text)
        assert as_json(desk.eval_run(run_id)) == as_json(replace(run, run_id=run_id))

    response = replace(run, run_id=run_id).response()  # what eval --json prints and POST /eval returns
    assert list(response)[0] == "run_id" and response["run_id"] == run_id
    assert json.dumps({k: v for k, v in response.items() if k != "run_id"}, ensure_ascii=False) == text
