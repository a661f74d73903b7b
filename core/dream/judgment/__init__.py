"""The dream's decisions on each fact: its kind, and its relation to MEMORY.md's lines."""
