"""MiniLM on ORT's fused operators: the same vectors as the packaged graph, and only that graph fused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evidencedesk.index.embedders import OnnxMiniLM, default_embedder
from evidencedesk.index.minilm_graph import GraphLayoutError, fused_minilm

TEXTS = [
    "Refunds are paid back to the original card within 14 days.",
    "a",
    "",
    "Vitamin D supplementation and fracture risk in adults over 65: a randomised trial. " * 40,  # past 512 tokens
    "ফেরত দেওয়ার সময়সীমা ৩০ দিন।",
]
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


@pytest.fixture(scope="module")
def shipped() -> OnnxMiniLM:
    return OnnxMiniLM(fused=False)


def test_the_default_embedder_runs_the_fused_graph(shipped: OnnxMiniLM) -> None:
    assert default_embedder().fused and not shipped.fused
    assert default_embedder().name == shipped.name  # the same vectors: one cache name


def test_fused_vectors_equal_the_packaged_graphs(shipped: OnnxMiniLM) -> None:
    fused = default_embedder()
    # one padded batch (lengths from 2 to 512 tokens) and each text alone
    together, reference = fused.embed(TEXTS, batch_size=8), shipped.embed(TEXTS, batch_size=8)
    assert np.abs(together - reference).max() < 1e-5
    for n, text in enumerate(TEXTS):
        assert np.abs(fused.embed([text])[0] - reference[n]).max() < 1e-5
    # and the vectors still mean something: the paraphrase is the nearest of the others
    v = fused.embed(["You get your money back on the card you paid with, in two weeks.", *TEXTS])
    assert int(np.argmax(v[1:] @ v[0])) == 0


def test_a_graph_of_another_layout_is_not_fused(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["input_ids"], ["last_hidden_state"])],
        "other",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.INT64, ["b", "s"])],
    )
    path = tmp_path / "other.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    with pytest.raises(GraphLayoutError, match="inputs"):
        fused_minilm(path)
    # inputs right, body not a BERT encoder
    graph = helper.make_graph(
        [helper.make_node("Cast", ["input_ids"], ["last_hidden_state"], to=TensorProto.FLOAT)],
        "other",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ["b", "s"]) for n in INPUTS],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["b", "s"])],
    )
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    with pytest.raises(GraphLayoutError, match="projections"):
        fused_minilm(path)
