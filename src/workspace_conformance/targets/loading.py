"""Turn a TARGET argument (a named target, or `package.module:factory`) into a `Target`, with one-line errors."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import WorkspaceBackend, WorkspaceRef

from .base import CapabilitySetup, Target, TargetError, TargetNotRunnable
from .registry import NAMED_TARGETS

__all__ = ('load_callable', 'resolve_capability', 'resolve_target')


def load_callable(spec: str, what: str) -> Callable[..., Any]:
    """Import `package.module:attribute` (the attribute may be dotted) and check it can be called."""
    module_name, colon, attribute = spec.partition(':')
    if not colon or not module_name or not attribute:
        raise TargetError(f'{what} {spec!r} is not of the form package.module:callable')
    try:
        value: Any = importlib.import_module(module_name)
    except Exception as error:
        raise TargetError(f'{what} {spec!r}: cannot import {module_name!r}: {type(error).__name__}: {error}') from None
    for part in attribute.split('.'):
        if not hasattr(value, part):
            raise TargetError(f'{what} {spec!r}: module {module_name!r} has no attribute {attribute!r}')
        value = getattr(value, part)
    if not callable(value):
        raise TargetError(f'{what} {spec!r} is a {type(value).__name__}, not a callable')
    return value  # type: ignore[no-any-return]


def _with_run_dir(factory: Callable[..., Any]) -> Callable[[Path], Any]:
    """Call `factory(run_dir)` if it takes an argument, else `factory()`."""
    try:
        takes_argument = any(
            parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD, parameter.VAR_POSITIONAL)
            for parameter in inspect.signature(factory).parameters.values()
        )
    except (TypeError, ValueError):
        takes_argument = False
    return (lambda run_dir: factory(run_dir)) if takes_argument else (lambda run_dir: factory())


def _checked_backend(spec: str, build: Callable[[Path], Any], run_dir: Path) -> WorkspaceBackend:
    try:
        backend = build(run_dir)
    except Exception as error:
        raise TargetError(f'target {spec!r} raised {type(error).__name__} when called: {error}') from None
    if not isinstance(backend, WorkspaceBackend):
        raise TargetError(f'target {spec!r} returned a {type(backend).__name__}, not a WorkspaceBackend')
    return backend


def resolve_target(
    spec: str | None,
    *,
    options: Mapping[str, str | None] | None = None,
    run_id: str = 'check',
    fresh: str | None = None,
    attach: str | None = None,
    destroy: str | None = None,
    check_dir: Path | None = None,
    check_requirements: bool = True,
) -> Target:
    """The target a TARGET argument names.

    A named target whose requirement is absent raises `TargetNotRunnable` (when `check_requirements`); for a
    `package.module:factory` target, `check_dir` builds one backend there to prove the factory works.
    """
    name = spec or 'local'
    given = {key: value for key, value in (options or {}).items() if value is not None}
    if name in NAMED_TARGETS:
        if fresh or attach or destroy:
            raise TargetError(f'--fresh, --attach and --destroy go with a package.module:factory target, not {name!r}')
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
    build = _with_run_dir(load_callable(name, 'target'))
    if check_dir is not None:
        _checked_backend(name, build, check_dir)
    fresh_build = _with_run_dir(load_callable(fresh, '--fresh')) if fresh else None
    attach_factory = load_callable(attach, '--attach') if attach else None
    destroy_function = load_callable(destroy, '--destroy') if destroy else None

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
    build = _with_run_dir(load_callable(spec, '--capability'))

    def setup(run_dir: Path) -> CapabilitySetup:
        built = build(run_dir)
        if isinstance(built, CapabilitySetup):
            return built
        if not isinstance(built, AbstractCapability):
            raise TargetError(f'--capability {spec!r} returned {type(built).__name__}, not an AbstractCapability')
        return CapabilitySetup(capability=built)

    return setup
