"""The one user-facing error base of the workbench.

Every error that means "what you gave or asked for cannot be used" — a file, a field, an id, a
setting, missing data — derives from :class:`UserError`, whichever package raises it. The CLI
catches this base once (one line, exit 2) and the GUI once (a message box); any other exception
is a bug and is reported as one, with its traceback written to a log file.

It lives in ``annotation`` because that is the bottom layer: every other package may import it.
"""

from __future__ import annotations


class UserError(Exception):
    """A user's input or request that cannot be carried out; the message says what and why.

    Subclasses keep their historical second base (``ValueError``, ``LookupError`` …) so existing
    ``except ValueError`` callers go on working.
    """
