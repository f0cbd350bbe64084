"""Job commands: ``workbench worker`` (built in issue 3)."""

from __future__ import annotations

import click

COMMANDS: list[click.Command] = []
