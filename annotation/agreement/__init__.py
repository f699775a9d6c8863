"""agreement capability."""
