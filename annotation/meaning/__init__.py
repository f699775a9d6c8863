"""Free-text measures validated against people's judgement of meaning (issue 26): judged pairs, the LLM judge,
validity."""
