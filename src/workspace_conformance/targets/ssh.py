"""The `ssh` target: pydantic-ai-harness's `SSHWorkspaceBackend`, one remote directory per environment."""

from __future__ import annotations

import posixpath
import secrets
import shlex
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio.to_thread
from pydantic_ai.workspaces import ReadOnlyWorkspace, WorkspaceBackend, WorkspaceRef

from ._probe import missing_module, missing_program, probe
from .base import CapabilitySetup, NamedTarget, Target, TargetError, TargetOption
from .claims import SSH_CLAIMS

__all__ = ('SSH',)

REMOTE_ROOT = '.workspace-conformance-runs'
"""Under the login directory: each run's environments live in `REMOTE_ROOT/<run id>/`, removed at the end."""

_OPTIONS = (
    TargetOption('host', 'the destination as ssh takes it: user@host, a Host alias, or ssh://user@host:port'),
    TargetOption('port', 'ssh port (default: from your ssh configuration)'),
    TargetOption('identity', 'private key file (ssh -i)'),
    TargetOption('ssh-config', 'ssh configuration file (ssh -F)'),
)


def _connection_args(options: Mapping[str, str]) -> list[str]:
    args = ['-o', 'BatchMode=yes', '-o', 'ConnectTimeout=15']
    if 'ssh-config' in options:
        args += ['-F', options['ssh-config']]
    if 'port' in options:
        args += ['-p', options['port']]
    if 'identity' in options:
        args += ['-i', options['identity'], '-o', 'IdentitiesOnly=yes']
    return args


def _sharing_args(run_id: str) -> list[str]:
    """One master connection per run (ssh ControlMaster), so each command costs a round trip, not a handshake."""
    # A Unix socket path is limited to 107 bytes: a long TMPDIR falls back to /tmp (%C is 40 hex digits).
    directory = tempfile.gettempdir() if len(tempfile.gettempdir()) <= 40 else '/tmp'
    control = posixpath.join(directory, f'wc-ssh-{run_id[-8:]}-%C')
    return ['-o', 'ControlMaster=auto', '-o', f'ControlPath={control}', '-o', 'ControlPersist=300']


NO_CREATION = (
    "SSHWorkspaceBackend's environment is an existing remote directory: its ref exists from construction and "
    'its first operation creates nothing (documented), so there is no fresh, unconnected backend to check'
)
DECLARED_LIMITS = {
    'concurrent_first_use_shares_one_environment': NO_CREATION,
    'building_a_backend_creates_nothing': NO_CREATION,
    'cancellation_mid_create_keeps_the_ref': NO_CREATION,
    'a_failing_first_operation_still_records_the_ref': NO_CREATION,
}
EXPECTED_FAILURES = {
    'background_child_does_not_hold_up_completed_command': (
        'sshd waits until every holder of the output pipes has closed them, so run() returns only when a '
        'background child exits (documented by SSHWorkspaceBackend); the contract says run returns when the '
        'direct command exits'
    ),
}


def _missing(options: Mapping[str, str]) -> str | None:
    absent = missing_module('pydantic_ai_harness', '"workspace-conformance[harness]"') or missing_program(
        'ssh', 'openssh-client'
    )
    if absent:
        return absent
    if 'host' not in options:
        return 'no host: pass --host user@host (keys or an agent must log in without a prompt)'
    reached, why = probe(['ssh', *_connection_args(options), '-T', '--', options['host'], 'true'], timeout=30)
    return None if reached else f'cannot log in to {options["host"]} without a prompt: {why}'


_REMOVE_ROOT = """
tries=0
while [ -e "$1" ]; do
    chmod -R u+rwx -- "$1" 2>/dev/null
    rm -rf -- "$1" 2>/dev/null && [ ! -e "$1" ] && exit 0
    tries=$((tries + 1))
    [ "$tries" -ge 5 ] && { rm -rf -- "$1"; exit 1; }
    sleep 1
done
"""
"""Remove a run's root even after a rule left a directory without write permission or a process still writing in it
(each try makes everything writable again, five tries a second apart); the last try's error is the failure's."""


class _Remote:
    """Runs setup and cleanup commands on the host over the run's shared connection."""

    def __init__(self, options: Mapping[str, str], run_id: str) -> None:
        self.host = options['host']
        self.args = [*_connection_args(options), *_sharing_args(run_id)]
        self.run_root = posixpath.join(REMOTE_ROOT, run_id)

    def shell(self, script: str, *arguments: str, timeout: float = 60) -> None:
        argv = ['ssh', *self.args, '-T', '--', self.host, shlex.join(['sh', '-c', script, 'sh', *arguments])]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise TargetError(f'ssh {self.host}: setup command failed ({done.returncode}): {done.stderr.strip()}')

    def new_directory(self, *parts: str) -> str:
        """Make a new, empty remote directory below this run's root; its path is relative to the login directory."""
        path = posixpath.join(self.run_root, *parts[:-1], f'{parts[-1]}-{secrets.token_hex(4)}')
        self.shell('mkdir -p -- "$1"', path)
        return path

    def stop(self) -> None:
        """Remove the run's remote root, then close the shared connection; raises TargetError if the root stays."""
        try:
            self.shell(_REMOVE_ROOT, self.run_root, timeout=120)
        except subprocess.TimeoutExpired as timeout:
            raise TargetError(f'ssh {self.host}: removing {self.run_root} took over {timeout.timeout:.0f} s') from None
        finally:
            subprocess.run(
                ['ssh', *self.args, '-O', 'exit', '--', self.host], capture_output=True, timeout=30, check=False
            )


def _target(options: Mapping[str, str], run_id: str) -> Target:
    from pydantic_ai_harness.ssh_workspace import SSHWorkspace, SSHWorkspaceBackend

    remote = _Remote(options, run_id)
    ssh_args: Sequence[str] = remote.args

    def at(directory: str) -> WorkspaceBackend:
        backend: WorkspaceBackend = SSHWorkspaceBackend(remote.host, working_dir=directory, ssh_args=ssh_args)
        return backend

    def new(_: Path) -> WorkspaceBackend:
        return at(remote.new_directory('env'))

    def sacrificial(_: Path) -> WorkspaceBackend:
        directory = remote.new_directory('destructive', 'sacrificial')
        chain = posixpath.join(directory, 'chain', 'workspace')
        remote.shell('mkdir -p "$1"', chain)
        return at(chain)

    def attach(_: Path, ref: WorkspaceRef) -> WorkspaceBackend:
        destination, __, directory = ref.id.rpartition(':')
        if destination != remote.host:
            raise ValueError(f'ref {ref.id!r} is not on {remote.host}')
        return at(directory)

    async def remove(ref: WorkspaceRef) -> None:
        directory = ref.id.rpartition(':')[2]
        await anyio.to_thread.run_sync(lambda: remote.shell('rm -rf -- "$1"', directory))

    async def destroy(backend: WorkspaceBackend) -> None:
        ref = backend.ref
        if ref is None:
            raise ValueError('this backend has no remote directory')
        await remove(ref)

    def capability(_: Path) -> CapabilitySetup:
        # The harness's SSHWorkspace as its users attach it: one existing remote directory per rule.
        workspace: SSHWorkspace[None] = SSHWorkspace(
            remote.host, working_dir=remote.new_directory('capability'), ssh_args=ssh_args
        )
        return CapabilitySetup(capability=workspace, destroy_environment=remove, policy=ReadOnlyWorkspace)

    return Target(
        name='ssh',
        description=f"pydantic-ai-harness's SSHWorkspaceBackend on {remote.host} (no isolation claimed)",
        backend=new,
        destructive_backend=sacrificial,
        attach_backend=attach,
        destroy_environment=destroy,
        capability=capability,
        cleanup=lambda _: remote.stop(),
        declared_limits=DECLARED_LIMITS,
        expected_failures=EXPECTED_FAILURES,
        isolation_source=SSH_CLAIMS.source,
    )


SSH = NamedTarget(
    name='ssh',
    description="pydantic-ai-harness's SSHWorkspaceBackend on a host you can log in to with a key",
    build=_target,
    missing=_missing,
    options=_OPTIONS,
    extra='harness',
)
