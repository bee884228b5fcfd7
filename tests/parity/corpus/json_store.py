"""A files-only workspace backend: each environment is one JSON-lines journal on disk.

Replaying the journal gives the document, which maps absolute paths to `{"type": "dir"}` or
`{"type": "file", "data": <base64>}`; each change appends one line `[path, node]` (`node` null: removed), so a write
costs what it writes, not the whole document (a directory of 5,000 files is 5,000 short appends). Each process keeps
the replayed document and the offset it read to. It implements `WorkspaceBackend` and `SupportsFilesystem` only: no
commands, no `realpath`, and its storage holds no symlinks.
"""

from __future__ import annotations

import base64
import json
import os
import posixpath
import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import anyio.to_thread
from pydantic_ai.workspaces import FileEntry, WorkspaceRef, WorkspaceUnavailableError

__all__ = ('PROVIDER', 'WORKING_DIR', 'JsonStoreBackend', 'destroy')

PROVIDER = 'json-store'
WORKING_DIR = '/workspace'

Node = dict[str, str]
Result = TypeVar('Result')


class Journaled(dict[str, Node]):
    """The document: a dict that notes each change an operation makes, for the journal."""

    def __init__(self) -> None:
        super().__init__()
        self.changes: list[tuple[str, Node | None]] = []

    def __setitem__(self, key: str, node: Node) -> None:
        super().__setitem__(key, node)
        self.changes.append((key, node))

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self.changes.append((key, None))


Document = Journaled
_REPLAYED: dict[str, tuple[int, int, Journaled]] = {}
"""Each journal this process replayed: its inode, the offset read to, and the document so far."""

_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_LOCK = threading.Lock()


def _document_lock(path: Path) -> threading.Lock:
    """One lock per document, shared by every backend of this process that reaches it."""
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(str(path), threading.Lock())


def _normalize(path: str) -> str:
    if not isinstance(path, str) or not posixpath.isabs(path):
        raise ValueError(f'paths must be absolute POSIX paths, got {path!r}')
    normalized = posixpath.normpath(path)
    return '/' + normalized.lstrip('/') if normalized.startswith('//') else normalized


def _ancestors(path: str) -> list[str]:
    """The proper ancestors of `path`, from `/` down."""
    chain: list[str] = []
    while path != '/':
        path = posixpath.dirname(path)
        chain.append(path)
    return chain[::-1]


class JsonStoreBackend:
    """A workspace whose files live in a JSON document under `store`; built without I/O, created on first use."""

    def __init__(self, store: Path, ref: WorkspaceRef | None = None) -> None:
        if ref is not None and ref.provider != PROVIDER:
            raise ValueError(f'not a {PROVIDER} ref: {ref!r}')
        self._store = store
        self._ref = ref
        self._create_lock = threading.Lock()

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._ref

    def document_path(self) -> Path:
        """Where this environment's document is; only meaningful once the environment has a ref."""
        if self._ref is None:
            raise RuntimeError('the environment has not been created yet')
        return self._store / f'{self._ref.id}.json'

    # Every operation runs in a worker thread, so concurrent first operations really race for the create.
    async def _call(self, operation: Callable[[Document], tuple[Result, bool]]) -> Result:
        return await anyio.to_thread.run_sync(self._locked, operation)

    def _locked(self, operation: Callable[[Document], tuple[Result, bool]]) -> Result:
        path = self._ensure()
        with _document_lock(path):
            document = self._load(path)
            document.changes.clear()
            try:
                result, changed = operation(document)
            except BaseException:
                _REPLAYED.pop(str(path), None)  # the operation may have changed the document half-way: replay it
                raise
            if changed:
                self._save(path, document.changes)
            return result

    def _ensure(self) -> Path:
        """The document of this environment, created (once) when the backend was built without a ref."""
        with self._create_lock:
            if self._ref is None:
                self._store.mkdir(parents=True, exist_ok=True)
                ref = WorkspaceRef(provider=PROVIDER, id=uuid.uuid4().hex)
                path = self._store / f'{ref.id}.json'
                with _document_lock(path):
                    self._save(path, [('/', {'type': 'dir'}), (WORKING_DIR, {'type': 'dir'})], exclusive=True)
                self._ref = ref  # recorded as soon as the create returned
            return self.document_path()

    def _load(self, path: Path) -> Journaled:
        """The document, replayed from the journal: from the offset this process read to, when the file is the same."""
        try:
            with open(path, 'rb') as journal:
                inode = os.fstat(journal.fileno()).st_ino
                known = _REPLAYED.get(str(path))
                inode_then, offset, document = known if known and known[0] == inode else (inode, 0, Journaled())
                journal.seek(offset)
                tail = journal.read()
        except FileNotFoundError:
            _REPLAYED.pop(str(path), None)
            raise WorkspaceUnavailableError(f'the environment {self._ref!r} does not exist (destroyed?)') from None
        complete = tail[: tail.rfind(b'\n') + 1]
        for line in complete.splitlines():
            key, node = json.loads(line)
            if node is None:
                dict.pop(document, key, None)
            else:
                dict.__setitem__(document, key, node)
        _REPLAYED[str(path)] = (inode_then, offset + len(complete), document)
        return document

    def _save(self, path: Path, changes: list[tuple[str, Node | None]], *, exclusive: bool = False) -> None:
        """Append `changes` to the journal (or, `exclusive`, create it holding them)."""
        if not exclusive and not path.exists():
            raise WorkspaceUnavailableError(f'the environment {self._ref!r} was destroyed')
        lines = ''.join(json.dumps([key, node]) + '\n' for key, node in changes).encode('utf-8')
        with open(path, 'xb' if exclusive else 'ab') as journal:
            journal.write(lines)

    async def working_dir(self) -> str:
        def operation(document: Document) -> tuple[str, bool]:
            return WORKING_DIR, False

        return await self._call(operation)

    async def read_bytes(self, path: str) -> bytes:
        target = _normalize(path)

        def operation(document: Document) -> tuple[bytes, bool]:
            node = _lookup(document, target)
            if node['type'] == 'dir':
                raise IsADirectoryError(target)
            return base64.b64decode(node['data']), False

        return await self._call(operation)

    async def write_bytes(self, path: str, data: bytes) -> None:
        target = _normalize(path)
        encoded = base64.b64encode(bytes(data)).decode('ascii')

        def operation(document: Document) -> tuple[None, bool]:
            node = document.get(target)
            if target == '/' or (node is not None and node['type'] == 'dir'):
                raise IsADirectoryError(target)
            _make_parents(document, target)
            document[target] = {'type': 'file', 'data': encoded}
            return None, True

        await self._call(operation)

    async def stat(self, path: str) -> FileEntry:
        target = _normalize(path)

        def operation(document: Document) -> tuple[FileEntry, bool]:
            return _entry(target, _lookup(document, target)), False

        return await self._call(operation)

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        target = _normalize(path)

        def operation(document: Document) -> tuple[list[FileEntry], bool]:
            if _lookup(document, target)['type'] != 'dir':
                raise NotADirectoryError(target)
            children = [key for key in document if key != target and posixpath.dirname(key) == target]
            return [_entry(child, document[child]) for child in sorted(children)], False

        return await self._call(operation)

    async def make_dir(self, path: str) -> None:
        target = _normalize(path)

        def operation(document: Document) -> tuple[None, bool]:
            node = document.get(target)
            if node is not None:
                if node['type'] != 'dir':
                    raise FileExistsError(target)
                return None, False
            _make_parents(document, target)
            document[target] = {'type': 'dir'}
            return None, True

        await self._call(operation)

    async def remove(self, path: str) -> None:
        target = _normalize(path)

        def operation(document: Document) -> tuple[None, bool]:
            if target == WORKING_DIR or target == '/' or WORKING_DIR.startswith(target + '/'):
                raise ValueError(f'refusing to remove {target!r}: it is the working directory or an ancestor of it')
            _lookup(document, target)
            below = target + '/'
            for key in [key for key in document if key == target or key.startswith(below)]:
                del document[key]
            return None, True

        await self._call(operation)

    async def exists(self, path: str) -> bool:
        target = _normalize(path)

        def operation(document: Document) -> tuple[bool, bool]:
            return target in document, False

        return await self._call(operation)


def _lookup(document: Document, path: str) -> Node:
    """The node at `path`; `NotADirectoryError` when a component on the way is a file, else `FileNotFoundError`."""
    for ancestor in _ancestors(path):
        node = document.get(ancestor)
        if node is None:
            raise FileNotFoundError(path)
        if node['type'] != 'dir':
            raise NotADirectoryError(path)
    node = document.get(path)
    if node is None:
        raise FileNotFoundError(path)
    return node


def _make_parents(document: Document, path: str) -> None:
    """`mkdir -p` of the parent of `path`; `NotADirectoryError` when a component on the way is a file."""
    for ancestor in _ancestors(path):
        node = document.get(ancestor)
        if node is None:
            document[ancestor] = {'type': 'dir'}
        elif node['type'] != 'dir':
            raise NotADirectoryError(path)


def _entry(path: str, node: Node) -> FileEntry:
    is_dir = node['type'] == 'dir'
    size = None if is_dir else len(base64.b64decode(node['data']))
    return FileEntry(name=posixpath.basename(path) or '/', path=path, is_dir=is_dir, size=size)


async def destroy(backend: JsonStoreBackend) -> None:
    """Destroy the environment behind `backend`: its document is deleted, and it is never recreated."""
    path = backend.document_path()

    def delete() -> None:
        with _document_lock(path):
            path.unlink()

    await anyio.to_thread.run_sync(delete)
