"""The `e2b-local` target: pydantic-ai-harness's `E2BSandboxBackend` through the real `e2b` SDK, on `serve e2b`.

The target starts the service itself (in a thread of the certifying process, on a free loopback port), points
the SDK at it through the environment, and stops it in its cleanup, which kills every sandbox left.
"""

from __future__ import annotations

import atexit
import importlib
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

from ._probe import missing_module
from .base import CapabilitySetup, NamedTarget, Target, TargetError, TargetOption

__all__ = ('E2B_LOCAL', 'LABEL', 'SWITCHES')

LABEL = 'E2B (emulated: workspace-conformance serve e2b)'
"""How reports and badges name what this target certifies: never plain "E2B"."""

SWITCHES = {
    'privileged-files': 'privileged_files',
    'looping-symlinks': 'omit_looping_symlinks',
    'end-after-pipes-close': 'end_after_pipes_close',
}
"""The fidelity switches `--fidelity-off` can turn off, by name (docs/e2b-local.md gives each one's source)."""


def _missing(_: Mapping[str, str]) -> str | None:
    return (
        missing_module('pydantic_ai_harness', '"workspace-conformance[harness]"')
        or missing_module('e2b', '"pydantic-ai-harness[e2b]"')
        or missing_module('uvicorn', '"workspace-conformance[serve]"')
        or missing_module('starlette', '"workspace-conformance[serve]"')
    )


def _switches(value: str | None) -> dict[str, bool]:
    off = [name.strip() for name in (value or '').split(',') if name.strip()]
    unknown = [name for name in off if name not in SWITCHES]
    if unknown:
        raise TargetError(f'--fidelity-off takes {", ".join(SWITCHES)}; not {", ".join(unknown)}')
    return {SWITCHES[name]: False for name in off}


def _target(options: Mapping[str, str], run_id: str) -> Target:
    from ..services.e2b.sandbox import Fidelity
    from ..services.e2b.server import ServiceThread

    fidelity = Fidelity(**_switches(options.get('fidelity-off')))
    service = ServiceThread(fidelity=fidelity)
    settings = service.start()
    saved = {name: os.environ.get(name) for name in settings.environ()}
    os.environ.update(settings.environ())

    def stop() -> None:
        service.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    atexit.register(stop)
    harness = importlib.import_module('pydantic_ai_harness.e2b_sandbox')
    capability = harness.E2BSandbox()

    def build(ref: WorkspaceRef | None) -> WorkspaceBackend:
        backend: WorkspaceBackend = capability.backend(ref) if ref is not None else harness.E2BSandboxBackend()
        return backend

    async def destroy(backend: WorkspaceBackend) -> None:
        ref = backend.ref
        if ref is None:
            raise ValueError('this backend has created no sandbox yet')
        await capability.destroy(ref)

    def cleanup(_: Path) -> None:
        # Stopping the service kills every sandbox the run created, with its processes and files.
        atexit.unregister(stop)
        stop()

    def capability_setup(_: Path) -> CapabilitySetup:
        return CapabilitySetup(capability=harness.E2BSandbox(), destroy_environment=capability.destroy)

    confinement = 'bubblewrap namespaces' if settings.confined else 'UNCONFINED host processes (no bwrap)'
    return Target(
        name='e2b-local',
        description=f"{LABEL}: pydantic-ai-harness's E2BSandboxBackend through the real e2b SDK, {confinement}",
        backend=lambda _: build(None),
        fresh_backend=lambda _: build(None),
        destructive_backend=lambda _: build(None),
        attach_backend=lambda _, ref: build(ref),
        destroy_environment=destroy,
        cleanup=cleanup,
        capability=capability_setup,
        event_loops=('asyncio',),  # the e2b SDK runs on asyncio only
    )


E2B_LOCAL = NamedTarget(
    name='e2b-local',
    description=f"{LABEL}: pydantic-ai-harness's E2BSandboxBackend through the real e2b SDK (no key needed)",
    build=_target,
    missing=_missing,
    options=(
        TargetOption(
            'fidelity-off',
            'comma-separated E2B behaviours not to model: privileged-files, looping-symlinks, end-after-pipes-close',
        ),
    ),
    extra='serve',
    # The service is the sandbox's "machine": envd's file operations run with root's rights there, as E2B's do.
    keeps_capabilities=True,
)
