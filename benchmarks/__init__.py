"""Benchmark suite of CRAFT Explorer: paper tables, DP-RF, subspace recovery, speed.

Run everything with ``python -m benchmarks.run_all`` (``--quick`` for a
smoke run of a few minutes); see ``benchmarks/README.md``.
"""
