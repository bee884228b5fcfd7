"""The `e2b-local` target: pydantic-ai-harness's `E2BSandboxBackend` through the real `e2b` SDK, on `serve e2b`.

The target starts the service itself (in a thread of the certifying process, on a free loopback port), points
the SDK at it through the environment, and stops it in its cleanup, which kills every sandbox left.
"""

from __future__ import annotations

import atexit
import importlib
import os
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic_ai.workspaces import ReadOnlyWorkspace, WorkspaceBackend, WorkspaceRef

from ._probe import missing_module
from .base import CapabilitySetup, NamedTarget, Target, TargetError, TargetOption, created_ref
from .claims import E2B_LOCAL_CLAIMS, E2B_LOCAL_UNCONFINED
from .cloud import hosted_target

__all__ = ('CAPABILITY_FAILURES', 'E2B_FAILURES', 'E2B_LOCAL', 'LABEL', 'LIMITS', 'SWITCHED', 'SWITCHES')

LABEL = 'E2B (emulated: workspace-conformance serve e2b)'
"""How reports and badges name what this target certifies: never plain "E2B"."""

SWITCHES = {
    'privileged-files': 'privileged_files',
    'looping-symlinks': 'omit_looping_symlinks',
    'end-after-pipes-close': 'end_after_pipes_close',
}
"""The fidelity switches `--fidelity-off` can turn off, by name (docs/e2b-local.md gives each one's source)."""


SWITCHED = {
    'omit_looping_symlinks': {
        'symlink_loop_does_not_break_listing': (
            'fidelity switch looping-symlinks: envd gives a symlink whose target cannot be resolved no type, and the '
            "e2b SDK's files.list skips entries of unknown type, so the loop is missing from the listing (the "
            "harness's E2B README says so too; docs/e2b-local.md)"
        ),
    },
    'privileged_files': {
        'permission_denied_uses_builtin_error': (
            "fidelity switch privileged-files: envd's file service reads and writes with root's rights, so a mode-000 "
            "file reads normally (the harness's E2B README: Unix permissions do not restrict file operations)"
        ),
    },
    'end_after_pipes_close': {
        'background_child_does_not_hold_up_completed_command': (
            "fidelity switch end-after-pipes-close: envd reports a command's end only once its output pipes close, "
            "so a background child holding them keeps run() waiting (envd's process handler; the harness's E2B README)"
        ),
    },
}
"""Rules that fail because the service models a documented E2B behaviour, by the fidelity switch that models it."""

E2B_FAILURES = {
    'death_by_signal_is_exit_code_128_plus_n': (
        "envd reports a command killed by a signal with exit code -1 (Go's ExitCode() of a signalled process), and "
        'the harness passes it on (its E2B README: not converted to 128+signal); the service answers as envd does'
    ),
    'undecodable_name_bytes_round_trip': (
        "proto3 strings are UTF-8, so envd cannot put a name whose bytes are not UTF-8 in a ListDir answer (Go's "
        'protobuf refuses to marshal it); the service answers the same INTERNAL error and the harness raises '
        'WorkspaceError'
    ),
    'env_overrides_the_backend_variable_of_the_same_name': (
        'the e2b SDK starts every command as `/bin/bash -l -c`, and the login shell runs /etc/profile, which on a '
        'Debian-based image (the host /etc the service binds read-only) sets PATH again, so PATH from env= is lost; '
        'the harness passes env= as envd envs, under the login shell'
    ),
    'writing_to_a_fifo_raises_os_error_and_keeps_it': (
        'the service refuses an upload onto a FIFO at once (400, not a regular file) where envd would open it and '
        'wait for a reader; either way the harness raises WorkspaceError, not OSError'
    ),
}
"""Rules the service fails as E2B does (or as the SDK does on any server), and why."""

CANCELLED_STREAM = (
    "connectrpc's client, closing the command stream the e2b SDK abandoned on cancellation, turns the CancelledError "
    'into ConnectError(CANCELED) inside the async generator, which the event loop reports as an exception in an '
    'asynchronous callback (an SDK defect: nothing the server answers changes it); it lands on whichever rule runs '
    'when the garbage collector closes the stream, so a rule fails or passes by timing'
)
LIMITS = {
    # It failed in every CI run before 2026-12-04, then passed once with the model-based rule left out (-k): a race.
    'cancellation_mid_create_keeps_the_ref': CANCELLED_STREAM,
    'file_operations_match_the_reference_model': (
        'the same connectrpc client defect as cancellation_mid_create_keeps_the_ref: a command stream the e2b SDK '
        'abandoned earlier is closed when the garbage collector gets to it, and its ConnectError(CANCELED) lands on '
        'whichever rule runs then; the rule passes alone, so this is a race, declared as a limit'
    ),
}
"""Rules whose outcome depends on timing outside the service, so no strict expected failure can hold them."""

ATTACHES_TO_ANY_SANDBOX = (
    "the harness's E2BSandbox attaches to whatever sandbox id an `e2b` ref names (`Sandbox.connect` is first called "
    'on use), so `get_workspace` accepts ids such as `/etc`, `..` or a neighbour of its own sandbox and a sandbox it '
    'did not create; the contract says a capability attaches only to refs it recognizes, and refs from history are '
    'untrusted (seen with pydantic-ai-harness 0.62 on serve e2b; a hosted E2B answers such a connect with not found, '
    'which is after the capability has accepted the ref)'
)
CAPABILITY_FAILURES = {
    'hostile_ref_ids_are_declined': ATTACHES_TO_ANY_SANDBOX,
    'a_neighbouring_environment_is_declined': ATTACHES_TO_ANY_SANDBOX,
}
"""Known failures of the harness's E2BSandbox capability on the service, not of the rules: strict expected failures."""


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


class _OneService:
    """The process's one `serve e2b`, shared by every build of the target in it, stopped by the run's cleanup.

    The CLI's check, the run and the session each build the target, and all of them point the SDK at the service
    through the one environment; it stops at exit if no cleanup stopped it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: Any = None
        self._fidelity: Any = None
        self._saved: dict[str, str | None] = {}
        self._settings: Any = None

    def start(self, fidelity: Any) -> Any:
        """The running service's settings, started now (with `fidelity`) if it is not running."""
        from ..services.e2b.server import ServiceThread

        with self._lock:
            if self._thread is not None and self._fidelity != fidelity:
                self._stop()
            if self._thread is None:
                thread = ServiceThread(fidelity=fidelity)
                self._settings = thread.start()
                self._thread, self._fidelity = thread, fidelity
                self._saved = {name: os.environ.get(name) for name in self._settings.environ()}
                os.environ.update(self._settings.environ())
            return self._settings

    def stop(self) -> None:
        """Stop the service (killing every sandbox) and restore the environment; nothing if it is not running."""
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._thread is None:
            return
        self._thread.stop()
        self._thread = None
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


_SERVICE = _OneService()
atexit.register(_SERVICE.stop)


def _target(options: Mapping[str, str], run_id: str) -> Target:
    from ..services.e2b.sandbox import Fidelity

    fidelity = Fidelity(**_switches(options.get('fidelity-off')))
    settings = _SERVICE.start(fidelity)
    harness = importlib.import_module('pydantic_ai_harness.e2b_sandbox')
    capability = harness.E2BSandbox()

    def build(ref: WorkspaceRef | None) -> WorkspaceBackend:
        backend: WorkspaceBackend = capability.backend(ref) if ref is not None else harness.E2BSandboxBackend()
        return backend

    def cleanup(_: Path) -> None:
        # Stopping the service kills every sandbox the run created, with its processes and files.
        _SERVICE.stop()

    sdk = importlib.import_module('e2b')

    def sandbox_id(backend: WorkspaceBackend) -> str:
        return created_ref(backend, 'sandbox').id

    async def stop(backend: WorkspaceBackend) -> None:
        # E2B stops a sandbox under its users with a pause; a filesystem-only one ends every process, files kept.
        await sdk.AsyncSandbox.pause(sandbox_id(backend), mode='filesystem')

    async def start(backend: WorkspaceBackend) -> None:
        # Connecting resumes a paused sandbox (cold-booted from its filesystem).
        await sdk.AsyncSandbox.connect(sandbox_id(backend))

    def capability_setup(_: Path) -> CapabilitySetup:
        # The harness's E2BSandbox as its users attach it: a new sandbox of the service on first use.
        sandbox = harness.E2BSandbox()
        return CapabilitySetup(capability=sandbox, destroy_environment=sandbox.destroy, policy=ReadOnlyWorkspace)

    expected = dict(E2B_FAILURES)
    for switch, rules in SWITCHED.items():
        if getattr(fidelity, switch):
            expected.update(rules)
    confinement = (
        'bubblewrap namespaces'
        if settings.confined
        else 'UNCONFINED host processes (no bwrap and nsenter that can join its namespaces here)'
    )
    claims = E2B_LOCAL_CLAIMS if settings.confined else E2B_LOCAL_UNCONFINED
    hosted = hosted_target(
        # The name reports and the command line show: the emulation, never plain "E2B".
        f'e2b-local = {LABEL}',
        f"{LABEL}: pydantic-ai-harness's E2BSandboxBackend through the real e2b SDK, {confinement}",
        build,
        capability.destroy,
    )
    return replace(
        hosted,
        cleanup=cleanup,
        stop_environment=stop,
        start_environment=start,
        expected_failures=expected,
        declared_limits=LIMITS,
        capability=capability_setup,
        capability_expected_failures=CAPABILITY_FAILURES,
        isolation_claims=claims.claims,
        isolation_source=claims.source,
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
