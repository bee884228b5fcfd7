"""What is wrong with a value a backend operation returned, judged by the type the protocol declares for it."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.workspaces import CommandResult, FileEntry

from .._frames import machinery_hidden

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = ('EXIT_STATUSES', 'wrong_return')

EXIT_STATUSES = range(256)
"""The exit statuses a process can have; `CommandResult.exit_code` is "the real exit code of the process"."""

_RETURNS: dict[str, tuple[type | tuple[type, ...], str]] = {
    'working_dir': (str, 'a str'),
    'realpath': (str, 'a str'),
    'read_bytes': (bytes, 'bytes'),
    'exists': (bool, 'a bool'),
    'stat': (FileEntry, 'a FileEntry'),
    'write_bytes': (type(None), 'None'),
    'make_dir': (type(None), 'None'),
    'remove': (type(None), 'None'),
}


def _kind(value: object) -> str:
    return 'None' if value is None else f'a {type(value).__name__}'


def _wrong_result(result: CommandResult) -> str | None:
    code: object = result.exit_code
    if isinstance(code, bool) or not isinstance(code, int):
        return f'returned a CommandResult whose exit_code is {_kind(code)}, not an int'
    if code not in EXIT_STATUSES:
        return f'returned exit code {code}, which no process exits with (exit statuses are 0 to 255)'
    for stream in ('stdout', 'stderr'):
        text: object = getattr(result, stream)
        if not isinstance(text, str):
            return f'returned a CommandResult whose {stream} is {_kind(text)}, not a str'
    return None


def _wrong_listing(entries: object) -> str | None:
    if isinstance(entries, str | bytes) or not isinstance(entries, Sequence):
        return f'returned {_kind(entries)}, not a sequence of FileEntry'
    for entry in entries:
        if not isinstance(entry, FileEntry):
            return f'returned a {type(entries).__name__} holding {_kind(entry)}, not only FileEntry objects'
    return None


def wrong_return(operation: str, value: object) -> str | None:
    """Why `value` cannot be what `operation` returns under the protocol (`returned None, not bytes`), or `None`."""
    if operation == 'run':
        if not isinstance(value, CommandResult):
            return f'returned {_kind(value)}, not a CommandResult'
        return _wrong_result(value)
    if operation == 'list_dir':
        return _wrong_listing(value)
    expected = _RETURNS.get(operation)
    if expected is None or isinstance(value, expected[0]):
        return None
    return f'returned {_kind(value)}, not {expected[1]}'
