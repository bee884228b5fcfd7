"""Sandboxes that pretend: each claims isolation that one of its options gives away, the way a real sandbox might.

All but the first are the outsider's bubblewrap jail (tests/isolation/outsider_bwrap.py) with one option changed.
None of them can harm the host beyond the suite's canaries: those are all they are pointed at.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic_ai.workspaces import CommandResult, LocalWorkspaceBackend, WorkspaceBackend, WorkspaceCommand

from ...isolation.outsider_bwrap import JAIL, BwrapJail
from ..registry import pretends, shared_dir

_UNSHARED_BUT_PIDS = ('--unshare-user', '--unshare-ipc', '--unshare-net', '--unshare-uts', '--unshare-cgroup-try')


def _replaced(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[str, ...]:
    """The jail's options with the run `old` (a flag and its values) replaced by `new`."""
    for start in range(len(JAIL)):
        if JAIL[start : start + len(old)] == old:
            return (*JAIL[:start], *new, *JAIL[start + len(old) :])
    raise ValueError(f'the jail has no options {old}')


@pretends(
    name='local_claims_all',
    kills=[
        'host_temp_file_is_unreadable',
        'file_beside_the_workspace_is_unreadable',
        'host_temp_file_cannot_be_changed',
        'host_temp_listing_hides_the_canary',
        'host_process_is_invisible',
        'host_process_cannot_be_signalled',
        'host_loopback_listener_is_unreachable',
        'host_unix_socket_is_unreachable',
    ],
    bug='A plain LocalWorkspaceBackend sold as a sandbox: its commands run on the host itself.',
)
def local_claims_all(run_dir: Path) -> WorkspaceBackend:
    return LocalWorkspaceBackend(shared_dir(run_dir))


@pretends(
    name='jail_sharing_the_network',
    kills=['host_loopback_listener_is_unreachable'],
    bug="The jail keeps the host's network namespace (bwrap --share-net) so that package installs work.",
)
def jail_sharing_the_network(run_dir: Path) -> WorkspaceBackend:
    return BwrapJail(shared_dir(run_dir), jail=(*JAIL, '--share-net'))


@pretends(
    name='jail_sharing_tmp',
    kills=[
        'host_temp_file_is_unreadable',
        'host_temp_file_cannot_be_changed',
        'host_temp_listing_hides_the_canary',
        'host_unix_socket_is_unreachable',
    ],
    bug="The jail binds the host's /tmp into the sandbox instead of a private one, to share caches.",
)
def jail_sharing_tmp(run_dir: Path) -> WorkspaceBackend:
    return BwrapJail(shared_dir(run_dir), jail=_replaced(('--tmpfs', '/tmp'), ('--bind', '/tmp', '/tmp')))


@pretends(
    name='jail_sharing_pids',
    kills=['host_process_is_invisible', 'host_process_cannot_be_signalled'],
    bug="The jail unshares every namespace but the pid one, so its /proc shows and signals the host's processes.",
)
def jail_sharing_pids(run_dir: Path) -> WorkspaceBackend:
    return BwrapJail(shared_dir(run_dir), jail=_replaced(('--unshare-all',), _UNSHARED_BUT_PIDS))


@pretends(
    name='jail_binding_the_parent',
    kills=['file_beside_the_workspace_is_unreadable'],
    bug="The jail binds the workspace's parent directory too, so tools can see sibling checkouts.",
)
def jail_binding_the_parent(run_dir: Path) -> WorkspaceBackend:
    root = shared_dir(run_dir).resolve()
    return BwrapJail(root, jail=(*JAIL, '--ro-bind', str(root.parent), str(root.parent)))


class _PassesTheEnvironment(BwrapJail):
    """The jail, with the runner's whole environment set in the sandbox under each command's own variables."""

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        return await super().run(command, shell=shell, env={**os.environ, **(env or {})}, timeout=timeout)


@pretends(
    name='jail_passing_the_environment',
    kills=['runner_variable_never_reaches_commands'],
    bug="The jail clears the environment, then sets the caller's os.environ in it so that PATH and HOME work.",
)
def jail_passing_the_environment(run_dir: Path) -> WorkspaceBackend:
    return _PassesTheEnvironment(shared_dir(run_dir))
