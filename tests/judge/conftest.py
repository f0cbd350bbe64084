"""The worker fixtures live with the worker (tests/storage); judge's job tests use them too."""

from tests.storage.conftest import project_root, test_kind  # noqa: F401  (pytest fixtures)
