"""The `bubblewrap` target: pydantic-ai-harness's `BubblewrapWorkspace` around a local directory."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic_ai.workspaces import LocalWorkspaceBackend, Workspace, WorkspaceBackend, WorkspaceRef

from ._probe import missing_module, missing_program, probe
from .base import CapabilitySetup, NamedTarget, Target, TargetOption
from .claims import BUBBLEWRAP_CLAIMS
from .local import (
    LazyLocalBackend,
    destroy_local_environment,
    local_capability,
    sacrificial_directory,
    shared_directory,
)

__all__ = ('BUBBLEWRAP',)

_PROBE = ['bwrap', '--unshare-user', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true']


def _missing(_: Mapping[str, str]) -> str | None:
    absent = missing_module('pydantic_ai_harness', '"workspace-conformance[harness]"') or missing_program(
        'bwrap', 'bubblewrap'
    )
    if absent:
        return absent
    works, why = probe(_PROBE)
    return None if works else f'bwrap cannot start a sandbox here (user namespaces?): {why}'


PRIVATE_TMP_LOSES_PAGED_LISTINGS = (
    "bwrap gives every command a new empty /tmp, but pydantic-ai's shell-derived filesystem pages a listing "
    'over 64 KiB through a file in $TMPDIR (default /tmp) that a second command reads back, so list_dir of a '
    'large directory raises "damaged or incomplete output"; the contract says list_dir returns every entry'
)
DESTROYED_DIRECTORY_STAYS_MOUNTED = (
    'the sandbox bind-mounts the working directory, so a command still sees it after the environment is '
    'deleted on the host and runs on until its timeout, which raises WorkspaceTimeoutError; the contract says '
    'a command whose environment is destroyed raises WorkspaceUnavailableError'
)


def _target(options: Mapping[str, str], run_id: str) -> Target:
    from pydantic_ai_harness.bubblewrap_sandbox import BubblewrapSandbox, BubblewrapWorkspace

    private_tmp = options.get('tmp') == 'private'

    def bwrap_args(run_dir: Path) -> list[str]:
        # A TMPDIR per run that outlives each command, as a container's or a host's /tmp does. Not mounted
        # over /tmp itself, which would hide a working directory below /tmp.
        tmp = str(_tmp_directory(run_dir))
        return [] if private_tmp else ['--bind', tmp, tmp, '--setenv', 'TMPDIR', tmp]

    def sandbox(backend: WorkspaceBackend, run_dir: Path) -> WorkspaceBackend:
        sandboxed: WorkspaceBackend = BubblewrapWorkspace(Workspace(backend), bwrap_args=bwrap_args(run_dir))
        return sandboxed

    def attach(run_dir: Path, ref: WorkspaceRef) -> WorkspaceBackend:
        inner = LazyLocalBackend(run_dir / 'fresh', ref=ref) if ref.provider == 'local-lazy' else None
        return sandbox(inner or LocalWorkspaceBackend(ref.id), run_dir)

    def capability(run_dir: Path) -> CapabilitySetup:
        # The harness's BubblewrapSandbox around the `local` target's LocalWorkspace, as its docs compose them.
        local = local_capability(run_dir)
        wrapped: BubblewrapSandbox[None] = BubblewrapSandbox(local.capability, bwrap_args=bwrap_args(run_dir))
        return CapabilitySetup(capability=wrapped, destroy_environment=local.destroy_environment, policy=local.policy)

    expected = {'destroying_environment_during_command_raises_unavailable': DESTROYED_DIRECTORY_STAYS_MOUNTED}
    if private_tmp:
        expected['large_listing_is_complete'] = PRIVATE_TMP_LOSES_PAGED_LISTINGS
    return Target(
        name='bubblewrap',
        description="pydantic-ai-harness's BubblewrapWorkspace around LocalWorkspaceBackend, no network",
        backend=lambda run_dir: sandbox(LocalWorkspaceBackend(shared_directory(run_dir)), run_dir),
        fresh_backend=lambda run_dir: sandbox(LazyLocalBackend(run_dir / 'fresh'), run_dir),
        destructive_backend=lambda run_dir: sandbox(LocalWorkspaceBackend(sacrificial_directory(run_dir)), run_dir),
        attach_backend=attach,
        destroy_environment=destroy_local_environment,
        capability=capability,
        expected_failures=expected,
        isolation_claims=BUBBLEWRAP_CLAIMS.claims,
        isolation_source=BUBBLEWRAP_CLAIMS.source,
    )


def _tmp_directory(run_dir: Path) -> Path:
    path = run_dir / 'sandbox-tmp'
    path.mkdir(parents=True, exist_ok=True)
    return path


BUBBLEWRAP = NamedTarget(
    name='bubblewrap',
    description="pydantic-ai-harness's BubblewrapWorkspace (bwrap) around a local directory",
    build=_target,
    missing=_missing,
    options=(
        TargetOption(
            'tmp',
            "'shared' (default): commands get a TMPDIR per run that outlives each command; 'private': only "
            "bwrap's default /tmp, new and empty for every command, which breaks large listings (an expected failure)",
            'shared',
        ),
    ),
    extra='harness',
)
