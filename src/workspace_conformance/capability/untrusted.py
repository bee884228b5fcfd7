"""Rules on refs from stored or untrusted history: a capability attaches only to environments it recognizes."""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import WorkspaceRef

from ..authoring import SCRATCH_PREFIX, accepted, first_use, own_environment, rule, skip

__all__ = ('UntrustedRefRules',)

LONG_ID = 'a' * 10_000


def _hostile_ids(own: str) -> list[str]:
    """Ids nobody should attach to: traversal, absolute paths, empty, very long, NUL and newline."""
    ids = ['/etc', '/', '/root', os.path.expanduser('~'), tempfile.gettempdir(), '', '.', '..', '../..', LONG_ID]
    ids += ['x\x00y', 'x\ny', f'{own}\x00', f'{own}\n', f'\n{own}', f'{own}/..', f'{own}/../..', f' {own}', f'{own} ']
    if posixpath.isabs(own):
        ids += [posixpath.dirname(own), posixpath.join(own, '..', '..', 'etc'), f'../{posixpath.basename(own)}']
    return [candidate for candidate in dict.fromkeys(ids) if candidate != own]


def _spellings(own: str) -> list[str]:
    """Other spellings of a path-like id: trailing slashes, `.` and doubled separators."""
    name = posixpath.basename(own)
    parent = posixpath.dirname(own)
    return [f'{own}/', f'{own}//', f'{own}/.', f'{parent}//{name}', f'{parent}/./{name}', f'{parent}/{name}/../{name}']


@contextlib.contextmanager
def _symlink_to(own: str) -> Iterator[str | None]:
    """A symlink to the directory `own` names on this machine, in a temporary directory; None if it is not one."""
    if not os.path.isdir(own):
        yield None
        return
    holder = tempfile.mkdtemp(prefix=SCRATCH_PREFIX)
    try:
        link = os.path.join(holder, 'link')
        os.symlink(own, link)
        yield link
    finally:
        shutil.rmtree(holder, ignore_errors=True)


@contextlib.contextmanager
def _neighbour_of(own: str) -> Iterator[str | None]:
    """A real directory next to the one `own` names on this machine, removed afterwards; None if it is not one."""
    parent = posixpath.dirname(own)
    if not (os.path.isdir(own) and os.path.isdir(parent) and os.access(parent, os.W_OK)):
        yield None
        return
    neighbour = os.path.join(parent, f'{SCRATCH_PREFIX}neighbour-{uuid.uuid4().hex[:12]}')
    os.mkdir(neighbour)
    try:
        yield neighbour
    finally:
        shutil.rmtree(neighbour, ignore_errors=True)


def _refs(provider: str, ids: Sequence[str]) -> list[WorkspaceRef]:
    return [WorkspaceRef(provider=provider, id=candidate) for candidate in ids]


def _verdict(found: list[str], what: str) -> None:
    assert not found, (
        f'the capability attached to {what} instead of declining it: '
        + '; '.join(found[:4])
        + (f' (and {len(found) - 4} more)' if len(found) > 4 else '')
    )


class UntrustedRefRules:
    """Rules on the refs a capability must decline (return None) or refuse with a clear error, never attach to."""

    @rule(area='untrusted', must='C04')
    async def test_another_providers_ref_is_declined(self, capability: AbstractCapability[Any], deps: object) -> None:
        """`get_workspace` returns None (or raises) for a ref of another provider, even one with its own id."""
        own = await first_use(own_environment(capability, deps))
        others = [f'{own.provider}-other', 'workspace-conformance-foreign', own.provider.upper(), '']
        refs = [WorkspaceRef(provider=name, id=own.id) for name in others if name != own.provider]
        _verdict(accepted(capability, deps, refs), "another provider's ref")

    @rule(area='untrusted', must='C05')
    async def test_hostile_ref_ids_are_declined(
        self, capability: AbstractCapability[Any], deps: object, foreign_refs: Sequence[WorkspaceRef]
    ) -> None:
        """`get_workspace` declines `..`, absolute, empty, very long, NUL and newline ids, and `foreign_refs`."""
        own = await first_use(own_environment(capability, deps))
        refs = [*_refs(own.provider, _hostile_ids(own.id)), *foreign_refs]
        _verdict(accepted(capability, deps, refs), 'an untrusted ref')

    @rule(area='untrusted', must='C05')
    async def test_a_neighbouring_environment_is_declined(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """`get_workspace` declines the id of an environment it did not create, such as a directory next to its own."""
        own = await first_use(own_environment(capability, deps))
        ids = [f'{own.id}-neighbour', f'{own.id}x', own.id[:-1], own.id.swapcase()]
        with _neighbour_of(own.id) as neighbour:
            if neighbour is not None:
                ids.append(neighbour)
            refs = _refs(own.provider, [candidate for candidate in dict.fromkeys(ids) if candidate != own.id])
            _verdict(accepted(capability, deps, refs), 'an environment it did not create')

    @rule(area='untrusted', must='C05')
    async def test_other_spellings_of_its_path_are_declined(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """A path-like ref id spelled another way (a trailing slash, `.`, a symlink) is declined."""
        own = await first_use(own_environment(capability, deps))
        if not posixpath.isabs(own.id):
            skip('not-applicable', f'the ref id {own.id[:80]!r} is not a path')
        with _symlink_to(own.id) as link:
            ids = [*_spellings(own.id), *([link] if link is not None else [])]
            _verdict(accepted(capability, deps, _refs(own.provider, ids)), 'its own path spelled another way')
