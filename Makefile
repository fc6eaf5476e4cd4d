# cefisim — the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
SUM    := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# one stamp per install: `make run` needs only the package, the other targets its [test] extra
STAMP  := $(VENV)/.installed-test-$(SUM)
RUN_STAMP := $(VENV)/.installed-run-$(SUM)

.PHONY: run test lint fmt bench bench-quick e2e soak soak-long fuzz clean compiled pure
SOAK_SECONDS ?= 600

$(VENV)/.installed-%-$(SUM): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.$(if $(filter test,$*),[test])'
	rm -f $(VENV)/.installed-$*-* && touch $@

run: $(RUN_STAMP)
	$(VENV)/bin/cefisim serve --host 127.0.0.1 --port 8080 --scenario scenarios/demo.json

# the whole suite on the pure build (the editable install's .py files), then the engine, replay and
# digest tests on the compiled build of the same source (docs/build.md), which is removed again after.
# The pure pass runs with asyncio's and aiohttp's debug checks on (PYTHONASYNCIODEBUG, docs/testing.md):
# what aiohttp tolerates only outside debug mode fails there, at no extra CI time
test: $(STAMP)
	$(MAKE) --no-print-directory pure
	PYTHONASYNCIODEBUG=1 $(PY) -m pytest -q -p no:cacheprovider
	$(MAKE) --no-print-directory compiled
	CEFISIM_EXPECT_BUILD=compiled $(PY) -m pytest -q -p no:cacheprovider $(COMPILED_TESTS); \
	status=$$?; $(MAKE) --no-print-directory pure; exit $$status

# the tests that run a second time on the compiled build: the engine's, every shipped scenario's replay
# to its pinned digest, the agents', journals and snapshots byte-identical between the builds, and the
# runtime's handling of engine objects (snapshots of every version, journals, recovery, the read
# replica, retention defaults, the backtest harness), where a C type differs from a Python class
COMPILED_TESTS ?= tests/engine tests/recorded tests/scenarios tests/agents tests/test_build.py \
	tests/api/test_snapshot_codec.py tests/api/test_snapshot_versions.py tests/api/test_journal.py \
	tests/api/test_journal_writers.py tests/api/test_journal_versions.py tests/api/test_crash_recovery.py \
	tests/api/test_read_replica.py tests/api/test_retention.py tests/api/test_venues_journal.py tests/backtest

# the engine compiled in place (engine/*.so beside the .py files, which they shadow) for benchmarks
# and tests; `make pure` deletes them. Cython and setuptools are needed only to build.
compiled: $(STAMP)
	$(PY) -m pip install --quiet 'Cython>=3.1' 'setuptools>=77'
	$(PY) setup.py --quiet build_ext --inplace --parallel 2

pure:
	rm -f engine/*.so engine/*.pyd engine/recorded/*.so engine/recorded/*.pyd engine/simulation/*.so engine/simulation/*.pyd

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
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache engine/*.so engine/*.pyd engine/recorded/*.so engine/recorded/*.pyd
