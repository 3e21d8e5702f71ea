"""Edges: HTTP with retries, range reads, the package index, resolver sources, the on-disk cache, uv."""
