"""The solvers: CFR and CFR+ on the public tree, public chance sampling over a card
abstraction, CFR+ on an explicit abstract game, and 3-player CFR and CFR+."""
