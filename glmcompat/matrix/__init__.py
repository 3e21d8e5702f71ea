"""The compatibility matrix: schema, loading, the hot-path view, its cache, curation, and the TOML data."""
