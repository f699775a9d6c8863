"""What a person reads on a page."""

import re

# Internal names that must never reach a page's visible text.
RAW_NAMES = re.compile(
    r"\b(?:in_review|in_progress|preannotation_failed|preannotated|preannotating|internal_emotion|"
    r"viewpoints_attitudes|relation_pattern\w*|content\.\w+)\b"
)
