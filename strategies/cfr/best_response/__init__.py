"""Exact best responses and exploitability: of any strategy on the public tree, and
of card-blind strategies in games as big as hold'em."""
