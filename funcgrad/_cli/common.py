"""What the subcommands share: the one kind of error that means "you typed it wrong"."""
from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(Exception):
    """A mistake on the command line (missing file, bad MODULE:FUNCTION, bad shapes):
    reported in one line without a traceback, exit status 2."""
