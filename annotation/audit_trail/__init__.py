"""The audit trail as leads read it: one timeline of every write in a project."""
