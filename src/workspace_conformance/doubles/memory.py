"""`InMemoryBackend`: the reference model of the filesystem contract, in memory, with capability switches."""

from __future__ import annotations

import errno
import posixpath
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import anyio.lowlevel
from pydantic_ai.workspaces import FileEntry, WorkspaceRef, WorkspaceUnavailableError

from ._tree import READ, SEARCH, WRITE, Directory, File, Node, Symlink, Tree, parse_path

__all__ = ('FilesystemMethods', 'InMemoryBackend', 'MemoryCore', 'RealpathMethod', 'SymlinkMethod', 'memory_symlink')

PROVIDER = 'memory'
_KNOWN_LISTINGS = 1024
"""Directories whose listing entries a backend keeps for reuse before it starts over."""
_STALE_ENTRIES = 64
"""Entries a directory's listing keeps beyond its children (names since removed) before it starts over."""


class MemoryCore:
    """Identity, working directory and lifecycle of an in-memory environment; no file or command methods."""

    def __init__(
        self,
        *,
        working_dir: str = '/workspace',
        files: Mapping[str, bytes] | None = None,
        uid: int = 1000,
        lazy: bool = True,
        tree: Tree | None = None,
        ref: WorkspaceRef | None = None,
    ) -> None:
        if not posixpath.isabs(working_dir) or posixpath.normpath(working_dir) != working_dir:
            raise ValueError(f'working_dir must be an absolute, normalized path, got {working_dir!r}')
        self.tree = tree or Tree(uid=uid)
        self._working_dir = working_dir
        self._seed = dict(files or {})
        self._ref = ref
        self._creating = False
        self.destroyed = False
        self.operations = 0
        """How many operations this backend served, for tests that count round trips."""
        self._entries: dict[str, dict[str, FileEntry]] = {}
        """By directory path (with a final `/`) and name, the file and directory entries of its last listing: values
        (name, path, kind, size), reused while still equal."""
        if not lazy and ref is None:
            self._create()

    @property
    def ref(self) -> WorkspaceRef | None:
        """`None` until the first operation when built lazily; then `WorkspaceRef('memory', <uuid>)`, never changed."""
        return self._ref

    def _create(self) -> None:
        self._creating = True
        self.tree.make_dirs(self._working_dir)
        for path, data in self._seed.items():
            self.write_file(self._absolute(path), data)
        self._ref = WorkspaceRef(provider=PROVIDER, id=uuid.uuid4().hex)
        self._creating = False

    def _ensure_created(self) -> None:
        if self._ref is None and not self._creating:
            self._create()

    def _absolute(self, path: str) -> str:
        return path if posixpath.isabs(path) else posixpath.join(self._working_dir, path)

    async def _enter(self) -> None:
        """Every operation starts here: a cancellation point, then creation on first use, then the liveness check."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        # `check_alive` and `_ensure_created`, their tests inlined: every operation pays for this.
        if self.destroyed:
            self.check_alive()
        if self._ref is None and not self._creating:
            self._create()
        self.operations += 1

    def check_alive(self) -> None:
        """Raise `WorkspaceUnavailableError` once the environment was destroyed."""
        if self.destroyed:
            raise WorkspaceUnavailableError(f'in-memory environment {self._ref and self._ref.id} was destroyed')

    def destroy(self) -> None:
        """Destroy the environment: every later operation raises `WorkspaceUnavailableError`."""
        self.destroyed = True

    async def working_dir(self) -> str:
        await self._enter()
        return self._working_dir

    # Synchronous helpers for seeding and inspecting the tree from tests; they create the environment if needed.
    def write_file(self, path: str, data: bytes) -> None:
        """Write `data` at `path` with `write_bytes` semantics (parents created, links followed)."""
        self._ensure_created()
        real, resolved = self.tree.resolve(path)
        directory, name = posixpath.split(real)
        try:
            parent = self.tree.make_dirs(directory, resolved=resolved)
        except FileExistsError:  # the parent itself is a file
            raise NotADirectoryError(errno.ENOTDIR, 'Not a directory', path) from None
        existing = parent.children.get(name)
        if isinstance(existing, Directory):
            raise IsADirectoryError(errno.EISDIR, 'Is a directory', path)
        if isinstance(existing, File):
            self.tree.require(existing, WRITE, path)
            existing.data = bytes(data)
        else:
            self.tree.require(parent, WRITE | SEARCH, path)
            parent.children[name] = File(bytes(data))

    def symlink(self, target: str, link: str) -> None:
        """Create the symlink `link` pointing at `target` (relative targets start in the link's directory)."""
        self._ensure_created()
        real_link = posixpath.join(self.tree.realpath(posixpath.dirname(link)), posixpath.basename(link))
        parent = self.tree.node(posixpath.dirname(real_link))
        if not isinstance(parent, Directory):
            raise NotADirectoryError(errno.ENOTDIR, 'Not a directory', link)
        if posixpath.basename(real_link) in parent.children:
            raise FileExistsError(errno.EEXIST, 'File exists', link)
        self.tree.require(parent, WRITE | SEARCH, link)
        parent.children[posixpath.basename(real_link)] = Symlink(target)

    def chmod(self, path: str, mode: int) -> None:
        """Set the permission bits of the file or directory at `path`."""
        self._ensure_created()
        node = self.tree.node(path)
        if isinstance(node, File | Directory):
            node.mode = mode

    def dump(self) -> str:
        """The whole tree, one path a line, for assertions and failure messages."""
        return self.tree.dump()


class FilesystemMethods(MemoryCore):
    """`SupportsFilesystem` over the tree, with the builtin errors the contract names."""

    async def read_bytes(self, path: str) -> bytes:
        await self._enter()
        node = self.tree.node(path)
        if isinstance(node, Directory):
            raise IsADirectoryError(errno.EISDIR, 'Is a directory', path)
        assert isinstance(node, File)
        self.tree.require(node, READ, path)
        return node.data

    async def write_bytes(self, path: str, data: bytes) -> None:
        await self._enter()
        self.write_file(path, data)

    async def stat(self, path: str) -> FileEntry:
        await self._enter()
        node = self.tree.node(path)
        names, _, climbs = parse_path(path)
        # The last component, as `basename(normpath(path))` has it, without normalizing the path again.
        name = names[-1] if names and not climbs else posixpath.basename(posixpath.normpath(path))
        if isinstance(node, Directory):
            return FileEntry(name=name, path=path, is_dir=True, size=None)
        assert isinstance(node, File)
        return FileEntry(name=name, path=path, is_dir=False, size=len(node.data))

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        await self._enter()
        node = self.tree.node(path)
        if not isinstance(node, Directory):
            raise NotADirectoryError(errno.ENOTDIR, 'Not a directory', path)
        self.tree.require(node, READ | SEARCH, path)
        prefix = path.rstrip('/') + '/'
        entries: list[FileEntry] = []
        append = entries.append
        children = node.children
        listings = self._entries
        known = listings.get(prefix)
        if known is None or len(known) > len(children) + _STALE_ENTRIES:  # new, or many names gone since
            if len(listings) >= _KNOWN_LISTINGS:
                listings.clear()
            known = listings[prefix] = {}
        for name in sorted(children):  # strings sort faster than (name, node) items, which compare names twice
            child = children[name]
            # Files and directories inline (most entries), links through `_entry`. A FileEntry is frozen and is
            # only its four values, so the one built for the same path, kind and size last time is returned again:
            # building one costs more than the rest of the listing.
            kind = type(child)
            if kind is File:
                size = len(child.data)  # type: ignore[union-attr]  # `kind` is its exact type
                entry = known.get(name)
                if entry is None or entry.size != size or entry.is_dir:
                    entry = known[name] = FileEntry(name=name, path=prefix + name, is_dir=False, size=size)
            elif kind is Directory:
                entry = known.get(name)
                if entry is None or not entry.is_dir:
                    entry = known[name] = FileEntry(name=name, path=prefix + name, is_dir=True, size=None)
            else:
                entry = self._entry(prefix + name, name, child)
            append(entry)
        return tuple(entries)

    def _entry(self, path: str, name: str, child: Node) -> FileEntry:
        target: Node | None = child
        if type(child) is Symlink:
            try:
                target = self.tree.node(path)
            except OSError:  # a dangling link or a loop is listed, as a non-directory without a size
                target = None
        if type(target) is File:
            return FileEntry(name=name, path=path, is_dir=False, size=len(target.data))
        return FileEntry(name=name, path=path, is_dir=type(target) is Directory, size=None)

    async def make_dir(self, path: str) -> None:
        await self._enter()
        self.tree.make_dirs(path)

    async def remove(self, path: str) -> None:
        await self._enter()
        tree = self.tree
        directory, name = posixpath.split(path)
        parent_path, link_free = tree.resolve(directory)
        real = posixpath.join(parent_path, name)
        parent: Node | None = None
        resolved: str | None = None
        if link_free and name and name != '.' and name != '..':
            # A plain name in a link-free directory: one walk finds the node and the directory holding it, and a
            # node that is no link resolves to `real` itself, so neither is looked up again.
            _, found, parent = tree.walk(real, follow=False)
            if found is None:
                raise FileNotFoundError(errno.ENOENT, 'No such file or directory', real)
            node, resolved = found, real
        else:
            node = tree.node(real, follow=False)
        if not isinstance(node, Symlink):
            resolved = resolved or tree.realpath(real)
            if resolved == self._working_dir or self._working_dir.startswith(resolved.rstrip('/') + '/'):
                raise ValueError('cannot remove the working directory or one of its ancestors')
        if parent is None:
            parent = tree.node(parent_path)
        assert isinstance(parent, Directory)
        tree.require(parent, WRITE | SEARCH, path)
        del parent.children[posixpath.basename(real)]

    async def exists(self, path: str) -> bool:
        await self._enter()
        try:
            self.tree.node(path)
        except OSError:
            return False
        return True


class RealpathMethod(MemoryCore):
    """`SupportsRealpath`, resolving links inside the tree."""

    async def realpath(self, path: str) -> str:
        await self._enter()
        return self.tree.realpath(path)


class SymlinkMethod(MemoryCore):
    """A public way to create symlinks, also the suite's `make_symlink` fixture (see `memory_symlink`)."""

    async def make_symlink(self, target: str, link: str) -> None:
        """Create the symlink `link` pointing at `target`."""
        await self._enter()
        self.symlink(target, link)


async def memory_symlink(backend: Any, target: str, link: str) -> None:
    """The suite's `make_symlink` fixture for in-memory doubles: `async (backend, target, link)`."""
    await backend.make_symlink(target, link)


class InMemoryBackend(FilesystemMethods, RealpathMethod, SymlinkMethod):
    """A filesystem-only backend in memory: files, directories, symlinks, modes; no commands.

    Lazy by default (ref `None` until the first operation); `lazy=False` creates at construction. `uid=0`
    bypasses permissions as root does. `files` seeds the environment (paths relative to the working directory).
    Operations of concurrent tasks never interleave inside one operation, on asyncio and trio.
    """
