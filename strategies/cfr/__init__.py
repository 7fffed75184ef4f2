"""The solver engine, in parts: ``tree/`` (public and betting trees, their size
budget, the public-tree kernels), ``solvers/`` (CFR, CFR+, public chance sampling,
the explicit abstract game, 3-player CFR), ``abstraction/`` (hand features,
buckets, card tables and their caches), ``best_response/`` (exact and card-blind),
strategy files (``strategy_file``, on the bounded reader and atomic writer of
``file_io``), a strategy as people read it (``show``) and the numba warm-up
(``warmup``, ``compile_notice``). The commands that drive it live in
:mod:`arena.commands`."""
