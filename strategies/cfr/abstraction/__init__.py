"""Card abstraction: hand features, percentile buckets, card and bucket tables, and
their cache files."""
