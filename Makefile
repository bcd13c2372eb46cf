# Two commands do all the set-up on a fresh machine (see README.md):
#   make example   build the embedded example release offline on CPU, then verify it
#   make test      run the test suite
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup sandbox example test test-fast clean harbor-venv harbor-venv-if-python312

setup: $(STAMP)

# torch is pinned to the CPU wheel that lies on these machines' disk; an unpinned torch pulls a CUDA build.
$(STAMP): pyproject.toml setup.py
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

# The harbor-marked tests need Harbor's venv: `make test` sets it up where Python 3.12 exists (as .ci/run does),
# else says in one line that they will be skipped.
test: setup harbor-venv-if-python312
	$(PY) -m pytest tests

# What a developer runs while editing (under a minute): unit and stage tests without containers, data or slow work.
test-fast: setup
	$(PY) -m pytest tests/unit tests/stage -q -m "not slow and not docker and not data and not harbor and not gpu"

# Harbor (PyPI `harbor`, Python >= 3.12) runs from its own virtual environment; the project's Harbor
# plugins (swe_taskflow_harbor: environment, agent) are installed into it without the project's deps.
HARBOR_VENV ?= .harbor-venv
HARBOR_PY ?= $(firstword $(wildcard $(shell pyenv root 2>/dev/null)/versions/3.12.*/bin/python3) \
  $(wildcard $(PYENV_ROOT)/versions/3.12.*/bin/python3) $(wildcard $(HOME)/.pyenv/versions/3.12.*/bin/python3) \
  $(shell command -v python3.12))
HARBOR_STAMP := $(HARBOR_VENV)/.installed-harbor-0.25.0
# The Docker SDK for swe_taskflow_harbor.environment:DockerEnvironment (its own stamp: an existing venv gains it).
HARBOR_DOCKER_STAMP := $(HARBOR_VENV)/.installed-docker-sdk-7

harbor-venv: $(HARBOR_STAMP) $(HARBOR_DOCKER_STAMP)

harbor-venv-if-python312:
	@if [ -n "$(HARBOR_PY)" ]; then $(MAKE) --no-print-directory harbor-venv; else \
	  echo "no Python 3.12 (pyenv install 3.12, or python3.12 on PATH): the harbor-marked tests will be skipped"; fi

$(HARBOR_DOCKER_STAMP): $(HARBOR_STAMP)
	$(HARBOR_VENV)/bin/python -m pip install -q 'docker>=7,<8'
	touch $(HARBOR_DOCKER_STAMP)

$(HARBOR_STAMP): pyproject.toml setup.py
	@test -n "$(HARBOR_PY)" || { echo "harbor-venv needs Python 3.12 (pyenv install 3.12 or python3.12)" >&2; exit 1; }
	$(HARBOR_PY) -m venv $(HARBOR_VENV)
	$(HARBOR_VENV)/bin/python -m pip install -q --upgrade pip
	$(HARBOR_VENV)/bin/python -m pip install -q 'harbor==0.25.0' 'mini-swe-agent==2.4.6'
	$(HARBOR_VENV)/bin/python -m pip install -q --no-deps -e .
	touch $(HARBOR_STAMP)

clean:
	rm -rf build .pytest_cache
