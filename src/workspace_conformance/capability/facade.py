"""Rules on the `Workspace` facade as the capability supplies it: its own layers keep the facade's promises.

pydantic-ai's `Workspace` resolves paths, encodes text, checks `run()` arguments and reports `attached` and
`backend`; a capability's own `Workspace` subclass or `WrapperWorkspace` layer can override any of it. These rules
check the workspace `get_workspace(ref=None)` supplies, the one a run's tools get, and a user's policy wrapper.
"""

from __future__ import annotations

import contextlib
import inspect
import posixpath
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import UserError
from pydantic_ai.workspaces import SupportsCommands, Workspace, WorkspaceBackend, WrapperWorkspace

from ..authoring import described, expect_error, first_use, own_environment, ref_text, rule, scratch, select, skip
from ._shared import stacked
from ._support import MARK_PREFIX, Policy

__all__ = ('FacadeRules',)

_OPERATIONS = (
    *('working_dir', 'read_bytes', 'write_bytes', 'stat', 'list_dir', 'make_dir', 'remove', 'exists', 'realpath'),
    *('run', 'read_text', 'write_text'),
)
_TEXT = 'naïve ✓ 文字\n'


def _layers(workspace: Workspace) -> list[object]:
    """Every layer of `workspace`, outermost first, ending with the backend beneath them all."""
    layers: list[object] = [workspace]
    while isinstance(layers[-1], Workspace):
        layers.append(layers[-1]._backend)  # the layers themselves are what these rules check
    return layers


class _Recorded:
    """A method that notes `key` in `calls` each time it is called, then calls the original."""

    def __init__(self, original: Callable[..., Awaitable[Any]], key: tuple[int, str], calls: list[tuple[int, str]]):
        self.original, self.key, self.calls = original, key, calls

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(self.key)
        return await self.original(*args, **kwargs)


@contextlib.contextmanager
def _recording(workspace: Workspace, names: tuple[str, ...] = _OPERATIONS) -> Iterator[list[tuple[int, str]]]:
    """Record the calls the block makes to `names` on each layer of `workspace`, as `(depth, name)`, outermost 0."""
    calls: list[tuple[int, str]] = []
    patched: list[tuple[object, str]] = []
    for depth, layer in enumerate(_layers(workspace)):
        own = getattr(layer, '__dict__', None)
        for name in names:
            original = getattr(layer, name, None)
            if own is None or name in own or not callable(original):
                continue  # nothing to record, or an attribute of the object's own that must not be shadowed
            with contextlib.suppress(AttributeError, TypeError):  # a frozen layer is not recorded
                setattr(layer, name, _Recorded(original, (depth, name), calls))
                patched.append((layer, name))
    try:
        if not any(layer is workspace for layer, _ in patched):
            skip('not-applicable', f'the calls {described(workspace)} makes cannot be observed: it takes no attributes')
        yield calls
    finally:
        for layer, name in patched:
            delattr(layer, name)


async def _outcome(call: Awaitable[object]) -> tuple[str, object]:
    """`('returned', value)`, or `('raised', 'ErrorType')` when the call raised."""
    try:
        return 'returned', await call
    except Exception as error:
        return 'raised', type(error).__name__


async def _a_file(workspace: Workspace) -> str | None:
    """A regular file directly in the working dir, or None."""
    entries = await workspace.list_dir(await workspace.working_dir())
    return next((entry.path for entry in entries if not entry.is_dir), None)


def _resolve_cases(root: str) -> list[tuple[str, str | None, str]]:
    """`(path, base, what resolve must give)`: relative onto the working dir or `base`, `..` and `//` as text."""
    return [
        ('a/./b/../c', None, posixpath.join(root, 'a/c')),
        ('../up', None, posixpath.normpath(posixpath.join(root, '..', 'up'))),
        ('/x/../y//z/', None, '/y/z'),
        ('a/../../b', '/base/dir', '/base/b'),
        ('/elsewhere', '/base', '/elsewhere'),
    ]


async def _check_decoding(workspace: Workspace, path: str, encoding: str) -> None:
    """`read_text(path)` calls the workspace's own `read_bytes` and decodes it, or raises UnicodeDecodeError."""
    with _recording(workspace, ('read_bytes',)) as calls:
        seen = await _outcome(workspace.read_text(path, encoding=encoding))
    assert (0, 'read_bytes') in calls, f"read_text({path!r}) did not go through the workspace's own read_bytes"
    data = await workspace.read_bytes(path)
    try:
        expected: tuple[str, object] = ('returned', data.decode(encoding))
    except UnicodeDecodeError:
        expected = ('raised', 'UnicodeDecodeError')
    assert seen == expected, f'read_text({path!r}, encoding={encoding!r}) of {data[:40]!r} gave {seen}, not {expected}'


def _takes_cwd(layer: Workspace) -> bool:
    """Whether the layer's `run()` accepts a `cwd` keyword."""
    parameters = inspect.signature(layer.run).parameters.values()
    return any(p.name == 'cwd' or p.kind is p.VAR_KEYWORD for p in parameters)


Probe = Callable[[Workspace, Workspace, str], Awaitable[object]]


def _probes(file: str | None) -> list[tuple[str, tuple[str, ...], Probe]]:
    """`(op, the methods it is made of, probe(workspace, unwrapped, scratch name))`, each observed unwrapped."""
    paths = ('resolve', 'working_dir')

    async def names(ws: Workspace, inner: Workspace, name: str) -> object:
        return sorted(entry.name for entry in await ws.list_dir(await inner.working_dir()))

    async def wrote(ws: Workspace, inner: Workspace, name: str) -> object:
        await ws.write_bytes(name, b'through')
        return await inner.read_bytes(name)

    async def wrote_text(ws: Workspace, inner: Workspace, name: str) -> object:
        await ws.write_text(name, _TEXT)
        return await inner.read_bytes(name)

    async def made(ws: Workspace, inner: Workspace, name: str) -> object:
        await ws.make_dir(name)
        return (await inner.stat(name)).is_dir

    async def removed(ws: Workspace, inner: Workspace, name: str) -> object:
        with contextlib.suppress(Exception):
            await inner.write_bytes(name, b'x')
        await ws.remove(name)
        return await inner.exists(name)

    async def ran(ws: Workspace, inner: Workspace, name: str) -> object:
        result = await ws.run(['pwd'])
        return result.exit_code, result.stdout

    probes: list[tuple[str, tuple[str, ...], Probe]] = [
        ('working_dir', ('working_dir',), lambda ws, inner, name: ws.working_dir()),
        ('resolve', paths, lambda ws, inner, name: ws.resolve('a/../b')),
        ('exists', ('exists', *paths), lambda ws, inner, name: ws.exists(name)),
        ('stat', ('stat', *paths), lambda ws, inner, name: _is_dir(ws, '.')),
        ('list_dir', ('list_dir', *paths), names),
        ('realpath', ('realpath', 'working_dir'), lambda ws, inner, name: ws.realpath('.')),
        ('write_bytes', ('write_bytes', *paths), wrote),
        ('write_text', ('write_text', 'write_bytes', *paths), wrote_text),
        ('make_dir', ('make_dir', *paths), made),
        ('remove', ('remove', *paths), removed),
        ('run', ('run',), ran),
        *((prop, (prop,), _property(prop)) for prop in ('ref', 'read_only', 'attached', 'backend')),
        ('authority', ('authority', '_authority_layers'), _property('authority')),
    ]
    if file is not None:
        probes.append(('read_bytes', ('read_bytes', *paths), lambda ws, inner, name: ws.read_bytes(file)))
        probes.append(('read_text', ('read_text', 'read_bytes', *paths), lambda ws, inner, name: ws.read_text(file)))
    return probes


async def _is_dir(workspace: Workspace, path: str) -> bool:
    """Whether `stat(path)` reports a directory."""
    return (await workspace.stat(path)).is_dir


def _property(name: str) -> Probe:
    """A probe reading the workspace's property `name`."""

    async def probe(ws: Workspace, inner: Workspace, scratch_name: str) -> object:
        return getattr(ws, name)

    return probe


def _overrides(kind: type, names: tuple[str, ...]) -> bool:
    """Whether the wrapper class replaces any of `names` (their pydantic-ai definitions are what delegates)."""
    return any(getattr(kind, name, None) is not getattr(WrapperWorkspace, name, None) for name in names)


async def _cleaned(workspaces: tuple[Workspace, ...], name: str) -> None:
    """Remove what a probe left at `name`, through whichever workspace may (best effort)."""
    for workspace in workspaces:
        with contextlib.suppress(Exception):
            if await workspace.exists(name):
                await workspace.remove(name)


class FacadeRules:
    """Rules on the `Workspace` the capability supplies: paths, text, `run()` arguments, `attached`, `backend`."""

    @rule(area='facade', must='F01')
    async def test_resolve_joins_and_normalizes_as_text(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """`resolve` joins a relative path onto the working dir or an absolute `base`, normalized as text.

        Its only I/O is `working_dir` when `base` is omitted; a relative `base` raises ValueError.
        """
        workspace = own_environment(capability, deps)
        root = await workspace.working_dir()
        for path, base, expected in _resolve_cases(root):
            with _recording(workspace, _OPERATIONS) as calls:
                resolved = await workspace.resolve(path, base=base)
            called = sorted({name for _, name in calls} - ({'working_dir'} if base is None else set()))
            assert resolved == expected, f'resolve({path!r}, base={base!r}) gave {resolved!r}, not {expected!r}'
            assert not called, f'resolve({path!r}, base={base!r}) called {called}: it must only join text'
        with expect_error(ValueError, "resolve('x', base='relative/base')"):
            await workspace.resolve('x', base='relative/base')

    @rule(area='facade', must='F03')
    async def test_read_text_decodes_what_read_bytes_gives(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """`read_text` decodes what the workspace's own `read_bytes` gives, UnicodeDecodeError on undecodable bytes."""
        workspace = own_environment(capability, deps)
        if workspace.read_only:
            file = await _a_file(workspace)
            if file is None:
                skip('not-applicable', 'the read-only working dir holds no file to read')
            await _check_decoding(workspace, file, 'utf-8')
            return
        async with scratch(workspace) as root:
            for data, encoding in (
                (_TEXT.encode(), 'utf-8'),
                (b'\xff\xfe not utf-8', 'utf-8'),
                (b'caf\xe9', 'latin-1'),
            ):
                path = posixpath.join(root, f'{encoding}-{len(data)}')
                await workspace.write_bytes(path, data)
                await _check_decoding(workspace, path, encoding)

    @rule(area='facade', requires=['writable'], must='F03')
    async def test_write_text_encodes_through_write_bytes(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """`write_text` encodes (UnicodeEncodeError when it cannot) and writes through the workspace's `write_bytes`."""
        workspace = own_environment(capability, deps)
        async with scratch(workspace) as root:
            path = posixpath.join(root, 'text')
            for content, encoding in ((_TEXT, 'utf-8'), ('café', 'latin-1')):
                with _recording(workspace, ('write_bytes',)) as calls:
                    await workspace.write_text(path, content, encoding=encoding)
                assert (0, 'write_bytes') in calls, "write_text did not go through the workspace's own write_bytes"
                data = await workspace.read_bytes(path)
                assert data == content.encode(encoding), (
                    f'write_text({content!r}, encoding={encoding!r}) wrote {data!r}, not {content.encode(encoding)!r}'
                )
            with expect_error(UnicodeEncodeError, "write_text('文字', encoding='ascii')"):
                await workspace.write_text(path, '文字', encoding='ascii')

    @rule(area='facade', requires=['workspace_commands'], contract='2.68', must='F05')
    async def test_run_refuses_a_missing_or_file_cwd(self, capability: AbstractCapability[Any], deps: object) -> None:
        """`run(cwd=)` raises FileNotFoundError for a missing dir, NotADirectoryError for a file, TypeError first.

        TypeError is a command form mismatch (a string without `shell=True`), checked before the directory.
        """
        workspace = own_environment(capability, deps)
        async with scratch(workspace) as root:
            missing, file = posixpath.join(root, 'missing'), posixpath.join(root, 'file')
            await workspace.write_bytes(file, b'x')
            with expect_error(FileNotFoundError, f"run(['true'], cwd={missing!r}) of a missing directory"):
                await workspace.run(['true'], cwd=missing)
            with expect_error(NotADirectoryError, f"run(['true'], cwd={file!r}) of a file"):
                await workspace.run(['true'], cwd=file)
            with expect_error(TypeError, f"run('true', cwd={missing!r}) without shell=True"):
                await workspace.run('true', cwd=missing)
            assert not await workspace.exists(missing), f'run(cwd={missing!r}) created the missing directory'

    @rule(area='facade', contract='2.68', must='F06')
    async def test_run_cwd_reaches_every_layer(
        self, capability: AbstractCapability[Any], deps: object, policy: Policy | None
    ) -> None:
        """Every `Workspace` layer, the capability's or a policy's, takes `cwd` in `run()`; `run(cwd=)` starts there."""
        workspace = own_environment(capability, deps)
        top = policy(workspace) if policy is not None else workspace
        layers = [layer for layer in _layers(top) if isinstance(layer, Workspace)]
        lacking = [type(layer).__qualname__ for layer in layers if not _takes_cwd(layer)]
        assert not lacking, f'layers of {described(workspace)} whose run() takes no cwd: {lacking}'
        if workspace.read_only or not isinstance(workspace.backend, SupportsCommands):
            return  # run is refused before any layer sees cwd: accepting it is all a layer can get wrong
        async with scratch(workspace) as root:
            result = await workspace.run(['pwd'], cwd=root)
        started = posixpath.basename(result.stdout.strip())
        assert result.exit_code == 0 and started == posixpath.basename(root), (
            f'run(["pwd"], cwd={root!r}) exited {result.exit_code} printing {result.stdout.strip()[:200]!r}'
        )

    @rule(area='facade', requires=['writable'], must='F07')
    async def test_run_rejects_an_empty_argv(self, capability: AbstractCapability[Any], deps: object) -> None:
        """`run([])` raises ValueError, through every layer of the supplied workspace."""
        workspace = own_environment(capability, deps)
        with expect_error(ValueError, 'run([])'):
            await workspace.run([])

    @rule(area='facade', requires=['writable', 'files_only'], must='F08')
    async def test_a_files_only_workspace_refuses_run_with_user_error(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """When the backend lacks SupportsCommands, `run()` raises UserError instead of pretending a command ran."""
        workspace = own_environment(capability, deps)
        with expect_error(UserError, f"run(['true']) on {described(workspace)}, which has no commands"):
            await workspace.run(['true'])

    @rule(area='facade', must='F13')
    async def test_the_supplied_workspace_is_attached(self, capability: AbstractCapability[Any], deps: object) -> None:
        """The supplied workspace reports `attached` before and after first use, supplied for its ref, and wrapped."""
        workspace = own_environment(capability, deps)
        assert workspace.attached, f'{described(workspace)} reports attached False before its first operation'
        ref = await first_use(workspace)
        again = select(capability, deps, ref)
        for how, seen in (
            ('after its first operation', workspace),
            ('inside two more wrappers', stacked(workspace)),
            (f'as supplied for {ref_text(ref)}', again),
        ):
            assert seen is None or seen.attached, f'{described(seen)} reports attached False {how}'

    @rule(area='facade', must='F15')
    async def test_backend_is_the_provider_backend_beneath_every_wrapper(
        self, capability: AbstractCapability[Any], deps: object
    ) -> None:
        """`backend` is the provider backend beneath every layer, not a `Workspace`, and reports the workspace's ref."""
        workspace = own_environment(capability, deps)
        beneath = _layers(workspace)[-1]
        for how, seen in (('the supplied workspace', workspace), ('it inside two more wrappers', stacked(workspace))):
            backend = seen.backend
            assert isinstance(backend, WorkspaceBackend) and not isinstance(backend, Workspace), (
                f'{how} gives .backend {type(backend).__qualname__}, a Workspace layer or no backend'
            )
            assert backend is beneath, f'{how} gives .backend {backend!r}, not {beneath!r} beneath its layers'
        ref = await first_use(workspace)
        assert workspace.backend.ref == ref, f'.backend reports ref {workspace.backend.ref!r}, not {ref_text(ref)}'

    @rule(area='facade', requires=['wrapper_layer'], must='W05')
    async def test_wrapper_layers_delegate_what_they_do_not_override(
        self, capability: AbstractCapability[Any], deps: object, policy: Policy | None
    ) -> None:
        """Each `WrapperWorkspace` layer, the capability's or the user's policy, does what the workspace it wraps does.

        That is, for every op the layer's class does not override (nor the ops that op is made of).
        """
        workspace = own_environment(capability, deps)
        await first_use(workspace)
        pairs = [(layer, layer.wrapped) for layer in _layers(workspace) if isinstance(layer, WrapperWorkspace)]
        wrapped = policy(workspace) if policy is not None else None
        if isinstance(wrapped, WrapperWorkspace):
            pairs.insert(0, (wrapped, workspace))  # against what it was given, whatever it wraps
        name = f'{MARK_PREFIX}delegated-{uuid.uuid4().hex[:12]}'
        file = await _a_file(workspace)
        if file is None and not workspace.read_only:
            file = f'{name}-read'
            await workspace.write_text(file, _TEXT)
        differ: list[str] = []
        try:
            for layer, inner in pairs:
                differ.extend(await _undelegated(layer, inner, file, name))
        finally:
            await _cleaned((workspace,), f'{name}-read')
        assert not differ, f'wrapper layers do not delegate ops they do not override: {differ}'


async def _undelegated(layer: Workspace, inner: Workspace, file: str | None, name: str) -> list[str]:
    """The ops `layer` does not override whose outcome differs from `inner`'s, each saying both outcomes."""
    differ: list[str] = []
    try:
        for op, uses, probe in _probes(file):
            if not _overrides(type(layer), uses):
                theirs = await _outcome(probe(layer, inner, name))
                await _cleaned((inner, layer), name)
                ours = await _outcome(probe(inner, inner, name))
                await _cleaned((inner, layer), name)
                if theirs != ours:
                    differ.append(f'{type(layer).__qualname__}.{op}: {_shown(theirs)}, wrapped {_shown(ours)}')
    finally:
        await _cleaned((inner, layer), name)
    return differ


def _shown(outcome: tuple[str, object]) -> str:
    how, value = outcome
    return f'{how} {value!r}'[:160] if how == 'returned' else f'raised {value}'
