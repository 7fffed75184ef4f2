# The two commands of the README. Each sets up its own virtual environment first.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

.PHONY: match test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -e '.[test]'
	rm -f $(VENV)/.installed-* && touch $@

# A local heads-up limit hold'em match between two simple agents, with results.
match: $(STAMP)
	$(VENV)/bin/arena match hulhe --hands 3000 --seed 7 --duplicate random always-raise

# The whole test suite (what CI runs).
test: $(STAMP)
	$(VENV)/bin/python -m pytest
