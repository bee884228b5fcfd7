"""A sandbox's confinement by bubblewrap: whether it works here, and the namespaces each command of a sandbox joins.

Where `bwrap` is installed every command runs in its own user, PID, IPC and UTS namespaces with the sandbox's root
bound as `/`, the host's `/usr` and `/etc` bound read-only over it (with the sandbox's own `/etc/passwd` and
`/etc/group`), and a fresh `/proc` and `/dev`: one set of namespaces per user and sandbox, kept by a sleeping init,
that each command enters with `nsenter`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ('DEFAULT_PATH', 'HELPER_ENVIRONMENT', 'READ_ONLY_HOST', 'Confinement', 'ConfinementError', 'bwrap_path')

READ_ONLY_HOST = ('usr', 'etc')
"""Top-level directories taken read-only from the host: the programs and their configuration."""

DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
"""The `PATH` of a sandbox's commands, and of the helpers that confine them."""
HELPER_ENVIRONMENT = {'PATH': DEFAULT_PATH}
"""All bwrap and nsenter get from the service's environment: nothing of the host's reaches a sandbox."""


class ConfinementError(Exception):
    """bwrap could not bring a sandbox's namespaces up; the message says what went wrong."""


def bwrap_path() -> str | None:
    """The `bwrap` executable when it and `nsenter` are installed and a command can join its namespaces, else None.

    Joining needs privileges over the namespaces bwrap made: root has them; an unprivileged user, whose
    `nsenter` cannot enter a PID namespace of a user namespace it owns before entering that (util-linux 2.38),
    may not. One probe sandbox tells.
    """
    bwrap = shutil.which('bwrap')
    if not bwrap or not shutil.which('nsenter'):
        return None
    return bwrap if _joinable(bwrap) else None


def _joinable(bwrap: str) -> bool:
    import subprocess

    info_read, info_write = os.pipe()
    argv = [bwrap, '--unshare-user', '--unshare-pid', '--die-with-parent', '--info-fd', str(info_write)]
    for name in READ_ONLY_HOST:
        argv += ['--ro-bind', f'/{name}', f'/{name}']
    for name in ('bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'):
        if os.path.islink(f'/{name}'):
            argv += ['--symlink', os.readlink(f'/{name}'), f'/{name}']
    argv += ['--proc', '/proc', '--dev', '/dev', '--', '/usr/bin/sleep', '30']
    try:
        holder = subprocess.Popen(
            argv,
            pass_fds=(info_write,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=HELPER_ENVIRONMENT,
        )
    except OSError:
        os.close(info_read)
        return False
    finally:
        os.close(info_write)
    try:
        child = int(json.loads(_read_all(info_read))['child-pid'])
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            children = Path(f'/proc/{child}/task/{child}/children').read_text().split()
            if children:
                break
            time.sleep(0.005)
        else:
            return False
        joined = subprocess.run(
            [
                'nsenter',
                '--target',
                children[0],
                '--user',
                '--mount',
                '--pid',
                '--root',
                '--wdns=/',
                '--',
                '/usr/bin/true',
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            env=HELPER_ENVIRONMENT,
            check=False,
        )
        return joined.returncode == 0
    except (OSError, ValueError, KeyError, TypeError, subprocess.TimeoutExpired):
        return False
    finally:
        holder.kill()
        holder.wait()


class Confinement:
    """The bubblewrap namespaces of one sandbox: one set per user, started on first use, ended with `kill`."""

    def __init__(self, bwrap: str, root: Path, state_dir: Path) -> None:
        self.bwrap = bwrap
        self.root = root
        self.state_dir = state_dir
        self.holders: dict[tuple[int, int], tuple[asyncio.subprocess.Process, int]] = {}
        """Per user's (uid, gid): the bwrap process holding its namespaces, and the host pid of their sleeper."""
        self._lock = asyncio.Lock()

    def _namespace_argv(self, uid: int, gid: int) -> list[str]:
        """The bwrap arguments for the namespaces as the user `uid`:`gid` sees them (read by bwrap from a pipe)."""
        argv = ['--unshare-user', '--uid', str(uid), '--gid', str(gid)]
        argv += ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--hostname', 'e2b', '--die-with-parent']
        argv += ['--bind', str(self.root), '/']
        for name in READ_ONLY_HOST:
            argv += ['--ro-bind', f'/{name}', f'/{name}']
        argv += ['--ro-bind', str(self.state_dir / 'passwd'), '/etc/passwd']
        argv += ['--ro-bind', str(self.state_dir / 'group'), '/etc/group']
        return [*argv, '--proc', '/proc', '--dev', '/dev', '--chdir', '/']

    async def _holder(self, uid: int, gid: int) -> int:
        """The host pid of the init of the namespaces of user `uid`:`gid` in this sandbox, started on first use.

        One PID namespace per user and sandbox, kept by a process that sleeps, so a command's background and
        detached children outlive it, a later command sees and signals them, and killing the namespace's init
        ends them all. bwrap reads its arguments from a pipe, so the sandbox's `/proc/1/cmdline` names no host
        path.
        """
        async with self._lock:
            if (uid, gid) in self.holders:
                return self.holders[uid, gid][1]
            args_read, args_write = os.pipe()
            info_read, info_write = os.pipe()
            try:
                os.write(args_write, b''.join(arg.encode() + b'\0' for arg in self._namespace_argv(uid, gid)))
                os.close(args_write)
                holder = await asyncio.create_subprocess_exec(
                    self.bwrap,
                    '--args',
                    str(args_read),
                    '--info-fd',
                    str(info_write),
                    '--',
                    '/usr/bin/sleep',
                    'infinity',
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.PIPE,
                    pass_fds=(args_read, info_write),
                    start_new_session=True,
                    env=HELPER_ENVIRONMENT,
                )
            finally:
                os.close(args_read)
                os.close(info_write)
            info = await asyncio.to_thread(_read_all, info_read)
            try:
                child = int(json.loads(info)['child-pid'])
            except (ValueError, KeyError, TypeError):
                error = b''
                if holder.stderr is not None:
                    with contextlib.suppress(Exception):
                        error = await asyncio.wait_for(holder.stderr.read(), 5)
                with contextlib.suppress(ProcessLookupError):
                    holder.kill()
                await holder.wait()
                raise ConfinementError(f'bwrap could not start the sandbox: {error.decode(errors="replace")}') from None
            # The namespace's init reports its pid before it has moved into the new root; its `sleep`, exec'd once
            # everything is set up, is what commands join.
            sleeper = await _first_child(child, 'sleep')
            if sleeper is None:
                with contextlib.suppress(ProcessLookupError):
                    holder.kill()
                await holder.wait()
                raise ConfinementError('bwrap started, but the sandbox did not come up within 10 s')
            self.holders[uid, gid] = (holder, sleeper)
            return sleeper

    async def argv(
        self, uid: int, gid: int, cwd: str, cmd: str, args: Sequence[str], env: Mapping[str, str]
    ) -> list[str]:
        """The argv that runs `cmd args` as `uid`:`gid` in `cwd` inside the sandbox's namespaces, with only `env`."""
        init = await self._holder(uid, gid)
        argv = ['nsenter', '--target', str(init), '--user', '--mount', '--pid', '--ipc', '--uts', '--root']
        argv += [f'--wdns={cwd}', '--setuid', str(uid), '--setgid', str(gid), '--', '/usr/bin/env', '-i']
        return [*argv, *(f'{key}={value}' for key, value in env.items()), cmd, *args]

    def kill(self) -> None:
        """Kill every namespace's init, and so every process in it, and the bwrap processes holding them."""
        for holder, init in self.holders.values():
            # Killing a PID namespace's init (the sleeper's parent) kills every process in it.
            with contextlib.suppress(OSError, ValueError):
                parent = int(Path(f'/proc/{init}/stat').read_text().rpartition(')')[2].split()[1])
                os.kill(parent, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(init, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                holder.kill()

    async def wait(self) -> None:
        """Wait (up to 10 s each) for the bwrap processes holding the namespaces to end."""
        for holder, _ in self.holders.values():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(holder.wait(), 10)

    async def end(self) -> None:
        """Kill the namespaces and wait for them; the next command starts new ones (a sandbox booted again)."""
        async with self._lock:
            self.kill()
            await self.wait()
            self.holders.clear()


async def _first_child(pid: int, name: str) -> int | None:
    """The pid of the first child of `pid` whose command name is `name`, waited for up to 10 s."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            children = Path(f'/proc/{pid}/task/{pid}/children').read_text().split()
            for child in children:
                if Path(f'/proc/{child}/comm').read_text().strip() == name:
                    return int(child)
        await asyncio.sleep(0.005)
    return None


def _read_all(fd: int) -> bytes:
    """Everything readable from `fd` until end of file; the fd is closed."""
    chunks = []
    try:
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b''.join(chunks)
