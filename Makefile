# Two commands do all the set-up on a fresh machine (see README.md):
#   make example   build the embedded example release offline on CPU, then verify it
#   make test      run the test suite
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup sandbox example test clean

setup: $(STAMP)

# torch is pinned to the CPU wheel that lies on these machines' disk; an unpinned torch pulls a CUDA build.
$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[all]'
	touch $(STAMP)

# The example validates proof scripts in Docker when a daemon answers, else in bubblewrap.
sandbox:
	@docker version >/dev/null 2>&1 || command -v bwrap >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null; } || \
	  { echo "make example needs Docker or bubblewrap (apt-get install bubblewrap)" >&2; exit 1; }

# With Docker, the example task's own image is built first (locally, no registry); without it, proofs run in
# bubblewrap and the image is left for a machine with Docker (`swe-taskflow example build-image`).
example: setup sandbox
	@if docker version >/dev/null 2>&1; then $(VENV)/bin/swe-taskflow example build-image; \
	  else echo "no Docker daemon: proofs run in bubblewrap; the task image is not built"; fi
	$(VENV)/bin/swe-taskflow build builder/releases/example.toml --out build/example

test: setup
	$(PY) -m pytest tests

clean:
	rm -rf build .pytest_cache
