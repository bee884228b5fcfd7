"""The `e2b`, `modal`, `daytona` and `sprites` targets: hosted sandboxes, run only when their credentials are set."""

from __future__ import annotations

import importlib
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import anyio
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

from ._ledger import read_refs
from ._probe import missing_module
from .base import NamedTarget, Target, TargetOption, created_ref

__all__ = ('DAYTONA', 'E2B', 'MODAL', 'SPRITES', 'hosted_target')

_WORKING_DIR = TargetOption('working-dir', "absolute working directory in the sandbox (default: the provider's)")


def _missing(credentials: tuple[str, ...], sdk: str, extra: str) -> Callable[[Mapping[str, str]], str | None]:
    def missing(_: Mapping[str, str]) -> str | None:
        if not any(os.environ.get(name) for name in credentials):
            return f'no {" or ".join(credentials)}'
        return missing_module('pydantic_ai_harness', '"workspace-conformance[harness]"') or missing_module(
            sdk, f'"pydantic-ai-harness[{extra}]"'
        )

    return missing


def hosted_target(
    name: str,
    description: str,
    build: Callable[[WorkspaceRef | None], WorkspaceBackend],
    destroy_ref: Callable[[WorkspaceRef], Awaitable[None]],
) -> Target:
    """A hosted target: lazy sandboxes, attach by ref, destroy by ref, and cleanup of every ref the run recorded."""

    async def destroy(backend: WorkspaceBackend) -> None:
        await destroy_ref(created_ref(backend, 'sandbox'))

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


def _harness_sandbox(
    name: str, module: str, sandbox: str, option: str, *, capability_option: bool = False
) -> Callable[[Mapping[str, str], str], Target]:
    """How a hosted target is built: the harness's `<sandbox>` capability and `<sandbox>Backend` from `module`.

    New backends get the target's `option` (a template, image, snapshot or runtime) and `working-dir`; the
    capability gets `working-dir` (and `option` too when `capability_option`), and attaches and destroys by ref.
    """

    def build_target(options: Mapping[str, str], run_id: str) -> Target:
        harness = importlib.import_module(f'pydantic_ai_harness.{module}')
        settings = {option: options.get(option), 'working_dir': options.get('working-dir')}
        capability = getattr(harness, sandbox)(
            **(settings if capability_option else {'working_dir': settings['working_dir']})
        )
        backend_class = getattr(harness, f'{sandbox}Backend')

        def build(ref: WorkspaceRef | None) -> WorkspaceBackend:
            # Without `client=`, each new backend opens its own client from the credentials on first use.
            backend: WorkspaceBackend = capability.backend(ref) if ref is not None else backend_class(**settings)
            return backend

        return hosted_target(name, f"pydantic-ai-harness's {sandbox}Backend", build, capability.destroy)

    return build_target


def _hosted(name: str, sandbox: str, where: str, credential: str, option: TargetOption, **build: bool) -> NamedTarget:
    """A hosted sandbox's target, available when `credential` is set and the harness and the provider's SDK import."""
    return NamedTarget(
        name=name,
        description=f"pydantic-ai-harness's {sandbox}Backend on {where} (needs {credential})",
        build=_harness_sandbox(name, f'{name}_sandbox', sandbox, option.name, **build),
        missing=_missing((credential,), name, name),
        options=(option, _WORKING_DIR),
        extra='harness',
    )


E2B = _hosted(
    'e2b',
    'E2BSandbox',
    'E2B',
    'E2B_API_KEY',
    TargetOption('template', "E2B template for new sandboxes (default: E2B's base)"),
)
MODAL = _hosted(
    'modal',
    'ModalSandbox',
    'Modal',
    'MODAL_TOKEN_ID',
    TargetOption('image', "registry image for new sandboxes (default: Modal's Debian slim)"),
)
DAYTONA = _hosted(
    'daytona',
    'DaytonaSandbox',
    'Daytona',
    'DAYTONA_API_KEY',
    TargetOption('snapshot', "Daytona snapshot for new sandboxes (default: Daytona's)"),
)
# The harness reads SPRITE_TOKEN (the Sprites SDK itself reads no environment variable).
SPRITES = _hosted(
    'sprites',
    'SpritesSandbox',
    'Fly.io Sprites',
    'SPRITE_TOKEN',
    TargetOption('runtime', "Sprites runtime for new sprites (default: Sprites')"),
    capability_option=True,
)
