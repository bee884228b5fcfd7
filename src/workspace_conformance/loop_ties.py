"""Evidence that a backend's code is tied to one event loop: the errors asyncio-only code raises on trio, and back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from ._frames import error_chain, is_backend_file

__all__ = ('EVENT_LOOPS', 'loop_tie', 'tie_hint', 'where_raised')

EVENT_LOOPS = ('asyncio', 'trio')

_ASYNCIO_MESSAGES = ('no running event loop', 'no current event loop', 'framework like asyncio')
"""What asyncio's `get_running_loop`/`get_event_loop` say outside asyncio, and trio when it gets asyncio's yields."""
_TRIO_MESSAGES = ('must be called from async context', 'task got bad yield')
"""What trio's functions say outside trio, and asyncio when it is awaited trio code."""


def loop_tie(error: BaseException, running: str) -> str | None:
    """The loop other than `running` that `error` (or what it holds or came from) shows its code is tied to, or None."""
    for found in error_chain(error):
        tied = _evidence(found, running)
        if tied is not None and tied != running:
            return tied
    return None


def where_raised(error: BaseException) -> str | None:
    """`file.py:LINE` of the innermost frame of `error` in the backend's own code (no library's), or None."""
    for found in error_chain(error):
        frames = _frames(found.__traceback__)
        places = [f'{Path(file).name}:{line}' for file, line, _ in frames if is_backend_file(file)]
        if places:
            return places[-1]
    return None


def tie_hint(tied: str, running: str) -> str:
    """The one-line hint for a failure on `running` that code tied to the `tied` loop raised."""
    return (
        f'hint: the backend called {tied}-only code on {running}: make it loop-neutral with anyio, '
        f'or declare it {tied}-only'
    )


def _evidence(error: BaseException, running: str) -> str | None:
    """The loop one exception shows its code is tied to, from its type, message and the frame that raised it."""
    if any(kind.__name__ == 'AsyncLibraryNotFoundError' for kind in type(error).__mro__):  # sniffio's
        return next((loop for loop in EVENT_LOOPS if loop != running), None)
    try:
        message = str(error).lower()
    except Exception:
        message = ''
    if isinstance(error, RuntimeError | TypeError):
        if any(text in message for text in _ASYNCIO_MESSAGES):
            return 'asyncio'
        if any(text in message for text in _TRIO_MESSAGES):
            return 'trio'
    if isinstance(error, RuntimeError):
        frames = list(_frames(error.__traceback__))
        if frames:
            top = frames[-1][2].split('.', 1)[0]
            if top in EVENT_LOOPS:
                return top
    return None


def _frames(traceback: TracebackType | None) -> Iterator[tuple[str, int, str]]:
    """(file, line, module) of each frame of `traceback`, outermost first."""
    while traceback is not None:
        frame = traceback.tb_frame
        module = frame.f_globals.get('__name__')
        yield frame.f_code.co_filename, traceback.tb_lineno, module if isinstance(module, str) else ''
        traceback = traceback.tb_next
