"""Benchmarks run as `reverie bench ...`; each prints its figures and ends with one summary line."""
