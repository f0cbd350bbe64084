"""Versioned prompt templates of the VLM judges (data only; read with importlib.resources)."""
