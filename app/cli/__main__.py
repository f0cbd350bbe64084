"""``python -m app.cli`` runs the workbench command line."""

from app.cli import main

main()
