"""What a certification target is: how to build its backends, what it needs, its limits, and its cleanup."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import Workspace, WorkspaceBackend, WorkspaceRef

__all__ = (
    'CapabilitySetup',
    'InjectFault',
    'MakeSymlink',
    'NamedTarget',
    'Target',
    'TargetError',
    'TargetNotRunnable',
    'TargetOption',
    'created_ref',
)

MakeSymlink = Callable[[WorkspaceBackend, str, str], Awaitable[None]]
InjectFault = Callable[[WorkspaceBackend, Literal['transient', 'setup']], 'type[BaseException] | None']


class TargetError(Exception):
    """A target cannot be loaded or run here; the message is one line saying what is wrong."""


class TargetNotRunnable(TargetError):
    """A named target's requirement is absent here (no daemon, no key, no package): it is reported as not run."""

    def __init__(self, target: str, reason: str) -> None:
        super().__init__(f'{target}: not run: {reason}')
        self.target = target
        self.reason = reason


@dataclass(frozen=True, kw_only=True)
class CapabilitySetup:
    """One capability rule's capability and the optional fixtures that go with it."""

    capability: AbstractCapability[Any]
    deps: object = None
    destroy_environment: Callable[[WorkspaceRef], Awaitable[None]] | None = None
    foreign_refs: Sequence[WorkspaceRef] = ()
    policy: Callable[[Workspace], Workspace] | None = None
    secrets: Sequence[str] | None = None
    """Credentials the capability is configured with; None: the runner's secret-looking environment values."""


@dataclass(frozen=True, kw_only=True)
class Target:
    """Everything needed to certify one backend; each factory receives the run's own scratch directory."""

    name: str
    description: str
    backend: Callable[[Path], WorkspaceBackend]
    fresh_backend: Callable[[Path], WorkspaceBackend] | None = None
    destructive_backend: Callable[[Path], WorkspaceBackend] | None = None
    attach_backend: Callable[[Path, WorkspaceRef], WorkspaceBackend] | None = None
    destroy_environment: Callable[[WorkspaceBackend], Awaitable[None]] | None = None
    stop_environment: Callable[[WorkspaceBackend], Awaitable[None]] | None = None
    """Kills the init of the environment behind a backend, its storage kept: the suite's `stop_environment`."""
    start_environment: Callable[[WorkspaceBackend], Awaitable[None]] | None = None
    """Starts that stopped environment again: the suite's `start_environment`."""
    make_symlink: MakeSymlink | None = None
    inject_fault: InjectFault | None = None
    """Arms one fault in the backend's provider client: the suite's `inject_fault` fixture."""
    declared_limits: Mapping[str, str] = field(default_factory=dict)
    expected_failures: Mapping[str, str] = field(default_factory=dict)
    switches: Mapping[str, bool] = field(default_factory=dict)
    """Values for the suite's switch fixtures (`has_real_posix_shell`, ...); absent ones keep their defaults."""
    event_loops: tuple[str, ...] = ('asyncio', 'trio')
    """The anyio backends the target's client libraries support; a run uses those of them that are installed."""
    capability: Callable[[Path], CapabilitySetup] | None = None
    """The capability the backend's users attach to agents, built in each capability rule's scratch directory."""
    capability_expected_failures: Mapping[str, str] = field(default_factory=dict)
    """Capability rule id -> reason for each known failure of `capability`: strict expected failures."""
    capability_declared_limits: Mapping[str, str] = field(default_factory=dict)
    """Capability rule id -> reason for each limit `capability` declares (`declared_limits` are backend rules')."""
    cleanup: Callable[[Path], None] | None = None
    """Removes everything a run with this scratch directory created outside it (containers, sandboxes, dirs)."""
    backend_awaits: bool = False
    """`backend` returns an awaitable of the backend (an `async def` factory): the suite awaits it in the event loop."""
    isolation_claims: frozenset[str] = frozenset()
    """What the provider documents its sandbox keeps apart from the host (files, processes, environment, network):
    the claims `certify --isolation` checks. Empty: it claims no isolation."""
    isolation_source: str | None = None
    """Where the provider documents `isolation_claims` (a URL or a document's name), or why it claims nothing."""
    isolation_expected_failures: Mapping[str, str] = field(default_factory=dict)
    """Isolation rule id -> reason for each claim the provider makes that fails here: a finding, a strict expected
    failure (docs/findings.md)."""


@dataclass(frozen=True)
class TargetOption:
    """One `--NAME VALUE` option of a named target, with its help and default."""

    name: str
    help: str
    default: str | None = None


@dataclass(frozen=True, kw_only=True)
class NamedTarget:
    """A built-in target: its options, a check of what it needs here, and how to build it from option values."""

    name: str
    description: str
    build: Callable[[Mapping[str, str], str], Target]
    """Builds the target from its option values and the run's id (a label for what the run creates)."""
    missing: Callable[[Mapping[str, str]], str | None] = lambda options: None
    """`None` when the target can run here, else one line saying what is missing (`no E2B_API_KEY`)."""
    options: tuple[TargetOption, ...] = ()
    extra: str | None = None
    """The `workspace-conformance[EXTRA]` that installs what the target imports, if any."""
    keeps_capabilities: bool = False
    """As root, certify keeps CAP_DAC_OVERRIDE for this target (its client needs it, as Podman's overlay mounts do)."""

    def values(self, given: Mapping[str, str | None]) -> dict[str, str]:
        """The option values for a run: the given ones over the defaults, unknown names refused."""
        known = {option.name: option for option in self.options}
        unknown = sorted(name for name, value in given.items() if value is not None and name not in known)
        if unknown:
            takes = ', '.join(f'--{name}' for name in known) or 'no options'
            flags = ', '.join(f'--{name}' for name in unknown)
            raise TargetError(f'target {self.name!r} does not take {flags}; it takes {takes}')
        values = {name: option.default for name, option in known.items() if option.default is not None}
        values.update({name: value for name, value in given.items() if value is not None})
        return values


def created_ref(backend: WorkspaceBackend, what: str, purpose: str = '') -> WorkspaceRef:
    """The ref of the environment `backend` created; a ValueError naming `what` (a container, a sandbox) before then."""
    ref = backend.ref
    if ref is None:
        raise ValueError(f'this backend has created no {what} yet{f" to {purpose}" if purpose else ""}')
    return ref
