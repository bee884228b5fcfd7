"""Mutants of the facade rules: a capability's own `Workspace` layer, or a user's policy, breaking a facade promise.

Each wraps a well-behaved capability (`LocalWorkspace` on the rule's project directory, or an `InMemoryProvider`)
in one broken layer, so only the rules on that promise can fail.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.workspaces import (
    CommandResult,
    Workspace,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceRef,
    WrapperWorkspace,
)

from workspace_conformance.targets.capability import CapabilitySetup

from ..registry import capability_mutant
from .capability import _project, on_provider

Layer = Callable[[Workspace], Workspace]


@dataclass(kw_only=True)
class Layered(AbstractCapability[Any]):
    """`inner`'s workspaces, each inside the capability's own `layer` (the layer is where the bug is)."""

    inner: AbstractCapability[Any]
    layer: Layer
    id: str | None = 'layered'

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        selected = self.inner.get_workspace(ctx, ref=ref)
        if selected is None:
            return None
        return self.layer(selected if isinstance(selected, Workspace) else Workspace(selected))


def _on_local(layer: Layer) -> Callable[[Path], CapabilitySetup]:
    """A mutant's build: `LocalWorkspace` on the rule's project directory, inside `layer`."""
    return lambda run_dir: CapabilitySetup(capability=Layered(inner=LocalWorkspace(_project(run_dir)), layer=layer))


def _on_provider(layer: Layer) -> Callable[[Path], CapabilitySetup]:
    """A mutant's build: a files-only `InMemoryProvider` capability, inside `layer`."""
    return on_provider(lambda provider: Layered(inner=provider.capability(), layer=layer), local=False)


def _with_policy(policy: Layer, **options: Any) -> Callable[[Path], CapabilitySetup]:
    """A mutant's build: a correct `LocalWorkspace` and a broken user policy wrapper."""
    return lambda run_dir: CapabilitySetup(capability=LocalWorkspace(_project(run_dir), **options), policy=policy)


# --- resolve ---


class Confining(WrapperWorkspace):
    """Re-roots every path outside the working dir under it, as a home-made jail."""

    async def resolve(self, path: str, *, base: str | None = None) -> str:
        resolved = await super().resolve(path, base=base)
        root = await self.working_dir()
        return resolved if resolved.startswith(root) else posixpath.join(root, resolved.lstrip('/'))


capability_mutant(
    name='resolve_confines_paths_to_the_working_dir',
    kills=['resolve_joins_and_normalizes_as_text'],
    bug="A vendor layer's resolve re-roots `..` and absolute paths under the working dir instead of normalizing text.",
    build=_on_local(Confining),
)


class FollowsLinks(WrapperWorkspace):
    """Resolves through `realpath`, following symlinks with a round trip to the environment."""

    async def resolve(self, path: str, *, base: str | None = None) -> str:
        return await self.realpath(await super().resolve(path, base=base))


capability_mutant(
    name='resolve_asks_the_environment',
    kills=['resolve_joins_and_normalizes_as_text'],
    bug="A vendor layer's resolve calls realpath, so resolving a path does I/O and follows symlinks.",
    build=_on_local(FollowsLinks),
)

# --- text ---


class LenientText(WrapperWorkspace):
    """Decodes text with replacement characters instead of raising on undecodable bytes."""

    async def read_text(self, path: str, *, encoding: str = 'utf-8') -> str:
        return (await self.read_bytes(path)).decode(encoding, errors='replace')


capability_mutant(
    name='read_text_replaces_undecodable_bytes',
    kills=['read_text_decodes_what_read_bytes_gives'],
    bug="A vendor layer's read_text decodes with errors='replace', so binary files read as text without an error.",
    build=_on_local(LenientText),
)


class TextBypassesBytes(WrapperWorkspace):
    """Forwards `write_text` to the layer below, so its own (or a subclass's) `write_bytes` never sees it."""

    async def write_text(self, path: str, content: str, *, encoding: str = 'utf-8') -> None:
        await self.wrapped.write_text(path, content, encoding=encoding)


capability_mutant(
    name='write_text_skips_the_layers_write_bytes',
    kills=['write_text_encodes_through_write_bytes'],
    bug='A vendor layer forwards write_text to the wrapped workspace, so a write_bytes override on it is bypassed.',
    build=_on_local(TextBypassesBytes),
)

# --- run ---


class CreatesCwd(WrapperWorkspace):
    """Makes a missing `cwd` before running there, instead of letting the facade raise."""

    async def run(self, command: WorkspaceCommand, *, cwd: str | None = None, **options: Any) -> CommandResult:
        if cwd is not None:
            await self.make_dir(cwd)
        return await super().run(command, cwd=cwd, **options)


capability_mutant(
    name='run_creates_a_missing_cwd',
    kills=['run_refuses_a_missing_or_file_cwd'],
    bug="A vendor layer's run creates a missing cwd, so a mistyped directory runs the command in a new empty one.",
    build=_on_local(CreatesCwd),
)


class NoCwd(WrapperWorkspace):
    """A layer written before `cwd` existed: its `run()` takes no `cwd`."""

    async def run(  # type: ignore[override]  # the bug: no cwd parameter
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        return await self.wrapped.run(command, shell=shell, env=env, timeout=timeout)


capability_mutant(
    name='layer_run_takes_no_cwd',
    kills=['run_cwd_reaches_every_layer'],
    bug="A vendor layer's run() has no cwd parameter, so run(cwd=...) through it raises TypeError.",
    build=_on_local(NoCwd),
)


class DropsCwd(WrapperWorkspace):
    """Accepts `cwd` and forgets it: commands run in the working dir."""

    async def run(self, command: WorkspaceCommand, *, cwd: str | None = None, **options: Any) -> CommandResult:
        return await self.wrapped.run(command, **options)


capability_mutant(
    name='layer_run_drops_cwd',
    kills=['run_cwd_reaches_every_layer'],
    bug="A vendor layer's run() accepts cwd but does not pass it on, so commands start in the working dir.",
    build=_on_local(DropsCwd),
)


class EmptyIsANoOp(WrapperWorkspace):
    """Treats an empty argv as a command that did nothing."""

    async def run(self, command: WorkspaceCommand, **options: Any) -> CommandResult:
        if not isinstance(command, str) and not command:
            return CommandResult(exit_code=0, stdout='', stderr='')
        return await super().run(command, **options)


capability_mutant(
    name='empty_argv_succeeds',
    kills=['run_rejects_an_empty_argv'],
    bug='A vendor layer answers run([]) with exit code 0, so a tool building an empty argv never learns it.',
    build=_on_local(EmptyIsANoOp),
)


class PretendsToRun(WrapperWorkspace):
    """On a files-only backend, answers every command with exit 127 instead of the facade's UserError."""

    async def run(self, command: WorkspaceCommand, **options: Any) -> CommandResult:
        return CommandResult(exit_code=127, stdout='', stderr='sh: command not found')


capability_mutant(
    name='files_only_run_pretends_to_run',
    kills=['a_files_only_workspace_refuses_run_with_user_error'],
    bug='A files-only vendor layer answers run() with exit 127, so tools see a missing program, not a missing shell.',
    build=_on_provider(PretendsToRun),
)

# --- attached, backend ---


class AttachedOnceCreated(WrapperWorkspace):
    """Reports `attached` only once the environment exists (its ref is known)."""

    @property
    def attached(self) -> bool:
        return self.ref is not None


capability_mutant(
    name='attached_only_after_creation',
    kills=['the_supplied_workspace_is_attached'],
    bug='A vendor layer reports attached False until the lazy environment exists, so tools think the run has none.',
    build=_on_provider(AttachedOnceCreated),
)


class BackendIsTheLayerBelow(WrapperWorkspace):
    """Reports the workspace it wraps as its `backend`, not the provider backend."""

    @property
    def backend(self) -> WorkspaceBackend:
        return self.wrapped


capability_mutant(
    name='backend_is_a_workspace_layer',
    kills=['backend_is_the_provider_backend_beneath_every_wrapper'],
    bug="A vendor layer's backend property returns the workspace it wraps, so provider-specific calls miss the SDK.",
    build=_on_local(BackendIsTheLayerBelow),
)

# --- a policy's delegation ---


class Rewraps(WrapperWorkspace):
    """Builds on `wrapped.backend` instead of `wrapped`, dropping the layers (read-only) the policy was given."""

    def __init__(self, wrapped: Workspace) -> None:
        super().__init__(Workspace(wrapped.backend))


capability_mutant(
    name='policy_wraps_the_backend_not_the_workspace',
    kills=['wrapper_layers_delegate_what_they_do_not_override'],
    bug="A user's policy wraps workspace.backend instead of the workspace, so the read-only layer beneath it is lost.",
    build=_with_policy(Rewraps, read_only=True),
)


class StubbedListing(WrapperWorkspace):
    """Hooks attribute lookup and answers `list_dir` from a stub, a method the class does not override."""

    def __getattribute__(self, name: str) -> Any:
        if name == 'list_dir':
            return _empty_listing
        return super().__getattribute__(name)


async def _empty_listing(path: str) -> tuple[()]:
    return ()


capability_mutant(
    name='policy_stubs_a_method_it_does_not_override',
    kills=['wrapper_layers_delegate_what_they_do_not_override'],
    bug="A user's policy answers list_dir from a stub in __getattribute__, so listings never reach the workspace.",
    build=_with_policy(StubbedListing),
)
capability_mutant(
    name='layer_stubs_a_method_it_does_not_override',
    kills=['wrapper_layers_delegate_what_they_do_not_override'],
    bug='A vendor layer answers list_dir from a stub in __getattribute__, so listings never reach the environment.',
    build=_on_local(StubbedListing),
)
