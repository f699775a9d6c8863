"""adjudication capability."""
