"""Orchestration: wheel probes, lock generation, matrix refresh, the verify runner."""
