"""Bounded fuzzing of zarrkit's untrusted inputs (documents and chunks); the targets in
``targets`` also serve a coverage-guided harness."""
