"""One guard for what comes from files the workbench did not write (DESIGN: files from elsewhere
are hostile until checked).

- :mod:`._paths`: a path named by a file (a bundle member, a video reference, an MJCF include, a
  mesh, a playlist entry) must resolve inside its own root, never through a symlink out of it;
  a name that becomes a file name (a camera, a track) is made safe first.
- :mod:`._limits`: how big, how deep, how many: the limits as data (:data:`LIMITS`), and readers
  that check them before the work (JSON by size and depth, integers in SQLite's range, text by
  length), each refusal one line naming the file, the field and the limit.

Every importer and exporter uses these; none has its own copy. No SQL, no Qt, no media.
"""

from storage.guard._limits import (
    LIMITS,
    LimitError,
    Limits,
    check_int,
    check_size,
    check_text,
    load_json,
    loads_json,
)
from storage.guard._paths import PathError, inside, safe_name

__all__ = [
    "LIMITS",
    "LimitError",
    "Limits",
    "PathError",
    "check_int",
    "check_size",
    "check_text",
    "inside",
    "load_json",
    "loads_json",
    "safe_name",
]
