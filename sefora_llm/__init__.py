"""LLM access shared by the UniMatch metric and the feedback judges: one OpenAI-compatible
chat client (retries, timeouts, key redaction), the on-disk answer cache and the options
every LLM-backed computation takes. ``openai`` is imported only when a request is made."""
