"""AI image generation: jobs, providers (an OpenAI-compatible HTTP API, an offline renderer)."""
