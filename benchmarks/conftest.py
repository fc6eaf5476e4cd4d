"""Benchmarks are programs, never tests: keep pytest from collecting anything here."""

collect_ignore_glob = ["*"]
