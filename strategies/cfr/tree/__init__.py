"""The public tree and the betting tree of a two-player game, their size budget, and the
numba kernels that sweep the public tree with vectors over private hands."""
