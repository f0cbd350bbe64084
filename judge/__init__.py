"""VLM judges, model clients and the job runner (built in issue 3)."""

__all__: list[str] = []
