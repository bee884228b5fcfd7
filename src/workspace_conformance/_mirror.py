"""Proxies that mirror exactly the workspace protocol members a backend has, routing each call through a hook."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from ._frames import machinery_hidden

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = ('OPERATIONS', 'Mirror', 'mirrored_class', 'protocol_members')

OPERATIONS: tuple[str, ...] = (
    *('working_dir', 'run', 'read_bytes', 'write_bytes', 'stat'),
    *('list_dir', 'make_dir', 'remove', 'exists', 'realpath', 'run_in_directory'),
)
"""Every awaitable member of the workspace protocols (`run_in_directory`: pydantic-ai 2.78's SupportsRunInDirectory)."""

M = TypeVar('M', bound='Mirror')


class Mirror:
    """Base of mirroring proxies: `_wrapped` is the backend, `_intercept` sees every protocol call."""

    _wrapped: Any

    def __getattr__(self, name: str) -> Any:
        if name == '_wrapped':
            raise AttributeError(name)
        return getattr(self._wrapped, name)

    async def _intercept(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], call: Callable[[], Awaitable[Any]]
    ) -> Any:
        return await call()


def _has(backend: object, name: str) -> bool:
    try:
        return hasattr(backend, name)
    except Exception:  # a `ref` property that raises still exists
        return True


def protocol_members(backend: object) -> tuple[str, ...]:
    """The protocol members (`ref` and operations) `backend` has, so a mirror answers `isinstance` the same."""
    return tuple(name for name in ('ref', *OPERATIONS) if _has(backend, name))


def _operation(name: str) -> Callable[..., Awaitable[Any]]:
    async def operation(self: Mirror, *args: Any, **kwargs: Any) -> Any:
        method = getattr(self._wrapped, name)
        return await self._intercept(name, args, kwargs, lambda: method(*args, **kwargs))

    operation.__name__ = name
    return operation


def _ref(self: Mirror) -> Any:
    return self._wrapped.ref


_CLASSES: dict[tuple[type[Mirror], tuple[str, ...]], type[Mirror]] = {}


def mirrored_class(base: type[M], members: tuple[str, ...]) -> type[M]:
    """A subclass of `base` with exactly `members` of the workspace protocols (one class per combination)."""
    known = _CLASSES.get((base, members))
    if known is not None:
        return cast(type[M], known)
    namespace: dict[str, object] = {name: _operation(name) for name in members if name != 'ref'}
    if 'ref' in members:
        namespace['ref'] = property(_ref)
    namespace['__qualname__'] = base.__qualname__
    made = type(base.__name__, (base,), namespace)
    _CLASSES[(base, members)] = made
    return made
