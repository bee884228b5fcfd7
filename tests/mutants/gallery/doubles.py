"""Mutants of the doubles (the in-memory reference model, the provider model), where the local mutants cannot reach."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from pathlib import Path

from pydantic_ai.workspaces import FileEntry, WorkspaceBackend

from workspace_conformance.doubles import InMemoryBackend, InMemoryProvider
from workspace_conformance.doubles.provider import ProviderBackend

from ..registry import breaks_in_memory, in_memory, mutant


@breaks_in_memory(
    kills=['realpath_and_entries_follow_symlinks'],
    bug='A filesystem-only backend normalizes `..` as text before resolving links, so `link/..` climbs from the link.',
)
class MemoryCollapsesDotdotAsText(InMemoryBackend):
    """Collapses `..` as text before following links, so `link/..` never climbs from the link's target."""

    async def realpath(self, path: str) -> str:
        return await super().realpath(posixpath.normpath(path))


@breaks_in_memory(
    kills=['symlink_loop_does_not_break_listing', 'realpath_and_entries_follow_symlinks'],
    bug='A storage API that lists only files and directories hides every symlink, loops included.',
)
class MemoryListingDropsLinks(InMemoryBackend):
    """Lists only real files and directories: symlinks (and so loops) vanish from listings."""

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        entries = await super().list_dir(path)
        node = self.tree.node(path)
        kinds = getattr(node, 'children', {})
        return tuple(entry for entry in entries if type(kinds.get(entry.name)).__name__ != 'Symlink')


@breaks_in_memory(
    kills=['writes_go_through_a_symlink'],
    bug='An object-store backend writes by replacing whatever is at the path, so a symlink becomes a plain file.',
)
class MemoryWriteReplacesLinks(InMemoryBackend):
    """`write_bytes` to a symlink deletes the link and writes a new file in its place (an object store's put)."""

    async def write_bytes(self, path: str, data: bytes) -> None:
        parent = self.tree.node(posixpath.dirname(path))
        children = getattr(parent, 'children', {})
        if type(children.get(posixpath.basename(path))).__name__ == 'Symlink':
            del children[posixpath.basename(path)]
        await super().write_bytes(path, data)


class UnlockedProviderBackend(ProviderBackend):
    """The provider's backend without its get-or-create lock: concurrent first uses each create an environment."""

    async def working_dir(self) -> str:
        if self._ref is None:
            self._ref = await self.provider.create()
            self._connected = True
        return await super().working_dir()


def _racing_provider(run_dir: Path) -> WorkspaceBackend:
    return UnlockedProviderBackend(InMemoryProvider(create_latency=0.02), None)


mutant(
    name='provider_without_creation_lock',
    kills=['concurrent_first_use_shares_one_environment'],
    bug='A provider SDK wrapper checks for an environment and creates one without a lock, racing itself.',
    backend=lambda run_dir: InMemoryBackend(),
    fresh_backend=_racing_provider,
)


mutant(
    name='files_in_the_python_object',
    kills=['bytes_round_trip_and_write_creates_parents', 'make_dir_creates_parents_and_is_idempotent'],
    bug='The backend keeps its files in the Python object, so a backend rebuilt from its ref (durable) has none.',
    backend=in_memory(InMemoryBackend),
    attach_backend=lambda run_dir, ref: InMemoryBackend(ref=ref, lazy=False),
    rebuild_per_call=True,
)
