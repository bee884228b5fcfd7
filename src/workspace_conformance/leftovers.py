"""What a run leaves behind, its directory and the processes working in it, removed however the run ends."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from . import emergency

__all__ = ('alive', 'end_processes', 'names_path', 'processes_of', 'remove_tree', 'run_directory')

TERM_GRACE = 1.0
"""Seconds a leftover process has to exit after SIGTERM before it gets SIGKILL."""


_PATH_ENDS = (b'', b'/', b'\0', b':')
"""What may follow a directory's name where it is named: nothing, a path below it, the next argument or variable,
or the next entry of a path list (`/x/a-trio` does not name `/x/a`)."""


def names_path(data: bytes, place: bytes) -> bool:
    """Whether `data` (a path, an argv or environment block, a string) names `place` or a path under it."""
    start = data.find(place)
    while start != -1:
        end = start + len(place)
        if data[end : end + 1] in _PATH_ENDS:
            return True
        start = data.find(place, start + 1)
    return False


def _mentions(pid: int, needle: bytes) -> bool:
    """Whether the process works in, was started with, or inherited an environment that names `needle`."""
    proc = Path('/proc') / str(pid)
    with contextlib.suppress(OSError):
        if names_path(os.fsencode(os.readlink(proc / 'cwd')), needle):
            return True
    for name in ('cmdline', 'environ'):
        with contextlib.suppress(OSError):
            if names_path((proc / name).read_bytes(), needle):
                return True
    return False


def processes_of(directory: Path) -> list[int]:
    """Live processes (other than this one) whose working directory, arguments or environment name `directory`.

    Every process a run starts inherits the run's settings, works in one of its environments, or is handed paths
    inside them, so this finds a run's processes also after they detached into a session of their own.
    Empty where there is no `/proc`.
    """
    needle = os.fsencode(str(directory))
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir('/proc'):
            if entry.name.isdigit() and int(entry.name) != os.getpid() and _mentions(int(entry.name), needle):
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is neither a zombie nor dead."""
    try:
        state = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ('Z', 'X')


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def end_processes(directory: Path) -> list[int]:
    """SIGTERM the processes of `directory`, SIGKILL those still alive `TERM_GRACE` s later; returns their pids."""
    pids = processes_of(directory)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + TERM_GRACE
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        for pid in pids:
            _reap(pid)
        time.sleep(0.05)
    for pid in pids:
        if alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _reap(pid)
    return pids


def remove_tree(directory: Path, attempts: int = 5) -> bool:
    """Remove `directory` and everything in it, trying again while something still writes there; True when gone."""
    for _ in range(attempts):
        shutil.rmtree(directory, ignore_errors=True)
        if not directory.exists():
            return True
        time.sleep(0.1)
    return not directory.exists()


@contextlib.contextmanager
def run_directory(prefix: str) -> Iterator[Path]:
    """A new temporary directory for a run; afterwards, or at an emergency exit, its processes end and it is removed."""
    directory = Path(tempfile.mkdtemp(prefix=prefix))

    def clean() -> None:
        end_processes(directory)
        remove_tree(directory)

    unregister = emergency.on_exit(clean)
    try:
        yield directory
    finally:
        unregister()
        clean()
