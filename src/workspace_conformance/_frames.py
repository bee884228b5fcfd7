"""Where a failure happened, as data: the backend's own frames, and which frames are the suite's machinery.

A rule's failure is read by a backend author: the frames that matter are those of their backend (and, under pytest,
the rule's own body). The suite's guard, tracing proxy, concurrency, rebuild wrapper and Hypothesis glue say nothing
about the backend, so pytest's traceback of a rule leaves them out unless `--tb=long`, `-v` or `--full-trace` asks.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sysconfig
import traceback
from collections.abc import Iterator
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from types import TracebackType

import pytest

__all__ = (
    'FRAMES_SHOWN',
    'backend_frames',
    'error_chain',
    'hiding_machinery',
    'is_backend_file',
    'leaf',
    'machinery_hidden',
    'shows_internal_frames',
    'traceback_of',
)

FRAMES_SHOWN = 4
"""The backend's innermost frames a failure keeps: enough to find the line, never a page."""

_CAUSES_FOLLOWED = 3
"""How far down an exception's explicit causes the backend's frames are looked for."""
_PACKAGE = Path(__file__).resolve().parent
_HIDING: ContextVar[bool] = ContextVar('workspace_conformance_hiding_machinery', default=False)
_NOT_THE_BACKEND = (
    *('pytest', '_pytest', 'pluggy', 'anyio', 'trio', 'asyncio', 'hypothesis', 'sniffio', 'outcome'),
    'pydantic_ai.workspaces.workspace',
)
"""Modules whose frames run a rule, an event loop or pydantic-ai's `Workspace` facade, never a backend's own code."""


@cache
def _foreign_roots() -> tuple[str, ...]:
    """Directories whose files are never a backend's own: this package, the runners' packages, the stdlib."""
    roots = {str(_PACKAGE)}
    for name in ('stdlib', 'platstdlib'):
        path = sysconfig.get_paths().get(name)
        if path:
            roots.add(str(Path(path).resolve()))
    for name in _NOT_THE_BACKEND:
        try:
            module = importlib.util.find_spec(name)
        except (ImportError, ValueError):  # not installed (its parent package missing)
            continue
        origin = getattr(module, 'origin', None) if module is not None else None
        if origin:
            found = Path(origin).resolve()
            roots.add(str(found.parent if found.name == '__init__.py' else found))
    return tuple(sorted(roots))


def is_backend_file(filename: str) -> bool:
    """Whether a frame's file is the backend's own code: a real file outside the package, the runners and stdlib."""
    if not filename or filename.startswith('<'):
        return False
    path = str(Path(filename).resolve())
    return not any(path == root or path.startswith(root + os.sep) for root in _foreign_roots())


def leaf(error: BaseException) -> BaseException:
    """The one exception an exception group holds (nested or not), else `error` itself."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def _shown(filename: str) -> str:
    """A frame's file relative to the current directory when it lies under it, else as recorded."""
    try:
        return os.path.relpath(filename) if Path(filename).resolve().is_relative_to(Path.cwd()) else filename
    except (OSError, ValueError):
        return filename


def backend_frames(error: BaseException | None) -> list[str]:
    """The backend's own frames `error` passed through, innermost last, as `file:line in function` (a few at most)."""
    for _ in range(_CAUSES_FOLLOWED):  # a rule's `raise AssertionError(...) from error`: the backend's error has them
        if error is None:
            break
        error = leaf(error)
        found = [
            f'{_shown(frame.filename)}:{frame.lineno} in {frame.name}'
            for frame in traceback.extract_tb(error.__traceback__)
            if is_backend_file(frame.filename)
        ]
        if found:
            return found[-FRAMES_SHOWN:]
        error = error.__cause__
    return []


def machinery_hidden(excinfo: object) -> bool:
    """The `__tracebackhide__` of the suite's machinery modules: true while pytest shows a rule's failure.

    Each module of the machinery (guard, tracing, concurrency, rebuild wrapper, Hypothesis glue) sets its global
    `__tracebackhide__` to this, so pytest leaves its frames out; `hiding_machinery` says when.
    """
    return _HIDING.get()


@contextlib.contextmanager
def hiding_machinery(config: pytest.Config) -> Iterator[None]:
    """While pytest makes a rule's report: hide the machinery's frames, unless `--tb=long`, `-v` or `--full-trace`."""
    token = _HIDING.set(not shows_internal_frames(config))
    try:
        yield
    finally:
        _HIDING.reset(token)


def shows_internal_frames(config: pytest.Config) -> bool:
    """Whether the user asked for the suite's own frames too: `--tb=long`, `-v` or `--full-trace`."""
    return (
        config.getoption('tbstyle', 'auto') == 'long'
        or config.get_verbosity() > 0
        or bool(config.getoption('fulltrace', False))
    )


def traceback_of(error: BaseException) -> TracebackType | None:
    """The traceback of what a rule saw fail (a group's one exception's), for the failure that reports it."""
    return leaf(error).__traceback__


def error_chain(error: BaseException) -> Iterator[BaseException]:
    """`error`, the members of an exception group, and what each was raised from or during; each once."""
    seen: set[int] = set()
    pending = [error]
    while pending and len(seen) < 32:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                pending.append(linked)
