"""Rules on a backend's environment: the runner's secrets stay out, the ref stores, destruction is noticed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse, TextPart
from pydantic_ai.workspaces import (
    SupportsCommands,
    SupportsFilesystem,
    SupportsRealpath,
    Workspace,
    WorkspaceBackend,
    WorkspaceRef,
    WorkspaceUnavailableError,
)
from typing_extensions import get_protocol_members

from ..authoring import (
    CANARY,
    environment_of,
    expect_error,
    leaked,
    paths,
    rule,
    runners_canary,
    supplied,
    unwrap,
    workspace_of,
)

__all__ = ('CANARY', 'SHELL_UTILITIES', 'EnvironmentRules', 'environment_of', 'leaked', 'runners_canary')


SHELL_UTILITIES = ('base64', 'cp', 'dd', 'find', 'mkdir', 'mv', 'rm', 'wc')
"""What pydantic-ai's shell-derived filesystem runs besides `sh` builtins (its docs), `readlink` aside for realpath."""
_MISSING_UTILITIES = 'for tool in "$@"; do command -v "$tool" >/dev/null 2>&1 || printf "%s\\n" "$tool"; done'

Factory = Callable[[], WorkspaceBackend] | None
Destroy = Callable[[WorkspaceBackend], Awaitable[None]] | None


def shell_utilities_needed(workspace: Workspace) -> tuple[str, ...]:
    """The utilities the facade's shell fallbacks run for this backend: none when it has native files and realpath."""
    beneath = workspace.backend
    needed = () if isinstance(beneath, SupportsFilesystem) else SHELL_UTILITIES
    return needed if isinstance(beneath, SupportsRealpath) else (*needed, 'readlink')


class EnvironmentRules:
    """Rules on the environment a backend holds: what reaches its commands, its ref, and its destruction."""

    # It changes this process's os.environ, which commands other rules start at the same time would inherit.
    @rule(area='commands', requires=['commands'], since='0.3.0', alone=True, must='S02')
    async def test_commands_do_not_see_the_runners_environment(self, backend: WorkspaceBackend) -> None:
        """A secret-looking variable set in the runner's own environment is not visible to commands."""
        workspace = workspace_of(backend)
        with runners_canary() as secret:
            seen = await environment_of(workspace)
        found = leaked(seen, secret)
        assert not found, (
            f"the runner's variable {CANARY} reached commands (as {found}): the backend forwards os.environ"
        )

    @rule(area='files', requires=['commands', 'shell_files'], since='0.3.0', must='F12')
    async def test_the_shell_filesystem_finds_its_utilities(self, backend: WorkspaceBackend) -> None:
        """Where file methods or realpath go through the shell, every utility the shell filesystem runs is there."""
        workspace = workspace_of(backend)
        needed = shell_utilities_needed(workspace)
        result = await workspace.run(['sh', '-c', _MISSING_UTILITIES, 'sh', *needed])
        assert result.exit_code == 0, f'`sh -c "command -v ..."` exited {result.exit_code}: {result.stderr[:200]}'
        missing = result.stdout.split()
        assert not missing, (
            f"the environment has no {', '.join(missing)}, which pydantic-ai's shell filesystem runs for this "
            f'backend (it has no native {"realpath" if missing == ["readlink"] else "file methods"}): '
            'those file operations fail with WorkspaceError'
        )

    @rule(area='lifecycle', since='0.3.0', must='F10')
    async def test_native_file_methods_are_all_or_none(self, backend: WorkspaceBackend) -> None:
        """A backend has every `SupportsFilesystem` method or none: the facade uses a partial set nowhere."""
        raw = unwrap(backend)
        beneath = raw.backend if isinstance(raw, Workspace) else raw
        members = sorted(get_protocol_members(SupportsFilesystem))
        present = [name for name in members if callable(getattr(beneath, name, None))]
        missing = [name for name in members if name not in present]
        fallback = (
            'Workspace ignores them and runs every file operation through the shell'
            if isinstance(beneath, SupportsCommands)
            else 'Workspace refuses every file operation with UserError'
        )
        assert not present or not missing, (
            f'{type(beneath).__qualname__} has the file methods {present} but not {missing}: {fallback}'
        )

    @rule(area='lifecycle', requires=['filesystem'], since='0.3.0', must='B45')
    async def test_the_ref_survives_message_storage(self, backend: WorkspaceBackend) -> None:
        """The ref is a `WorkspaceRef` of two non-empty strings that a stored message history gives back equal."""
        await workspace_of(backend).working_dir()
        ref = backend.ref
        assert isinstance(ref, WorkspaceRef), f'the backend had the ref {ref!r} after its first operation'
        kinds = {'provider': ref.provider, 'id': ref.id}
        bad = {name: value for name, value in kinds.items() if not isinstance(value, str) or not value}
        assert not bad, f'the ref {ref!r} has fields that are not non-empty strings: {bad}'
        stored = ModelMessagesTypeAdapter.dump_json([ModelResponse(parts=[TextPart('x')], workspace_ref=ref)])
        (loaded,) = ModelMessagesTypeAdapter.validate_json(stored)
        again = loaded.workspace_ref if isinstance(loaded, ModelResponse) else None
        assert again == ref, f'the ref {ref!r} came back from a stored message history as {again!r}'

    @rule(area='lifecycle', level='extended', requires=['destroy', 'filesystem'], since='0.3.0', must='B18')
    async def test_every_operation_on_a_destroyed_environment_raises_unavailable(
        self, destructive_backend: Factory, destroy_environment: Destroy
    ) -> None:
        """Once the environment is destroyed, every file operation on it raises `WorkspaceUnavailableError`.

        A write or `make_dir` does not bring the destroyed working directory back either: it still lists as gone.
        """
        destructive_backend = supplied(destructive_backend, 'destroy')
        destroy_environment = supplied(destroy_environment, 'destroy')
        backend = destructive_backend()
        workspace = Workspace(backend)
        root = await workspace.working_dir()
        path = paths.join(root, 'written-before-destroy')
        await workspace.write_bytes(path, b'gone')
        await destroy_environment(backend)
        operations: dict[str, Callable[[], Awaitable[object]]] = {
            'read_bytes': lambda: workspace.read_bytes(path),
            'write_bytes': lambda: workspace.write_bytes(paths.join(root, 'written-after-destroy'), b'x'),
            'list_dir': lambda: workspace.list_dir(root),
            'stat': lambda: workspace.stat(path),
            'exists': lambda: workspace.exists(path),
            'make_dir': lambda: workspace.make_dir(paths.join(root, 'made-after-destroy')),
            'remove': lambda: workspace.remove(path),
        }
        for name, operation in operations.items():
            with expect_error(WorkspaceUnavailableError, f'{name}() of {path!r} after its environment was destroyed'):
                await operation()
            if name in ('write_bytes', 'make_dir'):
                await _still_gone(workspace, root, after=name)


async def _still_gone(workspace: Workspace, root: str, *, after: str) -> None:
    """Fail if the destroyed working directory `root` lists again once `after` was refused: it recreated it."""
    try:
        entries = await workspace.list_dir(root)
    except Exception:
        return  # gone (whether the error is the right one is the loop's business)
    names = sorted(entry.name for entry in entries)
    raise AssertionError(
        f'after {after}() was refused, the destroyed working directory {root} listed {names!r}: {after}() recreated it'
    )
