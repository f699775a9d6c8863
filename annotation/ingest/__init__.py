"""ingest capability."""
