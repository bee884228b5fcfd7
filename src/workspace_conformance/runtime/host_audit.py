"""One process-wide audit hook that watches the host while a window is open, and blocks stray writes and spawns.

`sys.addaudithook` is installed once, on first use (hooks cannot be removed); with no window open it costs one check
per event. While a window is open, `os.stat`, `os.lstat`, `os.access` and `os.readlink` are wrapped (they raise no
audit event), and every event is recorded unless it is the workspace's own (`owning()`, a `ContextVar` the suite's
backends set around their protocol methods) or the interpreter's (imports, its own files). Attribution to a tool is
by the `ContextVar` `calling()` sets.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ('HostEvent', 'HostWatch', 'calling', 'opens_for_writing', 'owning', 'watching_host')

Kind = Literal['write', 'read', 'process', 'connect']

_OWNED: ContextVar[bool] = ContextVar('workspace_conformance_owned', default=False)
_TOOL: ContextVar[str | None] = ContextVar('workspace_conformance_tool', default=None)
_WRITE_EVENTS = frozenset(
    {
        'os.remove',
        'os.rmdir',
        'os.rename',
        'os.mkdir',
        'os.symlink',
        'os.link',
        'os.chmod',
        'os.chown',
        'os.utime',
        'os.truncate',
        'shutil.rmtree',
        'shutil.copyfile',
        'shutil.move',
        'tempfile.mkdtemp',
        'tempfile.mkstemp',
    }
)
_READ_EVENTS = frozenset({'os.scandir', 'os.listdir', 'glob.glob', 'os.walk'})
_PROCESS_EVENTS = frozenset({'subprocess.Popen', 'os.system', 'os.posix_spawn', 'os.fork', 'os.forkpty', 'os.exec'})
_CONNECT_EVENTS = frozenset({'socket.connect', 'sqlite3.connect'})
_WRITE_MODES = frozenset('wax+')
_WRAPPED = ('stat', 'lstat', 'access', 'readlink')


@dataclass(frozen=True)
class HostEvent:
    """One thing a tool did on the host: its kind, the audit event (or wrapped call), the path, and the tool."""

    kind: Kind
    event: str
    path: str
    tool: str | None

    def __str__(self) -> str:
        by = f' by {self.tool}' if self.tool else ''
        return f'{self.event}({self.path!r}){by}'


@dataclass
class HostWatch:
    """What a window saw: every host event attributed to a tool call, outside the `allowed` roots for writes."""

    allowed: tuple[str, ...] = ()
    """Host roots a tool may write in (a local workspace's root); reads there are not recorded either."""
    events: list[HostEvent] = field(default_factory=list)
    block: bool = True
    """Raise `PermissionError` from the hook on a stray write, process or connection, so it never happens."""

    def of(self, *kinds: Kind) -> list[HostEvent]:
        """The events of those kinds, in order."""
        return [event for event in self.events if event.kind in kinds]


_WINDOW: list[HostWatch] = []
_HOOKED: list[bool] = []
_GUARD = threading.local()
_ORIGINAL: dict[str, Callable[..., Any]] = {}


@functools.cache
def _interpreter_roots() -> tuple[str, ...]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *sysconfig.get_paths().values()}
    roots.update(entry for entry in sys.path if entry and os.path.isabs(entry))
    return tuple(sorted(os.path.realpath(root) for root in roots if root))


_IGNORED_PREFIXES = ('/dev/', '/proc/', '/sys/')


def _resolve(path: object, dir_fd: object = None) -> str | None:
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str) and not isinstance(path, os.PathLike):
        return None
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not os.path.isabs(text):
        base = os.readlink(f'/proc/self/fd/{dir_fd}') if isinstance(dir_fd, int) and dir_fd >= 0 else os.getcwd()
        text = os.path.join(base, text)
    return os.path.realpath(text)


def _ignored(path: str) -> bool:
    if path.startswith(_IGNORED_PREFIXES) or path in ('/dev', '/proc') or '__pycache__' in path:
        return True
    return any(path == root or path.startswith(root + os.sep) for root in _interpreter_roots())


def opens_for_writing(args: tuple[Any, ...]) -> bool:
    """Whether the arguments of an `open` audit event open for writing (a mode with w, a, x or +, or write flags)."""
    mode = args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 else 0
    if isinstance(mode, str):
        return bool(_WRITE_MODES & set(mode))
    return isinstance(flags, int) and bool(flags & 0o3 or flags & 0o100)


def _classify(event: str, args: tuple[Any, ...]) -> tuple[Kind, list[tuple[object, object]]] | None:
    if event == 'open':
        return ('write' if opens_for_writing(args) else 'read'), [(args[0] if args else None, None)]
    if event in _WRITE_EVENTS:
        paths: list[tuple[object, object]] = [(args[0], None)] if args else []
        if event == 'os.rename' and len(args) > 1:
            paths.append((args[1], None))
        if event in ('os.remove', 'os.rmdir', 'os.mkdir') and len(args) > 2:
            paths = [(args[0], args[-1])]
        return 'write', paths
    if event in _READ_EVENTS:
        return 'read', [(args[0] if args else '.', None)]
    if event in _PROCESS_EVENTS:
        return 'process', [(repr(args[:2])[:200], None)]
    if event in _CONNECT_EVENTS:
        return 'connect', [(repr(args[:2])[:200], None)]
    return None


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root + os.sep) for root in roots)


def _record(event: str, kind: Kind, raw: object, dir_fd: object) -> None:
    watch = _WINDOW[0] if _WINDOW else None
    tool = _TOOL.get()
    if watch is None or tool is None or _OWNED.get() or getattr(_GUARD, 'busy', False):
        return
    _GUARD.busy = True
    try:
        if kind in ('process', 'connect'):
            path: str | None = str(raw)
        else:
            path = _resolve(raw, dir_fd)
            if path is None or _ignored(path) or _inside(path, watch.allowed):
                return
    finally:
        _GUARD.busy = False
    watch.events.append(HostEvent(kind, event, path or '', tool))
    if watch.block and kind != 'read':
        raise PermissionError(f'workspace-conformance blocked {event}({path!r}): tools must act through ctx.workspace')


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _WINDOW:
        return
    found = _classify(event, args)
    if found is None:
        return
    kind, paths = found
    for raw, dir_fd in paths:
        if raw is None or isinstance(raw, int):
            continue
        _record(event, kind, raw, dir_fd)


def _wrapping(name: str) -> Callable[..., Any]:
    original = _ORIGINAL[name]

    def wrapped(path: Any, *args: Any, **kwargs: Any) -> Any:
        if _WINDOW and not isinstance(path, int):
            _record(f'os.{name}', 'read', path, kwargs.get('dir_fd'))
        return original(path, *args, **kwargs)

    return wrapped


@contextlib.contextmanager
def owning() -> Iterator[None]:
    """Mark the block's host I/O as the workspace backend's own: never a finding."""
    token = _OWNED.set(True)
    try:
        yield
    finally:
        _OWNED.reset(token)


@contextlib.contextmanager
def calling(tool: str) -> Iterator[None]:
    """Attribute the block's host I/O to the tool `tool` (only attributed events are recorded)."""
    token = _TOOL.set(tool)
    try:
        yield
    finally:
        _TOOL.reset(token)


@contextlib.contextmanager
def watching_host(allowed: Sequence[str] = (), *, block: bool = True) -> Iterator[HostWatch]:
    """Record (and with `block`, refuse) the host I/O of tool calls in the block; one window per process at a time."""
    if not _HOOKED:
        tempfile.gettempdir()  # its first call writes and removes a probe file
        _interpreter_roots()
        sys.addaudithook(_audit)
        _HOOKED.append(True)
    if _WINDOW:
        raise RuntimeError('watching_host() windows do not nest: one is open already')
    watch = HostWatch(allowed=tuple(os.path.realpath(root) for root in allowed), block=block)
    for name in _WRAPPED:
        _ORIGINAL.setdefault(name, getattr(os, name))
        setattr(os, name, _wrapping(name))
    _WINDOW.append(watch)
    try:
        yield watch
    finally:
        _WINDOW.clear()
        for name in _WRAPPED:
            setattr(os, name, _ORIGINAL[name])
