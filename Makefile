# The two commands of the README. Each sets up its own virtual environment first,
# installing the exact versions of constraints.txt (what CI tested): `make match` only
# what running needs, `make test` adds the test extras and compiles every numba kernel
# ahead (the suite uses them all). Two stamps, the test one built on the run one: a venv
# made by `make match` is upgraded in place by `make test`, and one made by `make test`
# serves `make match` as it is. Both are named by the checksum of the pins, so a change
# to pyproject.toml or constraints.txt reinstalls into the same venv.
PYTHON ?= python3
VENV := .venv
SUM := $(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)
RUN_STAMP := $(VENV)/.installed-run-$(SUM)
TEST_STAMP := $(VENV)/.installed-test-$(SUM)
# The numba kernels' sources (every module with an @njit): `make test` compiles them again (arena warmup) when one changed
# since, as after a pull; otherwise the first test to need a new kernel compiled it inside its
# own time limits (a bot given 10 s to connect took longer).
KERNELS := $(shell grep -rl --include='*.py' '@njit' poker strategies analysis 2>/dev/null)
WARM_STAMP := $(VENV)/.warm-$(SUM)
# pip's own lines (no -q), and a word every 10 s while it unpacks (silent half a minute
# on 2 cores): a first run is never long silent.
INSTALL := bash -c '"$$@" & pid=$$!; t=0; while kill -0 $$pid 2>/dev/null; do sleep 1; t=$$((t + 1)); \
	[ $$((t % 10)) != 0 ] || echo "  ... still installing ($$t s)"; done; wait $$pid' -- \
	$(VENV)/bin/python -m pip install --progress-bar off -c constraints.txt

.PHONY: match test lock warmup browser compose-test docker

$(RUN_STAMP): pyproject.toml constraints.txt
	@[ -x $(VENV)/bin/python ] || { echo "creating $(VENV)"; $(PYTHON) -m venv $(VENV) && $(VENV)/bin/python -m pip install -q --upgrade pip; }
	@echo "installing acpc-arena and what it needs to run into $(VENV) (the versions of constraints.txt)"
	@$(INSTALL) -e .
	rm -f $(VENV)/.installed-run-* && touch $@

$(TEST_STAMP): $(RUN_STAMP)
	@echo "installing the test tools into $(VENV) (the versions of constraints.txt)"
	@$(INSTALL) -e '.[test]'
	rm -f $(VENV)/.installed-test-* && touch $@

$(WARM_STAMP): $(TEST_STAMP) $(KERNELS)
	$(VENV)/bin/arena warmup   # compile every numba kernel once, with a word on each
	rm -f $(VENV)/.warm-* && touch $@

# A local heads-up limit hold'em match between two simple agents, with results.
# Kernels it needs (a few seconds' worth) compile as it runs, saying so once.
match: $(RUN_STAMP)
	$(VENV)/bin/arena match hulhe --hands 3000 --seed 7 --duplicate random always-raise

# The whole test suite (what CI runs), one pytest-xdist worker per core this process may use
# (nproc: not psutil's count of the host's, which a container can exceed); `make test JOBS=0`: one process.
JOBS ?= $(shell env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null || echo 1)
test: $(WARM_STAMP) browser
	$(VENV)/bin/python -m pytest -n $(JOBS)

# Debian's Chromium for the browser tests of `arena play` (Playwright drives it; no browser
# download). Installed only where we may (root with apt-get); elsewhere those tests skip, saying why
# (in CI, ARENA_CI=1, they fail instead).
browser:
	@if ! command -v chromium >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the browser tests"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
			|| echo "chromium could not be installed: the browser tests will skip (fail under ARENA_CI=1)"; \
	fi

# The stack test of docker-compose.yml (tests/deploy/test_compose.py): it builds the image
# (the pinned dependencies, every numba kernel: minutes), so it is a step of its own, which
# `make test` skips and CI runs after it. Debian's Docker engine, docker-compose and
# mmdebstrap (its base image, where no registry is reachable) are installed where we may
# (root with apt-get); the test starts dockerd itself where none runs, and skips, saying
# why, where Docker cannot run (in CI, ARENA_CI=1, it fails instead).
compose-test: $(TEST_STAMP) docker
	ARENA_COMPOSE_TEST=1 $(VENV)/bin/python -m pytest tests/deploy/test_compose.py

docker:
	@if { ! command -v dockerd || ! command -v mmdebstrap || ! { command -v docker-compose || docker compose version; }; } >/dev/null 2>&1 \
			&& [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's docker.io, docker-compose and mmdebstrap for the stack test"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose mmdebstrap >/dev/null; } \
			|| echo "Docker could not be installed: the stack test will skip (fail under ARENA_CI=1)"; \
	fi

# Compile (or check) every numba kernel; `make test` does it once, this redoes it after a kernel change.
warmup: $(RUN_STAMP)
	$(VENV)/bin/arena warmup

# Move constraints.txt to the newest releases pyproject.toml allows: install them
# into a scratch venv and freeze it. Run `make test` afterwards, commit if green.
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install -q --upgrade pip
	.lock-venv/bin/python -m pip install -q '.[test]'
	{ sed -n '1,2p' constraints.txt; .lock-venv/bin/python -m pip freeze --exclude acpc-arena; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
	rm -rf .lock-venv
