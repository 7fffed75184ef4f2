"""``python -m dealer …``: the reference dealer command line (see :mod:`dealer.cli`)."""

import sys

from dealer.cli import main

sys.exit(main())
