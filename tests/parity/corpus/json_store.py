"""A files-only workspace backend: each environment is one JSON document on disk.

The document maps absolute paths to `{"type": "dir"}` or `{"type": "file", "data": <base64>}`. It implements
`WorkspaceBackend` and `SupportsFilesystem` only: no commands, no `realpath`, and its storage holds no symlinks.
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
Document = dict[str, Node]
Result = TypeVar('Result')

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
            result, changed = operation(document)
            if changed:
                self._save(path, document)
            return result

    def _ensure(self) -> Path:
        """The document of this environment, created (once) when the backend was built without a ref."""
        with self._create_lock:
            if self._ref is None:
                self._store.mkdir(parents=True, exist_ok=True)
                ref = WorkspaceRef(provider=PROVIDER, id=uuid.uuid4().hex)
                path = self._store / f'{ref.id}.json'
                with _document_lock(path):
                    self._save(path, {'/': {'type': 'dir'}, WORKING_DIR: {'type': 'dir'}}, exclusive=True)
                self._ref = ref  # recorded as soon as the create returned
            return self.document_path()

    def _load(self, path: Path) -> Document:
        try:
            text = path.read_text(encoding='utf-8')
        except FileNotFoundError:
            raise WorkspaceUnavailableError(f'the environment {self._ref!r} does not exist (destroyed?)') from None
        document: Document = json.loads(text)
        return document

    def _save(self, path: Path, document: Document, *, exclusive: bool = False) -> None:
        if not exclusive and not path.exists():
            raise WorkspaceUnavailableError(f'the environment {self._ref!r} was destroyed')
        temporary = path.with_name(f'.{path.name}.{uuid.uuid4().hex}.tmp')
        temporary.write_text(json.dumps(document), encoding='utf-8')
        if exclusive and path.exists():
            temporary.unlink()
            raise FileExistsError(path)
        os.replace(temporary, path)

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
