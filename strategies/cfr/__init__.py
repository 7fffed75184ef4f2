"""The solver engine: public trees, CFR/CFR+ kernels, best response, strategy files."""
