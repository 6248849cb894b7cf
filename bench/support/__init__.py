"""Code the benchmarks share: corpora of real projects, the token-counting proxy, the soak's pieces, the corpus CLI."""
