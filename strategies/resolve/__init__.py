"""Continual re-solving (DeepStack; Burch 2017 thesis 'Time and Space', ch5-6).

One module per part: :mod:`~strategies.resolve.lookahead` (the sparse tree at the
real public state), :mod:`~strategies.resolve.resolver` (CFR+ with the re-solving
gadget; kernels in :mod:`~strategies.resolve._kernels`),
:mod:`~strategies.resolve.agent` (the ``resolve`` strategy: range and opponent
values carried between decisions, ``policy`` for every private hand),
:mod:`~strategies.resolve.measure` (exploitability as DeepStack-Leduc measures
it), :mod:`~strategies.resolve.subgames` (Burch §5.4.1: safe and unsafe
re-solving of a fixed strategy's subgames), and for a lookahead cut at the end
of the street: :mod:`~strategies.resolve.depth_limited` (the street tree and
its CFR+), :mod:`~strategies.resolve.evaluators` (values at the cut: the
learned net, the equity heuristic), :mod:`~strategies.resolve.values` (the value
network's file and numpy inference) and :mod:`~strategies.resolve.train`
(``arena train-values``). Modicum's depth-limited solving (Brown, Sandholm &
Amos 2018) reuses the street tree: :mod:`~strategies.resolve.continuations`
(the blueprint, its continuation strategies and their values at the depth
limit) and :mod:`~strategies.resolve.modicum` (the ``modicum`` strategy)."""
