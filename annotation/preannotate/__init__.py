"""preannotate capability."""
