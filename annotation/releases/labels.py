"""How statistics and figures name the values that are not labels."""

NO_PATTERN = "(no clear pattern)"  # relation pattern "": an annotator found no clear pattern
NOT_ANNOTATED = "(not annotated)"  # relation pattern null
NO_STRATEGY = "(no strategy)"  # a therapist row without a support strategy
