"""MiniLM rebuilt on ONNX Runtime's fused BERT operators, from the packaged model's own weights.

The packaged graph (all-MiniLM-L6-v2 exported from PyTorch, int8 weights with a scale per output
channel) spells every layer out in about 60 small operators: reshapes, transposes, the mask's
``Where``/``IsNaN`` guards, GELU as five arithmetic steps. ONNX Runtime's optimiser does not
recognise that attention pattern, so a short query pays one thread-pool round per operator.
``fused_minilm`` writes the same network with ORT's contrib operators (``EmbedLayerNormalization``,
``Attention`` with one packed QKV product, ``SkipLayerNormalization``, ``BiasGelu``): six operators
per layer. The weights stay the packaged int8 tensors and the nodes that dequantise them (copied as
they are, plus a ``Concat`` packing Q, K and V), which ORT folds into constants when it loads the
graph, as it does for the original; the vectors agree with the original graph's to about 1e-7.

Only a graph with this layout is rebuilt: anything else (another export, another model) makes
``fused_minilm`` raise ``GraphLayoutError`` and the caller runs the graph as it is.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from evidencedesk.errors import GraphLayoutError

if TYPE_CHECKING:
    import numpy as np
    from onnx import GraphProto, NodeProto, TensorProto

_LAYER = re.compile(
    r"(?:^|\.)encoder\.layer\.(\d+)\."
    r"(attention\.self\.query|attention\.self\.key|attention\.self\.value|attention\.output\.dense|"
    r"intermediate\.dense|output\.dense)\.bias$"
)
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_FOLDED = ("Cast", "Mul")  # the ops that turn stored int8 weights into float ones
OUTPUT = "last_hidden_state"
MS = "com.microsoft"


class _Constants:
    """The graph's constant tensors: initializers and the outputs of ``Cast``/``Mul`` nodes whose
    inputs are all constant (the weights' dequantisation), with the nodes that make them."""

    def __init__(self, graph: GraphProto) -> None:
        self.initializers = {i.name: i for i in graph.initializer}
        self.makers: dict[str, NodeProto] = {}
        self.shapes: dict[str, tuple[int, ...]] = {i.name: tuple(i.dims) for i in graph.initializer}
        for node in graph.node:
            if node.op_type in _FOLDED and all(i in self.shapes for i in node.input):
                self.makers[node.output[0]] = node
                shapes = [self.shapes[i] for i in node.input]
                self.shapes[node.output[0]] = max(shapes, key=lambda s: (len(s), s))  # the broadcast shape

    def __contains__(self, name: str) -> bool:
        return name in self.shapes

    def copy(self, name: str, nodes: list[NodeProto], inits: dict[str, TensorProto]) -> str:
        """Copy ``name`` and what makes it into the new graph (``nodes``, ``inits``); returns ``name``."""
        if name in inits or any(name in n.output for n in nodes):
            return name
        if name in self.initializers:
            inits[name] = self.initializers[name]
            return name
        maker = self.makers[name]
        for source in maker.input:
            self.copy(source, nodes, inits)
        nodes.append(maker)
        return name

    def find(self, suffix: str) -> str:
        names = [n for n in self.shapes if n == suffix or n.endswith("." + suffix)]
        if len(names) != 1:
            raise GraphLayoutError(f"expected one constant named *{suffix}, found {len(names)}")
        return names[0]


def _head_size(graph: GraphProto, const: _Constants, query_out: str) -> int:
    """The per-head width: the last entry of the shape the query projection is reshaped to."""
    from onnx import numpy_helper

    def value(name: str) -> np.ndarray | None:
        found = const.initializers.get(name)
        return None if found is None else numpy_helper.to_array(found).reshape(-1)

    producers = {o: n for n in graph.node for o in n.output}
    for node in graph.node:
        if node.op_type != "Reshape" or node.input[0] != query_out:
            continue
        shape = value(node.input[1])
        if shape is not None and shape.size == 4:
            return int(shape[-1])
        concat = producers.get(node.input[1])
        if concat is not None and concat.op_type == "Concat":
            last = value(concat.input[-1])
            if last is not None and last.size == 1:
                return int(last[0])
    raise GraphLayoutError("no reshape of the query projection into heads")


def _epsilon(graph: GraphProto) -> float:
    from onnx import helper

    found = {
        float(helper.get_attribute_value(a))
        for n in graph.node
        if n.op_type == "LayerNormalization"
        for a in n.attribute
        if a.name == "epsilon"
    }
    if len(found) != 1:
        raise GraphLayoutError(f"expected one LayerNorm epsilon, found {sorted(found)}")
    return found.pop()


def _projections(graph: GraphProto, const: _Constants) -> tuple[dict[int, dict[str, tuple[str, str]]], str]:
    """Each layer's six projections as ``{layer: {role: (weight, bias)}}``: the MatMul whose output a
    named bias is added to; and the output of layer 0's query projection (bias added)."""
    consumers: dict[str, list[NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    layers: dict[int, dict[str, tuple[str, str]]] = {}
    query_out = ""
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in const:
            continue
        adds = [n for n in consumers.get(node.output[0], []) if n.op_type == "Add"]
        biases = [(a, i) for a in adds for i in a.input if i in const and _LAYER.search(i)]
        if len(biases) != 1:
            continue
        add, bias = biases[0]
        match = _LAYER.search(bias)
        assert match is not None
        layer, role = int(match.group(1)), match.group(2)
        layers.setdefault(layer, {})[role] = (node.input[1], bias)
        if layer == 0 and role == "attention.self.query":
            query_out = add.output[0]
    if not layers or sorted(layers) != list(range(len(layers))) or any(len(r) != 6 for r in layers.values()):
        raise GraphLayoutError("the encoder layers' six projections were not all found")
    return layers, query_out


def fused_minilm(model_path: str | Path) -> bytes:
    """The serialized fused graph of the BERT encoder at ``model_path`` (inputs ``input_ids``,
    ``attention_mask``, ``token_type_ids`` as int64, output ``last_hidden_state``)."""
    import onnx
    from onnx import TensorProto, helper

    graph = onnx.load(str(model_path)).graph
    if {i.name for i in graph.input} != set(_INPUTS):
        raise GraphLayoutError(f"inputs {[i.name for i in graph.input]}, expected {list(_INPUTS)}")
    const = _Constants(graph)
    layers, query_out = _projections(graph, const)
    word = const.find("embeddings.word_embeddings.weight")
    hidden = const.shapes[word][-1]
    head = _head_size(graph, const, query_out)
    if head < 1 or hidden % head:
        raise GraphLayoutError(f"head size {head} does not divide the hidden size {hidden}")
    eps = _epsilon(graph)

    nodes: list[NodeProto] = []
    inits: dict[str, TensorProto] = {}

    def use(name: str) -> str:
        return const.copy(name, nodes, inits)

    def layer_norm(prefix: str) -> list[str]:
        return [use(const.find(prefix + ".weight")), use(const.find(prefix + ".bias"))]

    for name in _INPUTS:
        nodes.append(helper.make_node("Cast", [name], [name + "_32"], to=TensorProto.INT32))
    embeddings = [use(const.find(f"embeddings.{t}_embeddings.weight")) for t in ("word", "position", "token_type")]
    embed_norm = layer_norm("embeddings.LayerNorm")
    nodes.append(
        helper.make_node(
            "EmbedLayerNormalization",
            ["input_ids_32", "token_type_ids_32", *embeddings, *embed_norm, "attention_mask_32"],
            ["h_embed", "mask_index"],
            domain=MS,
            epsilon=eps,
        )
    )
    x = "h_embed"
    for n in range(len(layers)):
        p, at = layers[n], f"encoder.layer.{n}."
        qkv = [p[f"attention.self.{r}"] for r in ("query", "key", "value")]
        nodes.append(helper.make_node("Concat", [use(w) for w, _ in qkv], [f"qkv_w{n}"], axis=1))
        nodes.append(helper.make_node("Concat", [use(b) for _, b in qkv], [f"qkv_b{n}"], axis=0))
        nodes.append(
            helper.make_node(
                "Attention",
                [x, f"qkv_w{n}", f"qkv_b{n}", "mask_index"],
                [f"att{n}"],
                domain=MS,
                num_heads=hidden // head,
            )  # fmt: skip
        )
        out_w, out_b = p["attention.output.dense"]
        nodes.append(helper.make_node("MatMul", [f"att{n}", use(out_w)], [f"att_out{n}"]))
        norm1 = layer_norm(at + "attention.output.LayerNorm")
        nodes.append(
            helper.make_node(
                "SkipLayerNormalization", [f"att_out{n}", x, *norm1, use(out_b)], [f"x1_{n}"], domain=MS, epsilon=eps
            )  # fmt: skip
        )
        in_w, in_b = p["intermediate.dense"]
        nodes.append(helper.make_node("MatMul", [f"x1_{n}", use(in_w)], [f"inner{n}"]))
        nodes.append(helper.make_node("BiasGelu", [f"inner{n}", use(in_b)], [f"gelu{n}"], domain=MS))
        down_w, down_b = p["output.dense"]
        nodes.append(helper.make_node("MatMul", [f"gelu{n}", use(down_w)], [f"down{n}"]))
        norm2 = layer_norm(at + "output.LayerNorm")
        nodes.append(
            helper.make_node(
                "SkipLayerNormalization",
                [f"down{n}", f"x1_{n}", *norm2, use(down_b)],
                [f"x2_{n}"],
                domain=MS,
                epsilon=eps,
            )  # fmt: skip
        )
        x = f"x2_{n}"
    nodes.append(helper.make_node("Identity", [x], [OUTPUT]))
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"]) for name in _INPUTS]
    output = helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", "sequence", hidden])
    fused = helper.make_model(
        helper.make_graph(nodes, "minilm_fused", inputs, [output], list(inits.values())),
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)],
        ir_version=8,
    )
    return bytes(fused.SerializeToString())
