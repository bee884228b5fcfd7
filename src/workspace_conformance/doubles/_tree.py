"""The in-memory POSIX tree behind `InMemoryBackend`: nodes, path walking, symlinks and permission checks."""

from __future__ import annotations

import errno
import posixpath
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ('MAX_SYMLINKS', 'Directory', 'File', 'Node', 'Symlink', 'Tree', 'parse_path')

MAX_SYMLINKS = 40
"""Links followed in one walk before it fails with ELOOP, as Linux does."""

READ, WRITE, SEARCH = 4, 2, 1


@dataclass
class File:
    data: bytes = b''
    mode: int = 0o644


@dataclass
class Directory:
    children: dict[str, Node] = field(default_factory=dict)
    mode: int = 0o755


@dataclass
class Symlink:
    target: str


Node = File | Directory | Symlink


def _stack(path: str) -> list[str]:
    """The meaningful components of a path (no empty ones, no `.`), last first: `pop()` gives the next one."""
    return [part for part in reversed(path.split('/')) if part and part != '.']


_PARSED: dict[str, tuple[tuple[str, ...], str, bool]] = {}
"""`parse_path` results by path: a path's components depend on its text alone, and most operations reuse a few paths."""
_PARSED_LIMIT = 4096
"""Paths `parse_path` remembers before it starts over."""


def parse_path(path: str) -> tuple[tuple[str, ...], str, bool]:
    """The meaningful components of `path` in order, them joined as `/a/b`, and whether one of them is `..`."""
    parsed = _PARSED.get(path)
    if parsed is None:
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.clear()
        names = tuple(part for part in path.split('/') if part and part != '.')
        parsed = _PARSED[path] = (names, '/' + '/'.join(names), '..' in names)
    return parsed


def _loop(path: str) -> OSError:
    return OSError(errno.ELOOP, 'Too many levels of symbolic links', path)


Step = TypeVar('Step')


class _Steps(Generic[Step]):
    """One walk down a path from the root: the components still to read, the real ones read, and a value for each.

    A walk reads `parts`, a stack (next component last), with `pop()` in its own loop, and calls `climb` for `..`
    and `follow` for a link: no call per component. Built as `_Steps(path, root)`, the type on the variable, since
    `_Steps[T](...)` goes through `typing`'s alias call on every walk.
    """

    __slots__ = ('_hops', '_root', 'nodes', 'parts', 'real')

    def __init__(self, path: str, root: Step) -> None:
        self.parts = _stack(path)
        self.real: list[str] = []
        self.nodes: list[Step] = [root]
        self._root = root
        self._hops = 0

    def climb(self) -> None:
        """Go up one component, for a `..` (never above `/`)."""
        if self.real:
            self.real.pop()
            self.nodes.pop()

    def follow(self, link: Symlink) -> bool:
        """Go on through `link` (from `/` for an absolute target); False, changing nothing, past MAX_SYMLINKS hops."""
        self._hops += 1
        if self._hops > MAX_SYMLINKS:
            return False
        if link.target.startswith('/'):
            self.real, self.nodes = [], [self._root]
        self.parts.extend(_stack(link.target))
        return True

    def rest(self) -> list[str]:
        """The components still to read, in path order."""
        return self.parts[::-1]


class Tree:
    """A filesystem tree; every path argument is absolute; errors are the builtin ones `os` raises."""

    def __init__(self, uid: int = 1000) -> None:
        self.root = Directory()
        self.uid = uid

    # Permissions: one owner (the tree's user); root bypasses every check, as on POSIX.
    def allowed(self, node: File | Directory, want: int) -> bool:
        return self.uid == 0 or (node.mode >> 6) & want == want

    def require(self, node: File | Directory, want: int, path: str) -> None:
        if self.uid != 0 and (node.mode >> 6) & want != want:  # `allowed`, inlined: this runs once per component
            raise PermissionError(errno.EACCES, 'Permission denied', path)

    def walk(self, path: str, *, follow: bool = True) -> tuple[list[str], Node | None, Directory]:
        """Resolve `path`: its real components, its node (`None` when only the last is missing), and its parent.

        A path without `..` is walked in one loop until it meets a link (or a node of another type), and then
        again by `_walk`, which does the same for the components before it: most paths never get there.
        """
        names, _, climbs = parse_path(path)
        if climbs:
            return self._walk(path, follow=follow)
        superuser, last = self.uid == 0, len(names) - 1
        parent = current = self.root
        for index, name in enumerate(names):
            if not superuser and not (current.mode >> 6) & SEARCH:
                raise PermissionError(errno.EACCES, 'Permission denied', path)
            child = current.children.get(name)
            kind = type(child)
            if kind is Directory:
                parent, current = current, child  # type: ignore[assignment]  # `kind` is its exact type
            elif child is None:
                if index < last:
                    raise FileNotFoundError(errno.ENOENT, 'No such file or directory', path)
                return list(names), None, current
            elif kind is File:
                if index < last:
                    raise NotADirectoryError(errno.ENOTDIR, 'Not a directory', path)
                return list(names), child, current
            else:  # a link: `_walk` follows it
                return self._walk(path, follow=follow)
        if not names:
            return [], self.root, self.root
        return list(names), current, parent

    def _walk(self, path: str, *, follow: bool = True) -> tuple[list[str], Node | None, Directory]:
        """`walk` for any path: `..` climbs, links are followed, each as its own step."""
        steps: _Steps[Directory] = _Steps(path, self.root)
        parts, root = steps.parts, self.uid == 0
        while parts:
            name = parts.pop()
            if name == '..':
                steps.climb()
                continue
            current = steps.nodes[-1]
            if not root and not (current.mode >> 6) & SEARCH:
                raise PermissionError(errno.EACCES, 'Permission denied', path)
            child = current.children.get(name)
            more = bool(parts)
            if child is None:
                if more:
                    raise FileNotFoundError(errno.ENOENT, 'No such file or directory', path)
                return [*steps.real, name], None, current
            if isinstance(child, Symlink) and (more or follow):
                if not steps.follow(child):
                    raise _loop(path)
                continue
            if more and not isinstance(child, Directory):
                if isinstance(child, Symlink):  # pragma: no cover - followed above
                    raise _loop(path)
                raise NotADirectoryError(errno.ENOTDIR, 'Not a directory', path)
            steps.real.append(name)
            if isinstance(child, Directory):
                steps.nodes.append(child)
            else:
                return steps.real, child, current
        real, chain = steps.real, steps.nodes
        if not real:
            return [], self.root, self.root
        parent = chain[-2] if len(chain) >= 2 and chain[-1] is not None else self.root
        return real, chain[-1], parent

    def node(self, path: str, *, follow: bool = True) -> Node:
        """The node at `path`, or `FileNotFoundError`."""
        _, node, _ = self.walk(path, follow=follow)
        if node is None:
            raise FileNotFoundError(errno.ENOENT, 'No such file or directory', path)
        return node

    def realpath(self, path: str) -> str:
        """Like `os.path.realpath(path, strict=False)`: missing components kept, a loop left unresolved."""
        return self.resolve(path)[0]

    def resolve(self, path: str) -> tuple[str, bool]:
        """`realpath(path)`, and whether it holds no link: True unless a loop stopped it (then it is kept as written).

        A link-free result resolves to itself, and so does its `dirname`, which callers use not to resolve it twice.
        A path without `..` is looked up in one loop until it meets a link, and then again by `_resolve`.
        """
        names, joined, climbs = parse_path(path)
        if climbs:
            return self._resolve(path)
        node: Node | None = self.root
        for name in names:
            child = node.children.get(name) if type(node) is Directory else None
            if child is not None and type(child) is not Directory and type(child) is not File:
                return self._resolve(path)  # a link
            node = child
        return joined, True

    def _resolve(self, path: str) -> tuple[str, bool]:
        """`resolve` for any path: `..` climbs, links are followed, each as its own step."""
        steps: _Steps[Node | None] = _Steps(path, self.root)
        parts = steps.parts
        while parts:
            name = parts.pop()
            if name == '..':
                steps.climb()
                continue
            current = steps.nodes[-1]
            child = current.children.get(name) if isinstance(current, Directory) else None
            if isinstance(child, Symlink):
                if not steps.follow(child):
                    # A loop: stop resolving, keeping the rest as written (inside the directory holding it).
                    return posixpath.normpath('/' + '/'.join([*steps.real, name, *steps.rest()])), False
                continue
            steps.real.append(name)
            steps.nodes.append(child)
        return '/' + '/'.join(steps.real), True

    def make_dirs(self, path: str, *, resolved: bool = False) -> Directory:
        """`mkdir -p`: every missing directory of `path` is created; a file in the way is an error.

        `resolved=True` says `path` is already link-free (see `resolve`), so it is not resolved again.
        """
        current: Directory = self.root
        real = path if resolved else self.realpath(path)
        names = parse_path(real)[0]  # `real` is normalized: no `.`, `..` or empty component to tell apart
        for index, name in enumerate(names):
            child = current.children.get(name)
            if type(child) is Directory:  # the usual case, and the only one that needs no `walked`
                current = child
                continue
            walked = '/' + '/'.join(names[: index + 1])
            if child is None:
                self.require(current, WRITE | SEARCH, walked)
                child = current.children[name] = Directory()
            elif isinstance(child, Symlink):
                child = self.node(walked)
            if not isinstance(child, Directory):
                raise (FileExistsError if walked == real else NotADirectoryError)(
                    errno.EEXIST if walked == real else errno.ENOTDIR,
                    'File exists' if walked == real else 'Not a directory',
                    path,
                )
            current = child
        return current

    def dump(self) -> str:
        """Every path in the tree, one a line: `d /dir`, `f /file (n bytes)`, `l /link -> target`."""
        lines: list[str] = []

        def visit(directory: Directory, prefix: str) -> None:
            for name in sorted(directory.children):
                child = directory.children[name]
                path = f'{prefix}/{name}'
                if isinstance(child, Directory):
                    lines.append(f'd {path} ({child.mode:o})')
                    visit(child, path)
                elif isinstance(child, File):
                    lines.append(f'f {path} ({len(child.data)} bytes, {child.mode:o})')
                else:
                    lines.append(f'l {path} -> {child.target}')

        visit(self.root, '')
        return '\n'.join(lines)
