"""Turn a TARGET argument (a named target, or `package.module:factory`) into a `Target`, with one-line errors."""

from __future__ import annotations

import importlib
import inspect
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

from .base import CapabilitySetup, Target, TargetError, TargetNotRunnable
from .registry import NAMED_TARGETS

if TYPE_CHECKING:
    from .tools import ToolTarget

__all__ = ('IMPORT_HINT', 'load_callable', 'own_directory', 'resolve_capability', 'resolve_target', 'resolve_tools')

IMPORT_HINT = 'is its directory on PYTHONPATH? run from it or set PYTHONPATH'


def load_callable(spec: str, what: str) -> Callable[..., Any]:
    """Import `package.module:attribute` (the attribute may be dotted) and check it can be called."""
    module_name, colon, attribute = spec.partition(':')
    if not colon or not module_name or not attribute:
        raise TargetError(f'{what} {spec!r} is not of the form package.module:callable')
    try:
        value: Any = importlib.import_module(module_name)
    except Exception as error:
        hint = f': {IMPORT_HINT}' if isinstance(error, ImportError) else ''
        raise TargetError(
            f'{what} {spec!r}: cannot import {module_name!r}: {type(error).__name__}: {error}{hint}'
        ) from None
    for part in attribute.split('.'):
        if not hasattr(value, part):
            raise TargetError(f'{what} {spec!r}: module {module_name!r} has no attribute {attribute!r}')
        value = getattr(value, part)
    if not callable(value):
        raise TargetError(f'{what} {spec!r} is a {type(value).__name__}, not a callable')
    return value  # type: ignore[no-any-return]


def own_directory(parent: Path, role: str) -> Path:
    """A new, empty directory under `parent` (created first, with its parents) for one factory call."""
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f'{role}-', dir=parent))


def _with_run_dir(factory: Callable[..., Any], role: str | None = None) -> Callable[[Path], Any]:
    """Call `factory(directory)` if it takes an argument, else `factory()`.

    With a `role`, each call gets an existing directory of its own under the one given (`<role>-XXXX`); without,
    the directory given, created if missing.
    """
    try:
        takes_argument = any(
            parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD, parameter.VAR_POSITIONAL)
            for parameter in inspect.signature(factory).parameters.values()
        )
    except (TypeError, ValueError):
        takes_argument = False
    if not takes_argument:
        return lambda run_dir: factory()

    def call(run_dir: Path) -> Any:
        if role is None:
            run_dir.mkdir(parents=True, exist_ok=True)
            return factory(run_dir)
        return factory(own_directory(run_dir, role))

    return call


def _plain(spec: str | None, what: str, factory: Callable[..., Any] | None, returning: str = 'a backend') -> None:
    """Refuse an `async def` function where the suite calls it without awaiting (`--fresh`, `--attach`, a fault)."""
    if factory is not None and inspect.iscoroutinefunction(factory):
        raise TargetError(f'{what} {spec!r} is an async function: {what} takes a plain function returning {returning}')


def resolve_target(
    spec: str | None,
    *,
    options: Mapping[str, str | None] | None = None,
    run_id: str = 'check',
    fresh: str | None = None,
    attach: str | None = None,
    destroy: str | None = None,
    stop: str | None = None,
    start: str | None = None,
    inject_fault: str | None = None,
    check_requirements: bool = True,
    awaits: bool = False,
) -> Target:
    """The target a TARGET argument names.

    A named target whose requirement is absent raises `TargetNotRunnable` (when `check_requirements`). A
    `package.module:factory` target is imported, not built (the preflight builds it); `awaits` says its factory
    returns an awaitable even if it is no `async def`. Each of its factories gets an existing directory of its own.
    """
    name = spec or 'local'
    given = {key: value for key, value in (options or {}).items() if value is not None}
    if name in NAMED_TARGETS:
        if fresh or attach or destroy or stop or start or inject_fault:
            raise TargetError(
                '--fresh, --attach, --destroy, --stop, --start and --inject-fault go with a package.module:factory '
                f'target, not {name!r}'
            )
        named = NAMED_TARGETS[name]
        values = named.values(given)
        if check_requirements:
            missing = named.missing(values)
            if missing is not None:
                raise TargetNotRunnable(name, missing)
        return named.build(values, run_id)
    if ':' not in name:
        known = ', '.join(NAMED_TARGETS)
        raise TargetError(f'unknown target {name!r}: use one of {known}, or package.module:factory')
    if given:
        flags = ', '.join(f'--{key}' for key in given)
        raise TargetError(f'{flags} go with a named target (see `workspace-conformance targets`), not {name!r}')
    factory = load_callable(name, 'target')
    build = _with_run_dir(factory, 'backend')
    fresh_factory = load_callable(fresh, '--fresh') if fresh else None
    attach_factory = load_callable(attach, '--attach') if attach else None
    destroy_function = load_callable(destroy, '--destroy') if destroy else None
    stop_function = load_callable(stop, '--stop') if stop else None
    start_function = load_callable(start, '--start') if start else None
    fault_function = load_callable(inject_fault, '--inject-fault') if inject_fault else None
    _plain(fresh, '--fresh', fresh_factory)
    _plain(attach, '--attach', attach_factory)
    _plain(inject_fault, '--inject-fault', fault_function, 'the exception type the armed fault raises (or None)')
    fresh_build = _with_run_dir(fresh_factory, 'fresh') if fresh_factory else None

    def attach_backend(run_dir: Path, ref: WorkspaceRef) -> WorkspaceBackend:
        assert attach_factory is not None
        backend: WorkspaceBackend = attach_factory(ref)
        return backend

    return Target(
        name=name,
        description=f'the backend built by {name}',
        backend=build,
        fresh_backend=fresh_build,
        attach_backend=attach_backend if attach_factory else None,
        destroy_environment=destroy_function,
        stop_environment=stop_function,
        start_environment=start_function,
        inject_fault=fault_function,
        backend_awaits=awaits or inspect.iscoroutinefunction(factory),
    )


def resolve_capability(spec: str, target: Target) -> Callable[[Path], CapabilitySetup]:
    """How to build the capability `--capability` names: `target` for the target's own, else package.module:factory.

    A factory returns a capability, or a `CapabilitySetup` with its optional fixtures; it is called with no
    argument, or with the rule's scratch directory if it takes one.
    """
    if spec == 'target':
        if target.capability is None:
            raise TargetError(f'target {target.name!r} carries no capability: pass --capability package.module:factory')
        return target.capability
    build = _with_run_dir(load_callable(spec, '--capability'))  # the rule's scratch directory itself

    def setup(run_dir: Path) -> CapabilitySetup:
        built = build(run_dir)
        if isinstance(built, CapabilitySetup):
            return built
        if not isinstance(built, AbstractCapability):
            raise TargetError(f'--capability {spec!r} returned {type(built).__name__}, not an AbstractCapability')
        return CapabilitySetup(capability=built)

    return setup


def resolve_tools(spec: str) -> ToolTarget:
    """The tool target `--tools` names: a named one (`harness-filesystem`, ...) or package.module:factory.

    A factory returns an `AbstractCapability` and is called with no argument, once for each rule.
    """
    from .tools import TOOL_TARGETS, ToolTarget

    if spec in TOOL_TARGETS:
        return TOOL_TARGETS[spec]
    if ':' not in spec:
        raise TargetError(
            f'--tools {spec!r} is neither a named tool target ({", ".join(TOOL_TARGETS)}) nor module:factory'
        )
    factory = load_callable(spec, '--tools')

    def build() -> AbstractCapability[Any]:
        built = factory()
        if not isinstance(built, AbstractCapability):
            raise TargetError(f'--tools {spec!r} returned {type(built).__name__}, not an AbstractCapability')
        return built

    return ToolTarget(name=spec, description=f'the tools of {spec}', build=build)
