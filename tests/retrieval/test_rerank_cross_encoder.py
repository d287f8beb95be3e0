"""CrossEncoderReranker with a tiny cross-encoder the test builds and saves itself (no download).

A two-layer BERT (hidden size 32, one output label) and a WordPiece tokenizer trained on a few
sentences are saved as a Hugging Face folder, then loaded through ``CrossEncoderReranker(path)``.
The weights are random, so the test asserts the plumbing: the same candidates come back ordered by
the model's scores, and those scores are what the model gives when called directly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sentence_transformers", reason="the cross-encoder reranker needs sentence-transformers")
pytest.importorskip("transformers", reason="building the test model needs transformers")

from evidencedesk.documents import Chunk, Location  # noqa: E402
from evidencedesk.retrieval.candidates import Part, ranked  # noqa: E402
from evidencedesk.retrieval.rerank import get_reranker  # noqa: E402
from evidencedesk.retrieval.rerank.cross_encoder import CrossEncoderReranker  # noqa: E402

pytestmark = pytest.mark.slow  # importing torch and transformers takes several seconds

QUERY = "How many days do I have to return a bike?"
TEXTS = [
    "You can return most items within 30 days of the delivery date.",
    "Stem bolts take 5 Nm on every frame size.",
    "Gift cards cannot be exchanged for cash.",
    "Stop riding the bike immediately, even if you cannot see any crack.",
    "Refunds go back to the original payment method within 5 business days.",
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator([QUERY, *TEXTS], trainers.WordPieceTrainer(vocab_size=300, special_tokens=specials))
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]", model_max_length=128,
    )  # fmt: skip
    torch.manual_seed(7)
    config = BertConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=128, num_labels=1, initializer_range=0.5,
    )  # fmt: skip
    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    BertForSequenceClassification(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def direct_scores(folder: Path, query: str, texts: list[str]) -> list[float]:
    """The model called without sentence-transformers: logits through a sigmoid."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        batch = tokenizer([query] * len(texts), texts, padding=True, truncation=True, return_tensors="pt")
        return torch.sigmoid(model(**batch).logits[:, 0]).tolist()


def test_reranks_by_the_models_own_scores(model_dir: Path) -> None:
    chunks = [Chunk(f"d{i}:c0", f"d{i}", t, location=Location(("Doc",), 1, 1)) for i, t in enumerate(TEXTS)]
    found = ranked([(c, 10.0 - i) for i, c in enumerate(chunks)], "bm25")
    reranker = CrossEncoderReranker(model_dir)
    out = reranker.rerank(QUERY, found)

    expected = direct_scores(model_dir, QUERY, [f"Doc\n{t}" for t in TEXTS])  # read after the heading line
    assert len(set(round(s, 6) for s in expected)) == len(TEXTS), "the test model should separate the texts"
    assert sorted(c.chunk.id for c in out) == sorted(c.chunk.id for c in found)
    by_id = {c.chunk.id: c for c in out}
    for i, score in enumerate(expected):
        assert by_id[f"d{i}:c0"].score == pytest.approx(score, abs=1e-5)
        assert by_id[f"d{i}:c0"].parts == (Part("bm25", i + 1, 10.0 - i),)
    assert [c.score for c in out] == sorted((c.score for c in out), reverse=True)
    assert [c.rank for c in out] == [1, 2, 3, 4, 5]
    assert out[0].source == reranker.name == f"cross-encoder:{model_dir.name}"
    assert reranker.scores(QUERY, []) == [] and reranker.rerank(QUERY, []) == []


def test_loading_by_spec_and_clear_errors(model_dir: Path, tmp_path: Path) -> None:
    assert isinstance(get_reranker(f"cross-encoder:{model_dir}"), CrossEncoderReranker)
    with pytest.raises(ValueError, match="retrieval.rerank.model"):
        CrossEncoderReranker(tmp_path / "no-such-model")
    with pytest.raises(ValueError, match="batch_size"):
        CrossEncoderReranker(model_dir, batch_size=0)
