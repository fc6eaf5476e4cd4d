# cefisim — the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
SUM    := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# one stamp per install: `make run` needs only the package, `make docs` its [docs] extra, the other
# targets its [test] extra
STAMP  := $(VENV)/.installed-test-$(SUM)
RUN_STAMP := $(VENV)/.installed-run-$(SUM)

.PHONY: run test lint fmt bench bench-quick e2e soak soak-long fuzz clean compiled pure docs
SOAK_SECONDS ?= 600

$(VENV)/.installed-%-$(SUM): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.$(if $(filter run,$*),,[$*])'
	rm -f $(VENV)/.installed-$*-* && touch $@

run: $(RUN_STAMP)
	$(VENV)/bin/cefisim serve --host 127.0.0.1 --port 8080 --scenario scenarios/demo.json

# The whole suite on the pure build and the compiled one in about 8 minutes on 2 cores (docs/testing.md):
# 1. the compiled wheel builds in the background (setsid: its progress goes to the log, not the
#    terminal): the engine is compiled once, and that wheel serves both the compiled pass (its
#    extensions taken into engine/) and the installation tests;
# 2. the pure pass under pytest-xdist, in two runs: the tests that serve HTTP with asyncio's and
#    aiohttp's debug checks on (PYTHONASYNCIODEBUG=1: what aiohttp tolerates only outside debug mode
#    fails there), the rest without them;
# 3. the compiled pass: COMPILED_TESTS on the wheel's extensions in place, beside the installation tests
#    (INSTALLED_TESTS, on the wheel itself, on one worker: they share one virtualenv); then `make pure`.
# Every run goes on after a failure so that one `make test` shows everything; the target fails if any did.
WHEELHOUSE := build/test-wheel
# worksteal: a worker that runs out takes tests queued on the other (the suite's durations are uneven)
XDIST ?= -n 2 --dist worksteal
DEBUG_TESTS ?= tests/api tests/fuzz tests/clients
INSTALLED_TESTS ?= tests/test_wheel.py tests/test_installed.py tests/test_ci_docs.py
PYTEST := $(PY) -m pytest -q -p no:cacheprovider
test: $(STAMP)
	@$(MAKE) --no-print-directory pure
	@rm -rf $(WHEELHOUSE) && mkdir -p $(WHEELHOUSE)
	@echo "cefisim: building the compiled wheel in the background (log: $(WHEELHOUSE)/build.log)"
	@( setsid $(PY) -m pip wheel --no-deps -v -w $(WHEELHOUSE) . >$(WHEELHOUSE)/build.log 2>&1 </dev/null; \
	   echo $$? >$(WHEELHOUSE)/status ) & \
	status=0; \
	echo "cefisim: the pure pass, HTTP tests under PYTHONASYNCIODEBUG=1"; \
	PYTHONASYNCIODEBUG=1 $(PYTEST) $(XDIST) $(DEBUG_TESTS) || status=1; \
	echo "cefisim: the pure pass, the other tests"; \
	$(PYTEST) $(XDIST) $(foreach t,$(DEBUG_TESTS) $(INSTALLED_TESTS),--ignore=$(t)) tests || status=1; \
	wait; \
	if [ "$$(cat $(WHEELHOUSE)/status)" != 0 ]; then \
	  tail -n 40 $(WHEELHOUSE)/build.log; echo "cefisim: the wheel did not build"; exit 1; \
	fi; \
	wheel=$$(ls $(WHEELHOUSE)/cefisim-*.whl); \
	$(PY) tools/take_extensions.py "$$wheel" || status=1; \
	echo "cefisim: the compiled pass and the installation tests"; \
	CEFISIM_EXPECT_BUILD=compiled CEFISIM_TEST_WHEEL="$$PWD/$$wheel" \
	  $(PYTEST) $(XDIST) --dist loadgroup $(COMPILED_TESTS) $(INSTALLED_TESTS) || status=1; \
	$(MAKE) --no-print-directory pure; \
	exit $$status

# the tests that run a second time on the compiled build: the engine's, every shipped scenario's replay
# to its pinned digest, the agents', journals and snapshots byte-identical between the builds, the
# journal's compiled writer against its Python form, and the runtime's handling of engine objects
# (snapshots of every version, journals, recovery, the read replica, retention defaults, the backtest
# harness), where a C type differs from a Python class
COMPILED_TESTS ?= tests/engine tests/api/formats/recorded tests/api/formats/scenario tests/test_build.py \
	tests/api/runtime/test_snapshot_codec.py tests/api/runtime/test_snapshot_versions.py \
	tests/api/runtime/test_journal.py tests/api/runtime/test_journal_writers.py \
	tests/api/runtime/test_journal_seal.py tests/api/runtime/test_journal_damage.py \
	tests/api/runtime/test_journal_versions.py tests/api/runtime/test_crash_recovery.py \
	tests/api/runtime/test_read_replica.py tests/api/runtime/test_retention.py \
	tests/api/runtime/test_venues_journal.py tests/api/cli/backtest

# the engine and the journal's writer compiled in place (engine/*.so, api/runtime/*.so beside the .py
# files, which they shadow) for benchmarks and tests; `make pure` deletes them. Cython and setuptools
# are needed only to build.
compiled: $(STAMP)
	$(PY) -m pip install --quiet 'Cython>=3.1' 'setuptools>=77'
	$(PY) setup.py --quiet build_ext --inplace --parallel 2

EXTENSIONS := engine/*.so engine/*.pyd engine/recorded/*.so engine/recorded/*.pyd engine/simulation/*.so \
  engine/simulation/*.pyd api/runtime/*.so api/runtime/*.pyd
pure:
	rm -f $(EXTENSIONS)

# ruff's rules and format, then mypy (engine strict, api default: pyproject.toml says how). All three
# run and report before the target fails, so one run shows everything; well under a minute.
lint: $(STAMP)
	@status=0; \
	$(VENV)/bin/ruff check . || status=1; \
	$(VENV)/bin/ruff format --check . || status=1; \
	$(VENV)/bin/mypy || status=1; \
	exit $$status

# format, fix (some fixes only apply to formatted code), format what the fixes changed; what no fix
# can mend is listed
fmt: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix --exit-zero .
	$(VENV)/bin/ruff format .

# the documentation site from docs/ into build/docs/ (docs/docs-site.md): Sphinx with MyST and Furo from
# the pinned [docs] extra, warnings as errors (a broken link, an orphan page)
DOCS_STAMP := $(VENV)/.installed-docs-$(SUM)
docs: $(DOCS_STAMP)
	$(VENV)/bin/sphinx-build -q -W --keep-going -b html -c tools/docs docs build/docs
	@echo "cefisim: the documentation site is in build/docs/index.html"

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

bench-quick: $(STAMP)
	$(PY) benchmarks/run_all.py --quick

soak: $(STAMP)
	$(PY) benchmarks/soak.py --seconds $(SOAK_SECONDS)

soak-long: $(STAMP)
	$(PY) benchmarks/soak.py --long-run 7

fuzz: $(STAMP)
	CEFISIM_FUZZ_SCALE=10 $(PY) -m pytest -q -p no:cacheprovider tests/fuzz

e2e: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -m e2e tests/e2e

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache $(EXTENSIONS)
