"""One emulated E2B sandbox: its root on the host, its users, its paths, its processes and its end.

A sandbox owns a state directory on the host whose `root/` is what the sandbox sees as `/`. Where `bwrap` is
installed its commands run confined to that root (`confinement.py`). envd's file operations, which run in the
service itself, resolve paths the same way, symlinks included, so nothing outside the sandbox root is reachable but
the read-only host trees.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import stat
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from .confinement import DEFAULT_PATH, HELPER_ENVIRONMENT, READ_ONLY_HOST, Confinement, ConfinementError

__all__ = (
    'GONE',
    'OUTPUT_CHUNK',
    'USERS',
    'Fidelity',
    'Gone',
    'ProcessEnd',
    'Sandbox',
    'SandboxError',
    'SandboxProcess',
    'check_user',
    'user_from_authorization',
)

T = TypeVar('T')

USERS: Mapping[str, tuple[int, int, str]] = {'root': (0, 0, '/root'), 'user': (1000, 1000, '/home/user')}
"""The template's users as E2B's base template has them: name -> (uid, gid, home)."""

OUTPUT_CHUNK = 32 * 1024
"""The most bytes one data event carries."""

_QUEUE_EVENTS = 64
"""Events buffered per subscriber before the process's output waits for the reader (bounds memory)."""

_RETAINED_ENDS = 256
"""How many ended processes a sandbox remembers, so `Connect` to one that just ended gets its end."""

_MAX_SYMLINKS = 40


@dataclass(frozen=True)
class Fidelity:
    """Which documented E2B behaviours a plain Linux process lacks the service models (all on by default)."""

    privileged_files: bool = True
    """envd's file operations run as root, so a file's mode bits do not stop them."""
    omit_looping_symlinks: bool = True
    """A symlink that loops (or dangles) has no type in envd's answers, so the SDK leaves it out of listings."""
    end_after_pipes_close: bool = True
    """A command's end is reported once its output pipes close, not as soon as its first process exits."""


class SandboxError(Exception):
    """An envd operation failed; `code` is its Connect code name (`not_found`, `invalid_argument`, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class ProcessEnd:
    """How a process ended, as envd's end event reports it."""

    exit_code: int
    exited: bool
    status: str
    error: str | None


class Gone:
    """The event a process's streams get when its sandbox is killed under them (E2B's edge drops them)."""


GONE = Gone()

Event = tuple[str, bytes] | ProcessEnd | Gone
"""One process event for subscribers: (`stdout` | `stderr`, data), the end, or the sandbox gone."""


@dataclass
class SandboxProcess:
    """A command started in a sandbox: its host process, its config, and the streams subscribed to its events."""

    pid: int
    cmd: str
    args: list[str]
    envs: dict[str, str]
    cwd: str | None
    tag: str | None
    process: asyncio.subprocess.Process
    subscribers: set[asyncio.Queue[Event]] = field(default_factory=set)
    end: ProcessEnd | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)

    def subscribe(self) -> asyncio.Queue[Event]:
        """A new bounded queue that receives every event from now on (just the end if it already ended)."""
        queue: asyncio.Queue[Event] = asyncio.Queue(_QUEUE_EVENTS)
        if self.end is not None:
            queue.put_nowait(self.end)
        else:
            self.subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Event]) -> None:
        """Stop delivering events to `queue`."""
        self.subscribers.discard(queue)

    async def publish(self, event: Event) -> None:
        """Deliver `event` to every subscriber, waiting while one's queue is full (the output's bound)."""
        for queue in list(self.subscribers):
            with contextlib.suppress(asyncio.TimeoutError):
                # A reader that stops reading for a minute is dropped rather than stalling the process forever.
                await asyncio.wait_for(queue.put(event), 60)
                continue
            self.subscribers.discard(queue)


def _status(returncode: int) -> ProcessEnd:
    if returncode >= 0:
        status = f'exit status {returncode}'
        return ProcessEnd(returncode, True, status, status if returncode else None)
    name = {signal.SIGKILL: 'killed', signal.SIGTERM: 'terminated', signal.SIGINT: 'interrupt'}.get(
        signal.Signals(-returncode), signal.Signals(-returncode).name
    )
    status = f'signal: {name}'
    return ProcessEnd(-1, False, status, status)


class Sandbox:
    """One sandbox: created by the control plane, used through envd, killed with everything it started."""

    def __init__(
        self,
        state_dir: Path,
        *,
        template: str,
        timeout: int,
        env_vars: Mapping[str, str],
        metadata: Mapping[str, str],
        fidelity: Fidelity,
        bwrap: str | None,
    ) -> None:
        self.sandbox_id = 'i' + secrets.token_hex(10)
        self.access_token = secrets.token_urlsafe(24)
        self.template = template
        self.env_vars = dict(env_vars)
        self.metadata = dict(metadata)
        self.fidelity = fidelity
        self.bwrap = bwrap
        self.started_at = time.time()
        self.end_at = self.started_at + timeout
        self.state_dir = state_dir / self.sandbox_id
        self.root = self.state_dir / 'root'
        self.processes: dict[int, SandboxProcess] = {}
        self._ended: deque[SandboxProcess] = deque(maxlen=_RETAINED_ENDS)
        self._tasks: set[asyncio.Task[None]] = set()
        self._confinement = Confinement(bwrap, self.root, self.state_dir) if bwrap is not None else None
        self.killed = False
        self.paused = False
        """Paused with its filesystem only (E2B's `mode="filesystem"`): its files kept, its processes ended."""
        self._layout()

    # -- the root ------------------------------------------------------------------------------------------------

    def _layout(self) -> None:
        """Make the sandbox's root as E2B's base template has it: /home/user, /root, /tmp, and the host's links."""
        self.root.mkdir(parents=True)
        for name, mode in (('home/user', 0o755), ('root', 0o700), ('tmp', 0o1777), ('usr', 0o755), ('etc', 0o755)):
            path = self.root / name
            path.mkdir(parents=True, exist_ok=True)
            path.chmod(mode)
        for name in ('bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'):
            host = Path('/') / name
            if host.is_symlink():
                (self.root / name).symlink_to(os.readlink(host))
        # The sandbox's own users (the host's stay on the host).
        (self.state_dir / 'passwd').write_text(
            'root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\n'
            'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n'
        )
        (self.state_dir / 'group').write_text('root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n')

    def home(self, user: str) -> str:
        """The home directory of `user` inside the sandbox."""
        return USERS[user][2]

    def _host(self, parts: Sequence[str]) -> Path:
        if parts and parts[0] in READ_ONLY_HOST:
            return Path('/', *parts)
        return self.root.joinpath(*parts)

    def resolve(self, path: str, user: str, *, follow: bool = True) -> tuple[Path, str]:
        """The host path and the canonical sandbox path of sandbox `path`, symlinks resolved inside the sandbox.

        A relative path is relative to the user's home. Missing components are kept as given; the last one is
        followed only when `follow`. Raises `SandboxError('failed_precondition')` on a symlink loop.
        """
        if not path:
            raise SandboxError('invalid_argument', 'path is empty')
        if '\0' in path:
            raise SandboxError('invalid_argument', 'path contains a NUL byte')
        if not path.startswith('/'):
            path = self.home(user) + '/' + path
        pending = deque(part for part in path.split('/') if part not in ('', '.'))
        resolved: list[str] = []
        links = 0
        while pending:
            part = pending.popleft()
            if part == '..':
                if resolved:
                    resolved.pop()
                continue
            candidate = [*resolved, part]
            if not pending and not follow:
                resolved = candidate
                break
            try:
                info = os.lstat(self._host(candidate))
            except (FileNotFoundError, NotADirectoryError):
                resolved = candidate
                for rest in pending:
                    if rest == '..':
                        if resolved:
                            resolved.pop()
                    elif rest not in ('', '.'):
                        resolved.append(rest)
                break
            if not stat.S_ISLNK(info.st_mode):
                resolved = candidate
                continue
            links += 1
            if links > _MAX_SYMLINKS:
                raise SandboxError('failed_precondition', f'{path}: too many levels of symbolic links')
            target = os.readlink(self._host(candidate))
            if target.startswith('/'):
                resolved = []
            pending.extendleft(reversed([p for p in target.split('/') if p not in ('', '.')]))
        return self._host(resolved), '/' + '/'.join(resolved)

    def writable(self, host: Path) -> None:
        """Raise `SandboxError('permission_denied')` when `host` is in a read-only host tree."""
        if self.root not in (host, *host.parents):
            raise SandboxError('permission_denied', f'{host}: read-only file system')

    def check_access(self, host: Path, user: str, want: int) -> None:
        """When envd's file operations are not privileged, refuse `user` the access `want` (R_OK/W_OK/X_OK) lacks.

        Every file in a sandbox belongs to the user the sandbox runs it as, so the owner's mode bits decide.
        """
        if self.fidelity.privileged_files or user == 'root':
            return
        try:
            mode = os.stat(host).st_mode
        except OSError:
            return
        bits = {os.R_OK: stat.S_IRUSR, os.W_OK: stat.S_IWUSR, os.X_OK: stat.S_IXUSR}
        for flag, bit in bits.items():
            if want & flag and not mode & bit:
                raise SandboxError('permission_denied', f'{host.name}: permission denied')

    def as_envd(self, host: Path, bits: int, operation: Callable[[], T]) -> T:
        """Run the file `operation` on `host` with the rights envd has: its owner's `bits`, if mode bits deny them.

        envd runs as root, so mode bits do not stop its file operations. The service may lack root's bypass (not
        root, or root without CAP_DAC_OVERRIDE), so when `operation` is refused and the service owns `host` (every
        sandbox file is the service's on the host), `host` grants its owner `bits` for the operation's length.
        The mode is changed through a descriptor of the file itself, opened without following a final link and
        checked to lie in this sandbox's root: a sandbox process that swaps `host` or a directory above it for a
        link between the check and the change cannot turn it onto a host file.
        """
        try:
            return operation()
        except PermissionError:
            if not self.fidelity.privileged_files:
                raise
        pinned = os.open(host, os.O_PATH | os.O_NOFOLLOW)
        try:
            info = os.fstat(pinned)
            where = Path(os.readlink(f'/proc/self/fd/{pinned}'))
            root = Path(os.path.realpath(self.root))
            if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid() or not where.is_relative_to(root):
                raise PermissionError(f'{host.name}: permission denied')
            through = f'/proc/self/fd/{pinned}'  # the inode the descriptor holds, whatever the path names now
            os.chmod(through, stat.S_IMODE(info.st_mode) | bits)
            try:
                return operation()
            finally:
                with contextlib.suppress(OSError):
                    os.chmod(through, stat.S_IMODE(info.st_mode))
        finally:
            os.close(pinned)

    # -- processes ----------------------------------------------------------------------------------------------

    def _environment(self, user: str, envs: Mapping[str, str]) -> dict[str, str]:
        home = self.home(user)
        env = {
            'PATH': DEFAULT_PATH,
            'HOME': home if self.bwrap else str(self.resolve(home, user)[0]),
            'USER': user,
            'LOGNAME': user,
            'SHELL': '/bin/bash',
            'LANG': 'C.UTF-8',
            'E2B_SANDBOX': 'true',
            'E2B_SANDBOX_ID': self.sandbox_id,
            'E2B_TEMPLATE_ID': self.template,
        }
        env.update(self.env_vars)
        env.update(envs)
        return env

    async def _argv(self, user: str, cwd: str, cmd: str, args: Sequence[str], env: Mapping[str, str]) -> list[str]:
        if self._confinement is None:
            return [cmd, *args]
        uid, gid, _ = USERS[user]
        try:
            return await self._confinement.argv(uid, gid, cwd, cmd, args, env)
        except ConfinementError as error:
            raise SandboxError('internal', str(error)) from None

    async def start(
        self,
        *,
        cmd: str,
        args: Sequence[str],
        envs: Mapping[str, str],
        cwd: str | None,
        user: str,
        tag: str | None,
        stdin: bool,
    ) -> tuple[SandboxProcess, asyncio.Queue[Event]]:
        """Start `cmd args` as `user` in `cwd` (default: the home); returns it and a queue of its events."""
        if self.killed or self.paused:
            raise SandboxError('unavailable', f'sandbox {self.sandbox_id} was not found')
        where = cwd or self.home(user)
        host_cwd, where = self.resolve(where, user)
        if not host_cwd.is_dir():
            raise SandboxError('invalid_argument', f'cwd {where!r} is not a directory')
        env = self._environment(user, envs)
        argv = await self._argv(user, where, cmd, args, env)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd='/' if self.bwrap else host_cwd,
                env=HELPER_ENVIRONMENT if self.bwrap else env,
                start_new_session=True,
            )
        except OSError as error:
            raise SandboxError('invalid_argument', f'error starting process {cmd!r}: {error}') from error
        handle = SandboxProcess(process.pid, cmd, list(args), dict(envs), cwd, tag, process)
        queue = handle.subscribe()
        self.processes[handle.pid] = handle
        task = asyncio.get_running_loop().create_task(self._pump(handle))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return handle, queue

    async def _pump(self, handle: SandboxProcess) -> None:
        """Read the process's output into its events, then report its end."""
        process = handle.process

        async def read(stream: asyncio.StreamReader | None, name: str) -> None:
            if stream is None:
                return
            while chunk := await stream.read(OUTPUT_CHUNK):
                await handle.publish((name, chunk))

        readers = [
            asyncio.ensure_future(read(process.stdout, 'stdout')),
            asyncio.ensure_future(read(process.stderr, 'stderr')),
        ]
        try:
            if self.fidelity.end_after_pipes_close:
                await asyncio.gather(*readers, return_exceptions=True)
                returncode = await process.wait()
            else:
                # `Process.wait()` also waits for the pipes to close; the return code is known as soon as it exits.
                while process.returncode is None:
                    await asyncio.sleep(0.01)
                returncode = process.returncode
                # What is already in the pipes is still read; a child holding them open is not waited for.
                await asyncio.wait(readers, timeout=0.05)
                for reader in readers:
                    reader.cancel()
        finally:
            for reader in readers:
                reader.cancel()
        handle.end = _status(returncode)
        await handle.publish(handle.end)
        handle.subscribers.clear()
        handle.ended.set()
        self.processes.pop(handle.pid, None)
        self._ended.append(handle)

    def find(self, pid: int | None, tag: str | None) -> SandboxProcess:
        """The running (or just ended) process with `pid` or `tag`; `SandboxError('not_found')` otherwise."""
        for handle in (*self.processes.values(), *reversed(self._ended)):
            if (pid is not None and handle.pid == pid) or (tag is not None and handle.tag == tag):
                return handle
        raise SandboxError(
            'not_found', f'process with {"pid " + str(pid) if pid is not None else "tag " + str(tag)} not found'
        )

    def signal(self, handle: SandboxProcess, signum: int) -> None:
        """Send `signum` to the process's group (bwrap's namespace ends with it)."""
        if handle.end is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(handle.pid, signum)

    async def kill(self) -> None:
        """End every process the sandbox started and remove its files; the sandbox is then gone."""
        self.killed = True
        await self._end_processes()
        await asyncio.to_thread(_remove_tree, self.state_dir)

    async def pause(self) -> None:
        """End every process and the sandbox's namespaces, keeping its files: a filesystem-only pause."""
        self.paused = True
        await self._end_processes()

    def resume(self, timeout: int) -> None:
        """Run the paused sandbox again for `timeout` seconds: cold-booted, its files as they were, no process."""
        self.paused = False
        self.end_at = time.time() + timeout

    async def _end_processes(self) -> None:
        """End every process the sandbox started, and its namespaces (a later command starts new ones)."""
        for handle in list(self.processes.values()):
            for queue in list(handle.subscribers):
                while queue.full():
                    queue.get_nowait()
                queue.put_nowait(GONE)
            handle.subscribers.clear()
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(handle.pid, signal.SIGKILL)
        if self._confinement is not None:
            await self._confinement.end()
        for handle in list(self.processes.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(handle.process.wait(), 10)
        self._sweep()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.processes.clear()

    def _sweep(self) -> None:
        """Kill any process still working in the sandbox's root (one that left its process group, unconfined)."""
        root = str(self.root)
        for entry in os.scandir('/proc'):
            if not entry.name.isdigit():
                continue
            try:
                cwd = os.readlink(f'/proc/{entry.name}/cwd')
            except OSError:
                continue
            if cwd == root or cwd.startswith(root + '/'):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(entry.name), signal.SIGKILL)


def _remove_tree(path: Path) -> None:
    """Remove `path` even where a sandbox left directories without write or search permission."""

    def grant(function: object, name: str, _: object) -> None:
        # Never through a link: chmod follows one, and a sandbox's link may name any host file.
        for path in (os.path.dirname(name), name):
            if not os.path.islink(path):
                with contextlib.suppress(OSError):
                    os.chmod(path, 0o700)
        if os.path.isdir(name) and not os.path.islink(name):
            shutil.rmtree(name, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(name)

    if path.exists():
        shutil.rmtree(path, onerror=grant)


def user_from_authorization(value: str | None) -> str:
    """The user an envd request acts as: Basic auth `name:` (E2B's way), else the template's default, `user`."""
    import base64
    import binascii

    if not value:
        return 'user'
    scheme, _, token = value.partition(' ')
    if scheme.lower() != 'basic':
        raise SandboxError('invalid_argument', 'the Authorization header is not Basic')
    try:
        name = base64.b64decode(token, validate=True).decode().partition(':')[0]
    except (binascii.Error, UnicodeDecodeError) as error:
        raise SandboxError('invalid_argument', 'the Authorization header does not decode') from error
    return check_user(name or 'user')


def check_user(name: str) -> str:
    """`name` if the sandbox has that user; `SandboxError('invalid_argument')` otherwise."""
    if name not in USERS:
        raise SandboxError(
            'invalid_argument', f"user {name!r} does not exist in the sandbox (it has 'root' and 'user')"
        )
    return name
