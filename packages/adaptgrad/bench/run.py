"""Benchmark beside the peer library on the same inputs, in one process: prints ratios."""
