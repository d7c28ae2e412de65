# Two commands on a fresh machine with Python 3.11+ and PyPI access:
#   make plan   - set up, then plan the dev environment offline
#   make test   - set up, then run the whole test suite (CI runs exactly this)
SHELL := /bin/bash
PYTHON ?= python3
UV_VERSION := 0.13.9
UV := $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
STACK ?= dev

.PHONY: setup policy-pack plan test plan-all bench schema clean

.tools/bin/uv:
	$(PYTHON) -m venv .tools
	.tools/bin/pip install --quiet "uv==$(UV_VERSION)"

# --locked, not --frozen: stop when uv.lock no longer matches pyproject.toml (a dependency edited without `uv lock`)
# instead of installing the stale lock. Every `uv run` below checks it again (cheap: no resolution when it matches).
.venv/.synced: uv.lock pyproject.toml | $(UV)
	$(UV) sync --locked
	@touch $@

setup: .venv/.synced

# The policy pack's own virtualenv (PulumiPolicy.yaml: virtualenv venv). `pulumi preview --policy-pack policies` runs
# a local pack from it and installs nothing itself.
policies/venv/.installed: policies/requirements.txt | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) policies/venv
	$(UV) pip install --quiet --python policies/venv/bin/python -r policies/requirements.txt
	@touch $@

policy-pack: policies/venv/.installed

plan: setup
	$(UV) run --locked aiinfra plan --stack $(STACK)

plan-all: setup
	@mkdir -p out
	@for s in dev staging prod; do $(UV) run --locked aiinfra plan --stack $$s --json out/$$s.json -q || exit $$?; done

test: setup
	$(UV) run --locked pytest -n 2 -q

bench: setup
	$(UV) run --locked python bench/plan_speed.py
	$(UV) run --locked python bench/policy_throughput.py

schema: setup
	$(UV) run --locked aiinfra schema -o docs/platform.schema.json

clean:
	rm -rf .venv .tools out .pytest_cache policies/venv
