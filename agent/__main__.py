"""``python -m agent GAME HOST PORT [--strategy NAME] [--seed S]``."""

import sys

from agent.cli import main

sys.exit(main(sys.argv[1:]))
