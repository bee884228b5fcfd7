"""The `e2b`, `modal`, `daytona` and `sprites` targets: hosted sandboxes, run only when their credentials are set."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import anyio
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

from ._ledger import read_refs
from ._probe import missing_module
from .base import NamedTarget, Target, TargetOption

__all__ = ('DAYTONA', 'E2B', 'MODAL', 'SPRITES')

_WORKING_DIR = TargetOption('working-dir', "absolute working directory in the sandbox (default: the provider's)")


def _missing(credentials: tuple[str, ...], sdk: str, extra: str) -> Callable[[Mapping[str, str]], str | None]:
    def missing(_: Mapping[str, str]) -> str | None:
        if not any(os.environ.get(name) for name in credentials):
            return f'no {" or ".join(credentials)}'
        return missing_module('pydantic_ai_harness', '"workspace-conformance[harness]"') or missing_module(
            sdk, f'"pydantic-ai-harness[{extra}]"'
        )

    return missing


def _cloud_target(
    name: str,
    description: str,
    build: Callable[[WorkspaceRef | None], WorkspaceBackend],
    destroy_ref: Callable[[WorkspaceRef], Awaitable[None]],
) -> Target:
    """A hosted target: lazy sandboxes, attach by ref, destroy by ref, and cleanup of every ref the run recorded."""

    async def destroy(backend: WorkspaceBackend) -> None:
        ref = backend.ref
        if ref is None:
            raise ValueError('this backend has created no sandbox yet')
        await destroy_ref(ref)

    def cleanup(run_root: Path) -> None:
        async def destroy_all() -> None:
            for ref in read_refs(run_root):
                try:
                    await destroy_ref(ref)
                except Exception:
                    continue

        anyio.run(destroy_all)

    return Target(
        name=name,
        description=description,
        backend=lambda _: build(None),
        fresh_backend=lambda _: build(None),
        destructive_backend=lambda _: build(None),
        attach_backend=lambda _, ref: build(ref),
        destroy_environment=destroy,
        cleanup=cleanup,
        event_loops=('asyncio',),  # the hosted SDKs refuse to run on trio
    )


def _e2b(options: Mapping[str, str], run_id: str) -> Target:
    from pydantic_ai_harness.e2b_sandbox import E2BSandbox, E2BSandboxBackend

    capability = E2BSandbox(working_dir=options.get('working-dir'))

    def build(ref: WorkspaceRef | None) -> WorkspaceBackend:
        backend: WorkspaceBackend = (
            capability.backend(ref)
            if ref is not None
            else E2BSandboxBackend(template=options.get('template'), working_dir=options.get('working-dir'))
        )
        return backend

    return _cloud_target('e2b', "pydantic-ai-harness's E2BSandboxBackend", build, capability.destroy)


def _modal(options: Mapping[str, str], run_id: str) -> Target:
    from pydantic_ai_harness.modal_sandbox import ModalSandbox, ModalSandboxBackend

    capability = ModalSandbox(working_dir=options.get('working-dir'))

    def build(ref: WorkspaceRef | None) -> WorkspaceBackend:
        backend: WorkspaceBackend = (
            capability.backend(ref)
            if ref is not None
            else ModalSandboxBackend(image=options.get('image'), working_dir=options.get('working-dir'))
        )
        return backend

    return _cloud_target('modal', "pydantic-ai-harness's ModalSandboxBackend", build, capability.destroy)


def _daytona(options: Mapping[str, str], run_id: str) -> Target:
    from pydantic_ai_harness.daytona_sandbox import DaytonaSandbox, DaytonaSandboxBackend

    capability = DaytonaSandbox(working_dir=options.get('working-dir'))

    def build(ref: WorkspaceRef | None) -> WorkspaceBackend:
        backend: WorkspaceBackend = (
            capability.backend(ref)
            if ref is not None
            else DaytonaSandboxBackend(snapshot=options.get('snapshot'), working_dir=options.get('working-dir'))
        )
        return backend

    return _cloud_target('daytona', "pydantic-ai-harness's DaytonaSandboxBackend", build, capability.destroy)


def _sprites(options: Mapping[str, str], run_id: str) -> Target:
    from pydantic_ai_harness.sprites_sandbox import SpritesSandbox, SpritesSandboxBackend

    capability = SpritesSandbox(runtime=options.get('runtime'), working_dir=options.get('working-dir'))

    def build(ref: WorkspaceRef | None) -> WorkspaceBackend:
        # Without `client=`, each backend opens its own client from SPRITE_TOKEN on first use.
        backend: WorkspaceBackend = (
            capability.backend(ref)
            if ref is not None
            else SpritesSandboxBackend(runtime=options.get('runtime'), working_dir=options.get('working-dir'))
        )
        return backend

    return _cloud_target('sprites', "pydantic-ai-harness's SpritesSandboxBackend", build, capability.destroy)


E2B = NamedTarget(
    name='e2b',
    description="pydantic-ai-harness's E2BSandboxBackend on E2B (needs E2B_API_KEY)",
    build=_e2b,
    missing=_missing(('E2B_API_KEY',), 'e2b', 'e2b'),
    options=(TargetOption('template', "E2B template for new sandboxes (default: E2B's base)"), _WORKING_DIR),
    extra='harness',
)

MODAL = NamedTarget(
    name='modal',
    description="pydantic-ai-harness's ModalSandboxBackend on Modal (needs MODAL_TOKEN_ID)",
    build=_modal,
    missing=_missing(('MODAL_TOKEN_ID',), 'modal', 'modal'),
    options=(TargetOption('image', "registry image for new sandboxes (default: Modal's Debian slim)"), _WORKING_DIR),
    extra='harness',
)

DAYTONA = NamedTarget(
    name='daytona',
    description="pydantic-ai-harness's DaytonaSandboxBackend on Daytona (needs DAYTONA_API_KEY)",
    build=_daytona,
    missing=_missing(('DAYTONA_API_KEY',), 'daytona', 'daytona'),
    options=(TargetOption('snapshot', "Daytona snapshot for new sandboxes (default: Daytona's)"), _WORKING_DIR),
    extra='harness',
)

SPRITES = NamedTarget(
    name='sprites',
    description="pydantic-ai-harness's SpritesSandboxBackend on Fly.io Sprites (needs SPRITE_TOKEN)",
    build=_sprites,
    # The harness reads SPRITE_TOKEN (the Sprites SDK itself reads no environment variable).
    missing=_missing(('SPRITE_TOKEN',), 'sprites', 'sprites'),
    options=(TargetOption('runtime', "Sprites runtime for new sprites (default: Sprites')"), _WORKING_DIR),
    extra='harness',
)
