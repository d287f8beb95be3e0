"""The extractive generator's reader: the bundled cross-encoder's scores join the answerability features,
and the sentence it scores highest leads the answer."""

from __future__ import annotations

from evidencedesk.answer.generators.answerability import FEATURES, READER_FEATURES, AnswerabilityModel
from evidencedesk.answer.generators.extractive import ExtractiveGenerator
from evidencedesk.documents import Chunk
from evidencedesk.retrieval.candidates import ranked

PASSAGE = (
    "France is a country in western Europe. Its wines are known around the world. "
    "Paris is the capital of France and its largest city. Lyon lies on the Rhone."
)
OTHER = "Germany borders France to the east. Berlin is the capital of Germany."


def context() -> list:
    chunks = [Chunk("fr:c0", "fr", PASSAGE, title="France"), Chunk("de:c0", "de", OTHER, title="Germany")]
    return ranked([(chunks[0], 2.0), (chunks[1], 1.0)], "bm25")


def test_reader_features_are_present_and_a_reader_model_decides() -> None:
    generation = ExtractiveGenerator(reader="cross-encoder").generate("What is the capital of France?", context())
    features = generation.details["features"]
    assert set(READER_FEATURES) <= set(features) and set(READER_FEATURES) <= set(FEATURES)
    assert features["ce_sentence"] > 0 and features["ce_passage"] > 0
    assert generation.details["answerability_model"] == "minilm-reader"
    assert not generation.abstained
    assert generation.answer.splitlines()[0].startswith("Paris")


def test_the_reader_can_be_switched_off() -> None:
    generation = ExtractiveGenerator(reader="embeddings").generate("What is the capital of France?", context())
    assert not set(READER_FEATURES) & set(generation.details["features"])
    assert generation.details["answerability_model"] == "minilm"


def test_the_shipped_model_has_a_reader_model_over_every_feature() -> None:
    model = AnswerabilityModel.load()
    assert set(model.for_scorer("minilm-reader").features) == set(FEATURES)
    assert not set(READER_FEATURES) & set(model.for_scorer("minilm").features)


def test_an_unanswerable_question_is_refused() -> None:
    generation = ExtractiveGenerator(reader="cross-encoder").generate("How many moons does Jupiter have?", context())
    assert generation.abstained
