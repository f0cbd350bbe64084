"""Data only: rubrics, prompt templates, MJCF scenes, scenarios, shortcuts, icons.

Loaded with ``importlib.resources`` so a frozen build finds them. No code lives here.
"""
