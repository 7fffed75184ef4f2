"""``python -m agent GAME HOST PORT [--strategy NAME] [--seed S]``."""

import sys

try:
    from agent.cli import main
except KeyboardInterrupt:  # Ctrl-C while the modules import, before main's own handling (agent/cli.py)
    print("arena agent: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main(sys.argv[1:]))
