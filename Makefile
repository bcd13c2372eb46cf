# Two commands do all the set-up on a fresh machine (see README.md):
#   make example   build the embedded example release offline on CPU, then verify it
#   make test      run the test suite
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup example test bench clean

setup: $(STAMP)

# torch is pinned to the CPU wheel that lies on these machines' disk; an unpinned torch pulls a CUDA build.
$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[all]'
	touch $(STAMP)

example: setup
	$(VENV)/bin/swe-taskflow build builder/releases/example.toml --out build/example

test: setup
	$(PY) -m pytest tests

clean:
	rm -rf build .pytest_cache
