# Two commands: `make demo` and `make test`. Each sets up .venv from scratch if needed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
TORCH_INDEX ?=

.PHONY: demo test setup lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first, pinned: its CPU build lies on disk; an unpinned torch drags a CUDA build.
	# Elsewhere, TORCH_INDEX=https://download.pytorch.org/whl/cpu fetches the CPU wheel.
	$(PY) -m pip install -q torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install -q -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/coplug demo

test: $(STAMP)
	$(PY) -m pytest -q -n 2

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) build *.egg-info
