"""The solver engine, in parts: ``tree/`` (public and betting trees, their size
budget, the public-tree kernels), ``solvers/`` (CFR, CFR+, public chance sampling,
the explicit abstract game, 3-player CFR), ``abstraction/`` (hand features,
buckets, card tables and their caches), ``best_response/`` (exact and card-blind),
strategy files (``strategy_file``, on the bounded reader and atomic writer of
``file_io``), a solve run (``runs``: a solver set up from settings or resumed
from its checkpoint, the loop that iterates, measures and saves it; ``interrupts``:
stopping it on a batch boundary), a strategy as people read it (``listing``) and the numba kernels'
cold-cache notice and list (``compile_notice``). The commands that drive it live
in :mod:`arena.commands` (``arena warmup`` compiles every kernel ahead)."""
