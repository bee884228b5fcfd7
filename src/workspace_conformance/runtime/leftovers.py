"""What a run leaves behind, its directory and the processes working in it, removed however the run ends."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import emergency

__all__ = (
    'OWNER_FILE',
    'RUN_PREFIX',
    'StaleRun',
    'alive',
    'end_processes',
    'names_path',
    'processes_of',
    'remove_stale_runs',
    'remove_tree',
    'run_directory',
    'scratch_in_use',
    'stale_runs',
)

RUN_PREFIX = 'workspace-conformance-'
"""Every run directory's name starts with this (`certify`'s check directories too)."""
OWNER_FILE = 'owner.json'
"""In each run directory: the pid and start time of the process that owns it, so a later run can tell it is dead."""

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
def run_directory(
    prefix: str, *, while_cleaning: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext
) -> Iterator[Path]:
    """A new temporary directory for a run; afterwards, or at an emergency exit, its processes end and it is removed.

    The cleanup runs inside `while_cleaning()` and stays registered for an emergency exit until it has finished, so
    a signal that ends the process during it (see `interrupts.cleaning_up`) still removes everything.
    """
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    _write_owner(directory)

    def clean() -> None:
        end_processes(directory)
        remove_tree(directory)

    unregister = emergency.on_exit(clean)
    try:
        yield directory
    finally:
        with while_cleaning():
            clean()
            unregister()


def _start_time(pid: int) -> int | None:
    """When process `pid` started, in clock ticks since boot (field 22 of /proc/<pid>/stat); `None` if it is gone."""
    try:
        fields = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()
        return None if fields[0] in ('Z', 'X') else int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _pid_namespace() -> str | None:
    try:
        return os.readlink('/proc/self/ns/pid')
    except OSError:
        return None


def _owner() -> dict[str, Any]:
    """The record of this process as a run directory's owner: pid, start time, boot and pid namespace."""
    return {
        'pid': os.getpid(),
        'start_time': _start_time(os.getpid()),
        'boot_id': _read('/proc/sys/kernel/random/boot_id'),
        'pid_namespace': _pid_namespace(),
    }


def _write_owner(directory: Path) -> None:
    """Record this process as `directory`'s owner, atomically (a reader sees the whole record or none)."""
    partial = directory / f'.{OWNER_FILE}.partial'
    with contextlib.suppress(OSError):
        partial.write_text(json.dumps(_owner()))
        partial.replace(directory / OWNER_FILE)


@dataclass(frozen=True)
class StaleRun:
    """The directory of a run whose owner is gone, and the processes still working in it (ended on removal)."""

    directory: Path
    owner_pid: int
    why: str
    processes: tuple[int, ...] = ()

    def describe(self) -> str:
        ended = f'; ended its processes {", ".join(map(str, self.processes))}' if self.processes else ''
        return f'{self.directory} (owner pid {self.owner_pid} {self.why}{ended})'


def _dead_owner(record: Any) -> tuple[int, str] | None:
    """(pid, why) when the owner `record` describes is certainly gone; `None` when it may be alive, or is unclear."""
    if not isinstance(record, dict):
        return None
    pid, start = record.get('pid'), record.get('start_time')
    if not isinstance(pid, int) or not isinstance(start, int) or isinstance(pid, bool):
        return None
    boot = _read('/proc/sys/kernel/random/boot_id')
    if record.get('boot_id') and boot and record['boot_id'] != boot:
        return pid, 'gone: the machine has restarted since'
    if record.get('pid_namespace') != _pid_namespace():
        return None  # another pid namespace (a container sharing /tmp): its pids mean nothing here
    now = _start_time(pid)
    if now is None:
        return pid, 'gone'
    if now != start:
        return pid, 'gone: that pid is now another process'
    return None


def stale_runs(root: Path | None = None) -> list[StaleRun]:
    """Run directories in `root` (the temporary directory) whose recorded owner is gone.

    Only directories of this user that hold an owner record are considered: one without (a run of an older version,
    or one created an instant ago) or whose owner is alive, or may be, is never touched.
    """
    place = Path(tempfile.gettempdir() if root is None else root)
    found = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(place), key=lambda entry: entry.name):
            if not entry.name.startswith(RUN_PREFIX) or not entry.is_dir(follow_symlinks=False):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_uid != os.getuid():
                    continue
                record = json.loads(Path(entry.path, OWNER_FILE).read_text())
            except (OSError, ValueError):
                continue
            dead = _dead_owner(record)
            if dead is not None:
                found.append(StaleRun(Path(entry.path), owner_pid=dead[0], why=dead[1]))
    return found


def remove_stale_runs(root: Path | None = None) -> list[StaleRun]:
    """End the processes of every stale run directory in `root` and remove it; returns what was removed."""
    removed = []
    for stale in stale_runs(root):
        pids = end_processes(stale.directory)
        if remove_tree(stale.directory):
            removed.append(StaleRun(stale.directory, stale.owner_pid, stale.why, tuple(pids)))
    return removed


_SCRATCH: set[str] = set()
"""Scratch directories of rules running now, by the path the backend gave them."""
_SCRATCH_REGISTERED: list[Callable[[], None]] = []
"""The emergency cleanup of `_SCRATCH`, once registered (for the process's life)."""


def _remove_local_scratch() -> None:
    for path in sorted(_SCRATCH):
        directory = Path(path)
        if directory.is_dir():  # the backend's files are local (its scratch name is unique: never someone else's)
            end_processes(directory)
            remove_tree(directory)


def scratch_in_use(path: str) -> Callable[[], None]:
    """Track a rule's scratch directory until the returned function is called, for an emergency exit to remove.

    At an emergency exit a local scratch directory, and every process working in it, goes: under plain pytest no
    run directory is there to take them along.
    """
    if not _SCRATCH_REGISTERED:
        _SCRATCH_REGISTERED.append(emergency.on_exit(_remove_local_scratch))
    _SCRATCH.add(path)

    def forget() -> None:
        _SCRATCH.discard(path)

    return forget
