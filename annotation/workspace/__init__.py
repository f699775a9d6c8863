"""workspace capability."""
