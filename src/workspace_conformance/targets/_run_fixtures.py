"""The class-scoped fixtures every suite class generated for a target shares: its event loops, scratch and backend."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, cast

import pytest
from pydantic_ai.workspaces import WorkspaceBackend

from ._ledger import record_ref
from .base import Target, TargetError

__all__ = ('RunFixtures', 'checked_backend', 'run_fixtures')


class RunFixtures(NamedTuple):
    """The fixture functions to assign in a generated suite class's body (`anyio_backend, run_root, backend = ...`)."""

    anyio_backend: Any
    run_root: Any
    backend: Any


def run_fixtures(target: Target, run_dir: Path | None, loops: Sequence[str], prefix: str = '') -> RunFixtures:
    """The event loop (one class per loop), the run's scratch directory `run_dir / <prefix><loop>` and the backend.

    With `run_dir` None the scratch directory is a class-scoped temporary one. The backend is built once per class,
    awaited if the target's factory is `async def`, and its ref goes in the run's ledger for cleanup.
    The functions are classmethods of the suite class they are assigned to, which mypy cannot see here.
    """

    @pytest.fixture(scope='class', params=list(loops))  # type: ignore[misc]
    @classmethod
    def anyio_backend(cls: type, request: pytest.FixtureRequest) -> str:
        return str(request.param)

    @pytest.fixture(scope='class')  # type: ignore[misc]
    @classmethod
    def run_root(cls: type, anyio_backend: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
        base = run_dir if run_dir is not None else tmp_path_factory.mktemp(f'{target.name}-{prefix}'.rstrip('-'))
        return base / f'{prefix}{anyio_backend}'

    if target.backend_awaits:

        @pytest.fixture(scope='class', name='backend')  # type: ignore[misc]
        @classmethod
        async def backend(cls: type, run_root: Path) -> AsyncIterator[WorkspaceBackend]:
            built = await target.backend(run_root)  # type: ignore[misc]
            yield checked_backend(target, built)
            record_ref(run_root.parent, built.ref)

        return RunFixtures(anyio_backend, run_root, backend)

    @pytest.fixture(scope='class', name='backend')  # type: ignore[misc]
    @classmethod
    def sync_backend(cls: type, run_root: Path) -> Iterator[WorkspaceBackend]:
        built = target.backend(run_root)
        yield checked_backend(target, built)
        record_ref(run_root.parent, built.ref)

    return RunFixtures(anyio_backend, run_root, sync_backend)


def checked_backend(target: Target, built: Any) -> WorkspaceBackend:
    """`built`, unless it is an awaitable or a class: a one-line error (the CLI's preflight says it before any rule)."""
    if inspect.isawaitable(built):
        if inspect.iscoroutine(built):
            built.close()
        raise TargetError(f'target {target.name!r} returned an awaitable: make it an `async def` factory')
    if isinstance(built, type):
        raise TargetError(f'target {target.name!r} returned the class {built.__name__}: return an instance')
    return cast(WorkspaceBackend, built)
