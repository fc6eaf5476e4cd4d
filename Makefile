# cefisim — the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
SUM    := $(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# one stamp per install: `make run` needs only the package, the other targets its [test] extra
STAMP  := $(VENV)/.installed-test-$(SUM)
RUN_STAMP := $(VENV)/.installed-run-$(SUM)

.PHONY: run test lint fmt bench bench-quick e2e soak soak-long fuzz clean
SOAK_SECONDS ?= 600

$(VENV)/.installed-%-$(SUM): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.$(if $(filter test,$*),[test])'
	rm -f $(VENV)/.installed-$*-* && touch $@

run: $(RUN_STAMP)
	$(VENV)/bin/cefisim serve --host 127.0.0.1 --port 8080 --scenario scenarios/demo.json

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

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
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache
