"""Local model engine: worker process, client protocol, structured output."""
