"""How a mutant is declared: `@breaks(kills=[...], bug=...)` on a backend class, or `mutant(...)` for other fixtures."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import LocalWorkspaceBackend, WorkspaceBackend, WorkspaceRef

from workspace_conformance.doubles import memory_symlink
from workspace_conformance.targets import local_target
from workspace_conformance.targets.base import InjectFault
from workspace_conformance.targets.capability import CapabilitySetup

_LOCAL = local_target()

Build = Callable[[Path], WorkspaceBackend]
Kind = TypeVar('Kind', bound=type[WorkspaceBackend])
ToolKind = TypeVar('ToolKind', bound=type[AbstractCapability[Any]])


@dataclass(frozen=True)
class Mutant:
    """A backend that breaks one clause, how to build it and its optional fixtures, and the rules it must fail."""

    name: str
    kills: tuple[str, ...]
    bug: str
    """The real-world bug this mutant models, in one sentence."""
    backend: Build
    fresh_backend: Build | None = None
    destructive_backend: Build | None = None
    attach_backend: Callable[[Path, WorkspaceRef], WorkspaceBackend] | None = None
    destroy_environment: Callable[[WorkspaceBackend], Awaitable[None]] | None = None
    stop_environment: Callable[[WorkspaceBackend], Awaitable[None]] | None = None
    start_environment: Callable[[WorkspaceBackend], Awaitable[None]] | None = None
    make_symlink: Callable[[WorkspaceBackend, str, str], Awaitable[None]] | None = None
    inject_fault: InjectFault | None = None
    unprivileged: bool = False
    """Only meaningful when the runner cannot bypass file permissions (run without CAP_DAC_OVERRIDE as root)."""
    rebuild_per_call: bool = False
    """Checked in durable rebuild mode: every operation goes to `attach_backend(ref)`."""


MUTANTS: list[Mutant] = []


def shared_dir(run_dir: Path) -> Path:
    """The directory a mutant's shared backend works in (created)."""
    path = run_dir / 'shared'
    path.mkdir(parents=True, exist_ok=True)
    return path


def on_shared_dir(kind: Callable[[Path], WorkspaceBackend]) -> Build:
    """A mutant's backend: `kind` built on the run's shared directory, named after `kind` for the gate's ids."""

    def build(run_dir: Path) -> WorkspaceBackend:
        return kind(shared_dir(run_dir))

    build.__name__ = getattr(kind, '__name__', 'mutant')
    return build


def in_memory(kind: Callable[[], WorkspaceBackend]) -> Build:
    """A mutant's backend: a fresh in-memory `kind()` for every build, named after `kind`."""

    def build(run_dir: Path) -> WorkspaceBackend:
        return kind()

    build.__name__ = getattr(kind, '__name__', 'mutant')
    return build


def memory_mutant(*, name: str, kills: list[str], bug: str, kind: Callable[[], WorkspaceBackend]) -> Mutant:
    """Register a mutant of the in-memory double: a fresh `kind()` for every build, its symlinks made in memory."""
    return mutant(name=name, kills=kills, bug=bug, backend=in_memory(kind), make_symlink=memory_symlink)


def _named_after(kind: type, name: str | None) -> str:
    """A class-declared mutant's name: `name`, or its class name in snake case (`StrictRealpath`: `strict_realpath`)."""
    return name or re.sub(r'(?<!^)(?=[A-Z])', '_', kind.__name__).lower()


def breaks(
    *, kills: list[str], bug: str, name: str | None = None, unprivileged: bool = False
) -> Callable[[Kind], Kind]:
    """Class decorator: register the backend class, built on the run's shared directory, as a mutant (see `mutant`)."""

    def register(kind: Kind) -> Kind:
        built = on_shared_dir(kind)
        mutant(name=_named_after(kind, name), kills=kills, bug=bug, backend=built, unprivileged=unprivileged)
        return kind

    return register


def breaks_in_memory(*, kills: list[str], bug: str, name: str | None = None) -> Callable[[Kind], Kind]:
    """Class decorator: register the in-memory backend class as a mutant (see `memory_mutant`)."""

    def register(kind: Kind) -> Kind:
        memory_mutant(name=_named_after(kind, name), kills=kills, bug=bug, kind=kind)
        return kind

    return register


def mutant(
    *,
    kills: list[str],
    bug: str,
    backend: Build | None = None,
    fresh_backend: Build | None = None,
    destructive_backend: Build | None = None,
    attach_backend: Callable[[Path, WorkspaceRef], WorkspaceBackend] | None = None,
    destroy_environment: Callable[[WorkspaceBackend], Awaitable[None]] | None = None,
    stop_environment: Callable[[WorkspaceBackend], Awaitable[None]] | None = None,
    start_environment: Callable[[WorkspaceBackend], Awaitable[None]] | None = None,
    make_symlink: Callable[[WorkspaceBackend, str, str], Awaitable[None]] | None = None,
    inject_fault: InjectFault | None = None,
    unprivileged: bool = False,
    rebuild_per_call: bool = False,
    name: str | None = None,
) -> Mutant:
    """Register a mutant; the fixtures it does not break default to the `local` target's (LocalWorkspaceBackend).

    Without `backend`, the shared backend is a correct `LocalWorkspaceBackend`: the bug is in another fixture.
    """
    backend = backend or on_shared_dir(LocalWorkspaceBackend)
    declared = Mutant(
        name=name or str(getattr(backend, '__name__', 'mutant')),
        kills=tuple(kills),
        bug=bug,
        backend=backend,
        fresh_backend=fresh_backend or _LOCAL.fresh_backend,
        destructive_backend=destructive_backend or _LOCAL.destructive_backend,
        attach_backend=attach_backend or _LOCAL.attach_backend,
        destroy_environment=destroy_environment or _LOCAL.destroy_environment,
        stop_environment=stop_environment,
        start_environment=start_environment,
        make_symlink=make_symlink,
        inject_fault=inject_fault,
        unprivileged=unprivileged,
        rebuild_per_call=rebuild_per_call,
    )
    if any(existing.name == declared.name for existing in MUTANTS):
        raise ValueError(f'two mutants are named {declared.name!r}')
    MUTANTS.append(declared)
    return declared


@dataclass(frozen=True)
class CapabilityMutant:
    """A capability (or policy wrapper) that breaks one clause, how to build it, and the rules it must fail."""

    name: str
    kills: tuple[str, ...]
    bug: str
    build: Callable[[Path], CapabilitySetup]


CAPABILITY_MUTANTS: list[CapabilityMutant] = []


def capability_mutant(*, name: str, kills: list[str], bug: str, build: Callable[[Path], CapabilitySetup]) -> None:
    """Register a capability mutant; `build` gets each rule's own scratch directory."""
    if any(existing.name == name for existing in CAPABILITY_MUTANTS):
        raise ValueError(f'two capability mutants are named {name!r}')
    CAPABILITY_MUTANTS.append(CapabilityMutant(name=name, kills=tuple(kills), bug=bug, build=build))


@dataclass(frozen=True)
class ToolMutant:
    """A tool capability that breaks one clause, the default workspaces it is run in, and the rules it must fail."""

    name: str
    kills: tuple[str, ...]
    bug: str
    build: Callable[[], AbstractCapability[Any]]
    workspaces: tuple[str, ...]
    claims: frozenset[str] = frozenset()
    """What the mutant claims beyond the contract: a claim rule binds only where its claim is made."""


TOOL_MUTANTS: list[ToolMutant] = []


def tool_mutant(
    *, kills: list[str], bug: str, workspaces: list[str], name: str | None = None, claims: Iterable[str] = ()
) -> Callable[[ToolKind], ToolKind]:
    """Class decorator: register the capability class, built with no arguments, as a tool mutant run in `workspaces`.

    The mutant is named after the class (`WritesWithOpen`: `writes_with_open`) unless `name` says otherwise. A mutant
    of a claim rule makes the claim (`claims`) and breaks it, as a capability that promises too much would.
    """

    def register(kind: ToolKind) -> ToolKind:
        named = _named_after(kind, name)
        if any(existing.name == named for existing in TOOL_MUTANTS):
            raise ValueError(f'two tool mutants are named {named!r}')
        TOOL_MUTANTS.append(ToolMutant(named, tuple(kills), bug, kind, tuple(workspaces), frozenset(claims)))
        return kind

    return register


@dataclass(frozen=True)
class IsolationMutant:
    """A sandbox that claims isolation it does not have, how to build it, and the isolation rules it must fail."""

    name: str
    kills: tuple[str, ...]
    bug: str
    backend: Build
    claims: frozenset[str]


ISOLATION_MUTANTS: list[IsolationMutant] = []
ALL_CLAIMS = frozenset({'files', 'processes', 'environment', 'network'})


def pretends(*, kills: list[str], bug: str, name: str, claims: frozenset[str] = ALL_CLAIMS) -> Callable[[Build], Build]:
    """Decorator of a build function `(run_dir) -> backend`: register it as an isolation mutant claiming `claims`."""

    def register(build: Build) -> Build:
        if any(existing.name == name for existing in ISOLATION_MUTANTS):
            raise ValueError(f'two isolation mutants are named {name!r}')
        ISOLATION_MUTANTS.append(IsolationMutant(name, tuple(kills), bug, build, claims))
        return build

    return register
