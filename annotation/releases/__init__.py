"""releases capability."""
