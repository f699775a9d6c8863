"""Builders and fixtures the test modules share (no test module imports another)."""
