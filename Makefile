# The two commands of the README. Each sets up its own virtual environment first,
# installing the exact versions of constraints.txt (what CI tested).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)

.PHONY: match test lock warmup browser

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -c constraints.txt -e '.[test]'
	$(VENV)/bin/python -m strategies.cfr.warmup   # compile the numba kernels once, with a word on each
	rm -f $(VENV)/.installed-* && touch $@

# A local heads-up limit hold'em match between two simple agents, with results.
match: $(STAMP)
	$(VENV)/bin/arena match hulhe --hands 3000 --seed 7 --duplicate random always-raise

# The whole test suite (what CI runs).
test: $(STAMP) browser
	$(VENV)/bin/python -m pytest

# Debian's Chromium for the browser tests of `arena play` (Playwright drives it; no browser
# download). Installed only where we may (root with apt-get); elsewhere those tests skip, saying why.
browser:
	@if ! command -v chromium >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the browser tests"; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
			|| echo "chromium could not be installed: the browser tests will skip"; \
	fi

# Compile (or check) the numba kernels; set-up does it once, this redoes it after a kernel change.
warmup: $(STAMP)
	$(VENV)/bin/python -m strategies.cfr.warmup

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
