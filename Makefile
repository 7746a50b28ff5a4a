# paperplug: `make demo` and `make test` do all set-up on a fresh machine (see README).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
UV := $(PYTHON) -m uv
# uv ignores pip's configuration: hand it pip's find-links, where the CPU torch wheel lies.
export UV_FIND_LINKS ?= $(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null)
export PYTHONUNBUFFERED := 1
export OMP_NUM_THREADS := 1
INSTALL = $(UV) pip install -q -c constraints.txt
SLUGS = $(shell $(PYTHON) core/src/paperplug/manifest.py slugs)
# a package folder with every extra it declares (its demo's, its optional backends')
with_extras = "packages/$(1)[$(shell $(PYTHON) core/src/paperplug/manifest.py extras $(1))]"
# a test skipped for a missing library fails (paperplug.testing); only hardware may skip
TEST_ENV = PAPERPLUG_NO_SKIP=1
PKG ?=
NAME ?=

.PHONY: help uv system install lint format test test-core test-pkg test-packages test-cross dist demo bench new-plugin readme docs docs-serve clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

uv:
	@$(UV) --version >/dev/null 2>&1 || $(PYTHON) -m pip install -q uv

install: uv ## dev environment .venv: core + every package (editable, with all its extras: demos too) + ruff, pytest
	@$(UV) venv -q --allow-existing -p 3.11 .venv
	@$(INSTALL) --python .venv -e core $(foreach s,$(SLUGS),-e $(call with_extras,$(s))) --group dev --group docs

lint: install ## ruff check and ruff format --check
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

format: install ## ruff format and fix
	.venv/bin/ruff format . && .venv/bin/ruff check --fix .

test-core: uv ## core tests in an environment holding the core alone
	@$(UV) venv -q --clear -p 3.11 .venvs/core
	@$(INSTALL) --python .venvs/core -e core --group core/pyproject.toml:dev
	$(TEST_ENV) .venvs/core/bin/python -m pytest core/tests

test-pkg: uv ## one package's tests in an environment holding only the core and it, with its extras (PKG=slug)
	@test -n "$(PKG)" -a -d packages/$(PKG) || { echo "usage: make test-pkg PKG=<slug in packages/>"; exit 2; }
	@$(UV) venv -q --clear -p 3.11 .venvs/$(PKG)
	@$(INSTALL) --python .venvs/$(PKG) -e core -e $(call with_extras,$(PKG)) --group packages/$(PKG)/pyproject.toml:test
	cd packages/$(PKG) && $(TEST_ENV) PAPERPLUG_STRICT_PLUGINS=1 ../../.venvs/$(PKG)/bin/python -m pytest tests

test-packages: ## every package of plugins.toml, each alone
	@failed=""; for s in $(SLUGS); do \
	  echo "== $$s"; start=$$(date +%s); \
	  $(MAKE) --no-print-directory test-pkg PKG=$$s || failed="$$failed $$s"; \
	  echo "== $$s: $$(( $$(date +%s) - start )) s"; \
	done; \
	if [ -z "$(SLUGS)" ]; then echo "no packages in plugins.toml yet"; fi; \
	if [ -n "$$failed" ]; then echo "FAILED packages:$$failed"; exit 1; fi

test-cross: install dist ## cross-package tests (manifest, custom plugin, composition) with everything installed
	$(TEST_ENV) .venv/bin/python -m pytest tests

dist: uv ## wheel and sdist of the core and of every package, into dist/
	@rm -rf dist && mkdir -p dist
	@for d in core $(foreach s,$(SLUGS),packages/$(s)); do $(UV) build -q --out-dir dist $$d; done
	@ls dist | wc -l | xargs echo "dist/: files:"

system: ## the Debian packages the tests drive (Chromium for the docs site, redis-server for the gateway's replicas), installed when missing
	@missing=""; \
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || missing="chromium chromium-driver"; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then echo "install these Debian packages first:$$missing"; exit 2; fi; \
	  echo "installing$$missing (apt-get)"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

test: system lint test-core test-packages test-cross ## system packages + lint + core + each package alone + cross-package

demo: install ## every installed package's embedded default, a summary table, then the guarded agent (use 3)
	.venv/bin/paperplug demo --all
	.venv/bin/python tests/guarded_agent.py

bench: uv ## a package's benchmark beside its peer library (PKG=slug)
	@test -n "$(PKG)" -a -d packages/$(PKG) || { echo "usage: make bench PKG=<slug>"; exit 2; }
	@$(UV) venv -q --allow-existing -p 3.11 .venvs/$(PKG)-bench
	@$(INSTALL) --python .venvs/$(PKG)-bench -e core -e $(call with_extras,$(PKG)) --group packages/$(PKG)/pyproject.toml:bench
	.venvs/$(PKG)-bench/bin/python packages/$(PKG)/bench/run.py $(ARGS)

new-plugin: ## a new package from the template (NAME=slug), with its plugins.toml table
	@echo "$(NAME)" | grep -qE '^[a-z][a-z0-9_]*$$' || { echo "NAME must be a snake_case slug"; exit 2; }
	@test ! -e packages/$(NAME) || { echo "packages/$(NAME) exists"; exit 2; }
	cp -r .ci/template packages/$(NAME)
	mv packages/$(NAME)/src/paperplug___slug__ packages/$(NAME)/src/paperplug_$(NAME)
	grep -rl __slug__ packages/$(NAME) | xargs sed -i 's/__slug__/$(NAME)/g; s/__dist__/$(subst _,-,$(NAME))/g'
	sed 's/__slug__/$(NAME)/g; s/__dist__/$(subst _,-,$(NAME))/g' .ci/template.toml >> plugins.toml
	sed 's/__slug__/$(NAME)/g' .ci/template_tests/public_api.py > tests/public_api/$(NAME).py
	@echo "created packages/$(NAME): fill in plugins.toml [plugins.$(NAME)], then make readme"

docs: install ## the documentation site into site/ (MkDocs, Material, mkdocstrings), strict
	.venv/bin/python .ci/docs/build.py

docs-serve: install ## the documentation site on http://127.0.0.1:8000, rebuilt on change
	.venv/bin/python .ci/docs/build.py --serve

readme: install ## regenerate the README package table and the core's catalog copy
	.venv/bin/python -m paperplug.manifest readme

clean: ## remove environments, caches and dist/
	rm -rf .venv .venvs .pytest_cache .ruff_cache dist site build
