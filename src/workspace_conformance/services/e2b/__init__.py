"""`workspace-conformance serve e2b`: a local service the real `e2b` SDK talks to as it talks to E2B.

The modules follow E2B's public specs, one service each: `control` (the API's `/sandboxes`), `files` (envd's
HTTP API), `process` and `filesystem` (envd's Connect services), `sandbox` (a sandbox's root, users,
confinement and processes) and `server` (the port, the routing, and `serve_e2b`). This package itself imports
nothing beyond the standard library, so the light install can list it; `run` imports the rest.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

__all__ = ('EXTRA', 'missing_dependency', 'run')

EXTRA = 'serve'
"""The `workspace-conformance[EXTRA]` that installs what the service needs."""


def missing_dependency() -> str | None:
    """None when the service's libraries import, else one line saying what to install."""
    for module in ('uvicorn', 'starlette', 'connectrpc', 'e2b'):
        try:
            __import__(module)
        except ImportError:
            return f'serve e2b needs {module!r}: pip install "workspace-conformance[{EXTRA}]"'
    return None


def run(
    *,
    port: int,
    root: Path | None,
    privileged_files: bool = True,
    omit_looping_symlinks: bool = True,
    end_after_pipes_close: bool = True,
    confine: bool = True,
) -> int:
    """Serve until SIGINT or SIGTERM, printing the SDK's settings as KEY=VALUE lines first; returns the status."""
    missing = missing_dependency()
    if missing:
        print(f'workspace-conformance: {missing}', file=sys.stderr)
        return 2
    from .sandbox import Fidelity
    from .server import serve_e2b

    fidelity = Fidelity(privileged_files, omit_looping_symlinks, end_after_pipes_close)

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        try:
            async with serve_e2b(port=port, root=root, fidelity=fidelity, confine=confine) as settings:
                for key, value in settings.environ().items():
                    print(f'{key}={value}')
                confinement = (
                    'bubblewrap namespaces'
                    if settings.confined
                    else 'UNCONFINED (no bwrap and nsenter that can join its namespaces here): host processes'
                )
                print(f'# sandboxes: {confinement}, under {settings.state_dir}', flush=True)
                await stop.wait()
        except OSError as error:
            print(f'workspace-conformance: {error}', file=sys.stderr)
            return 2
        print('# stopped: every sandbox killed and removed', flush=True)
        return 0

    return asyncio.run(main())
