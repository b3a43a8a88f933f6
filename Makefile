# The two set-up commands: `make run` and `make test`. Both create .venv and install on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export DJANGO_SETTINGS_MODULE := config.settings
# No PLATFORM_MODE here: config/settings.py decides it (README, "Modes"). The code checks and the
# tests are about the code, never a deployment: they run against the simulators.
test migrations-check schema: export PLATFORM_MODE := sandbox
PYTEST_ARGS ?=

.PHONY: install run test test-fast check lint typecheck schema schemathesis migrations-check bench bench-compare stop-embedded clean

$(STAMP): pyproject.toml clients/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet ".[dev]"
	@# The clients (SDK, CLI, MCP server), editable so their suite tests the checked-out code.
	$(PY) -m pip install --quiet -e ./clients/python
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(PY) -m config.run

# --durations=25: every run's log ends with its 25 slowest tests (setup and teardown apart).
test: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadgroup --durations=25 $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@# The import contracts of pyproject's [tool.importlinter]: layers, no cycles, tasks above services.
	$(VENV)/bin/lint-imports

typecheck: $(STAMP)
	$(VENV)/bin/mypy .

migrations-check: $(STAMP)
	$(PY) manage.py check
	$(PY) manage.py makemigrations --check --dry-run

schema: $(STAMP)
	$(PY) manage.py spectacular --validate --fail-on-warn --file /dev/null

# The OpenAPI description against the live service (a web process on a database of its own,
# seeded schemathesis run, about a minute or two); SEED=n for another seed.
schemathesis: $(STAMP)
	$(PY) scripts/schemathesis_check.py $(if $(SEED),--seed $(SEED),)

check: lint typecheck migrations-check schema test schemathesis

bench: $(STAMP)
	@# The load generator is wrk where it can be had (Debian's package; as root we install it);
	@# without it the bench falls back to bench.httpload and says so in its tables.
	@command -v wrk >/dev/null 2>&1 || { [ "$$(id -u)" = "0" ] && apt-get install -y -qq wrk >/dev/null 2>&1; } || true
	$(PY) -m bench $(if $(SCENARIO),--scenario $(SCENARIO),)

# The same scenarios on a worktree of BASELINE (its code, this bench) and on this tree, alternating,
# ROUNDS each (3): medians side by side, var/bench/compare-<scenario>.json (docs/benchmarks.md).
bench-compare: $(STAMP)
	@test -n "$(BASELINE)" || { echo "usage: make bench-compare BASELINE=<rev> [ROUNDS=3] [SCENARIO=name]"; exit 2; }
	@command -v wrk >/dev/null 2>&1 || { [ "$$(id -u)" = "0" ] && apt-get install -y -qq wrk >/dev/null 2>&1; } || true
	$(PY) -m bench --baseline $(BASELINE) $(if $(ROUNDS),--rounds $(ROUNDS),) $(if $(SCENARIO),--scenario $(SCENARIO),)

stop-embedded: $(STAMP)
	$(PY) -c "from config import embedded; embedded.stop()"

clean:
	rm -rf var/bench
