"""The view layer (PySide6) and the ``workbench`` command line. The only package that imports Qt."""
