# The two commands: `make demo` runs the main job, `make test` runs every check.
# Both create .venv and install the project into it when needed, so a fresh clone needs only
# Python 3.11+ and access to the package registry.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: demo test lint typecheck overrides-check unit bench clean

$(INSTALLED): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "promptkit needs Python 3.11 or newer; set PYTHON=python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[dev]"
	@touch $(INSTALLED)

# The main job, offline: write a digest of this repository with the static optimizer, then show
# a prompt that uses it. The digest is stored as a project-wide (global) digest in an overrides
# folder inside .venv, beside the session state, so the demo leaves nothing behind and renders
# the digest it wrote rather than shadowing the curated one in overrides/ (which would warn).
DEMO_STATE := $(VENV)/promptkit-state
DEMO_OVERRIDES := $(DEMO_STATE)/overrides
DEMO_STORES := --state-dir $(DEMO_STATE) --overrides-dir $(DEMO_OVERRIDES)

REVIEW_PROMPT := examples.code_reviewer_example:build_review_prompt

demo: $(INSTALLED)
	$(BIN)/promptkit optimize . --provider static --scope global --prompt $(REVIEW_PROMPT) $(DEMO_STORES)
	$(BIN)/promptkit render --prompt $(REVIEW_PROMPT) $(DEMO_STORES)

lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache --no-logo

typecheck: $(INSTALLED)
	$(BIN)/mypy

# The repository's curated overrides must still match the code they were written against.
# The prompts to compare with are listed under [tool.promptkit] in pyproject.toml.
overrides-check: $(INSTALLED)
	$(BIN)/promptkit overrides check --overrides-dir overrides

unit: $(INSTALLED)
	$(BIN)/python -m pytest -n 2 -q

test: lint typecheck overrides-check unit

bench: $(INSTALLED)
	$(BIN)/python benchmarks/render_bench.py --store

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache
