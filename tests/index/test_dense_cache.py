"""The embedding cache: a hit never reaches the model; re-indexing unchanged text embeds nothing."""

from __future__ import annotations

import numpy as np
import pytest

from evidencedesk.index.embedding_cache import EmbeddingCache, embed_cached, text_hash
from tests.support.embedders import CountingEmbedder

TEXTS = ["Refunds take 14 days.", "Store hours are 9 to 5.", "Torque the nut to 45 Nm.", "Refunds take 14 days."]


def test_only_misses_are_embedded_and_results_match(tmp_path) -> None:
    counting = CountingEmbedder()
    with EmbeddingCache(tmp_path / "emb.sqlite") as cache:
        first = embed_cached(counting, TEXTS, cache)
        assert counting.texts_embedded == 3  # the repeated text is embedded once
        assert cache.count(counting.name) == 3
        second = embed_cached(counting, TEXTS, cache)
        assert counting.texts_embedded == 3 and counting.calls == 1  # all hits: the model is not called
        np.testing.assert_array_equal(first, second)
        np.testing.assert_allclose(first, counting.inner.embed(TEXTS), atol=1e-6)
        embed_cached(counting, [*TEXTS, "A new sentence about gift cards."], cache)
        assert counting.texts_embedded == 4


def test_cache_survives_reopening_and_is_keyed_by_model(tmp_path) -> None:
    path = tmp_path / "emb.sqlite"
    counting = CountingEmbedder()
    with EmbeddingCache(path) as cache:
        embed_cached(counting, TEXTS[:2], cache)
    with EmbeddingCache(path) as cache:
        again = CountingEmbedder()
        embed_cached(again, TEXTS[:2], cache)
        assert again.texts_embedded == 0
        other_model = CountingEmbedder(name="another-model")
        embed_cached(other_model, TEXTS[:2], cache)
        assert other_model.texts_embedded == 2  # another model's vectors are never reused
        found = cache.get_many(counting.name, [text_hash(TEXTS[0]), text_hash("never stored")], counting.dim)
        assert set(found) == {text_hash(TEXTS[0])}


def test_cache_validation(tmp_path) -> None:
    with pytest.raises(ValueError, match="directory"):
        EmbeddingCache(tmp_path)
    with EmbeddingCache(tmp_path / "c.sqlite") as cache, pytest.raises(ValueError, match="rows"):
        cache.put_many("m", ["a", "b"], np.zeros((1, 4), np.float32))
    counting = CountingEmbedder()
    assert embed_cached(counting, [], None).shape == (0, 384)


class FailingAfter(CountingEmbedder):
    """The real embedder, failing once it has embedded ``limit`` texts (an interrupted run)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def embed(self, texts: list[str], batch_size: int = 32, progress: bool = False) -> np.ndarray:
        if self.texts_embedded + len(texts) > self.limit:
            raise KeyboardInterrupt
        return super().embed(texts, batch_size, progress)


def test_an_interrupted_run_keeps_the_blocks_already_embedded(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import evidencedesk.index.embedding_cache as module

    monkeypatch.setattr(module, "_EMBED_BLOCK", 2)
    texts = [f"Sentence number {i} about refunds." for i in range(6)]
    with EmbeddingCache(tmp_path / "emb.sqlite") as cache:
        with pytest.raises(KeyboardInterrupt):
            embed_cached(FailingAfter(limit=4), texts, cache)
        assert cache.count() == 4  # two blocks of two were stored before the interruption
        resumed = CountingEmbedder()
        embed_cached(resumed, texts, cache, progress=True)
        assert resumed.texts_embedded == 2


def test_vectors_of_the_256_token_model_are_reused_for_texts_that_fit_both(tmp_path) -> None:
    """Reading up to 512 tokens gives the same vector as reading up to 256 for a text of at most 256
    tokens: an upgraded store embeds only its long chunks again."""
    from evidencedesk.index.embedders import MINILM_NAME, default_embedder, minilm

    class Counting(CountingEmbedder):
        same_vectors_name = MINILM_NAME

        def fitting(self, texts: list[str]) -> list[int]:
            return self.inner.fitting(texts)

    short, long_text = "Refunds take 14 days.", "money " * 300 + "end"  # 5 and 303 tokens
    old = minilm(256)
    with EmbeddingCache(tmp_path / "emb.sqlite") as cache:
        embed_cached(old, [short, long_text], cache)
        assert cache.count(MINILM_NAME) == 2
        counting = Counting()
        assert counting.name == default_embedder().name != MINILM_NAME
        vectors = embed_cached(counting, [short, long_text], cache)
        assert counting.texts_embedded == 1  # only the long text: the short one's vector was reused
        assert cache.count(counting.name) == 2
        np.testing.assert_allclose(vectors, default_embedder().embed([short, long_text]), atol=1e-4)
        assert not np.allclose(vectors[1], old.embed([long_text])[0], atol=1e-3)  # the long one differs
