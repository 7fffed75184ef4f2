"""The public tree and the betting tree of a two-player game, their size budget, and the
numba kernels that sweep the public tree with vectors over private hands; the
three-player trees: the dense public tree of small games (``multi``) and the
betting graph of limit games under a betting cut (``betting_graph``)."""
