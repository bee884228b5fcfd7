"""Capability mutants of the precedence rules: which workspace a run gets, untouched turns, failed runs.

Each works only in the scratch directory it is given (the project directory, or the provider's environments there).
"""

from __future__ import annotations

import functools
import os
import tempfile
import uuid
from dataclasses import dataclass, replace
from typing import Any

import anyio
from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, LocalWorkspace
from pydantic_ai.messages import ModelResponse
from pydantic_ai.workspaces import LocalWorkspaceBackend, Workspace, WorkspaceBackend, WorkspaceRef, WrapperWorkspace

from workspace_conformance.doubles import InMemoryProvider, ProviderBackend, ProviderCapability
from workspace_conformance.doubles.provider import PROVIDER

from ..registry import capability_mutant
from .capability import ReadOnlyPolicy, _local, on_provider


@dataclass
class RecoversOlderRefs(ProviderCapability):
    """Given no ref, reattaches to the newest ref any response of the history recorded ("keeps the conversation's")."""

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        older = [m.workspace_ref for m in ctx.messages if isinstance(m, ModelResponse) and m.workspace_ref]
        return super().get_workspace(ctx, ref=ref if ref is not None or not older else older[-1])


capability_mutant(
    name='recovers_an_older_history_ref',
    kills=['a_latest_response_without_a_ref_starts_fresh'],
    bug='Given no ref, get_workspace digs the newest ref out of older responses, so a latest None does not start anew.',
    build=on_provider(RecoversOlderRefs),
)


@dataclass
class EnsuresItsSandbox(LocalWorkspace[Any]):
    """Makes sure the run is in its own directory: on the run context in `for_run`, and when the run's is prepared.

    Before pydantic-ai 2.78 the run kept what `for_run` put on its context; from 2.78 a tool's context is built
    afresh from the selected workspace, which every capability prepares (`_prepare_workspace`, as the durable ones
    route calls through their units), so that is where the same bug lives there.
    """

    async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
        ctx.workspace = Workspace(LocalWorkspaceBackend(self.working_dir))
        return self

    def _prepare_workspace(self, ctx: RunContext[Any], workspace: Workspace, *, explicit: bool) -> Workspace:
        return Workspace(LocalWorkspaceBackend(self.working_dir))


capability_mutant(
    name='for_run_puts_its_own_workspace_on_the_run',
    kills=[
        'a_live_workspace_given_to_the_run_is_used_as_is',
        'agent_override_beats_every_other_choice',
        'a_callers_unavailable_workspace_is_final',
    ],
    bug='The capability puts its own directory on the run, replacing a workspace the caller or an override chose.',
    build=_local(EnsuresItsSandbox),
)


@dataclass
class CachesInAWorkerThread(LocalWorkspace[Any]):
    """Prepares a cache directory under its project at every run start, off the event loop (a worker thread)."""

    async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
        cache = os.path.join(self.working_dir, f'.cache-{uuid.uuid4().hex[:8]}')
        await anyio.to_thread.run_sync(functools.partial(os.makedirs, cache, exist_ok=True))
        return await super().for_run(ctx)


capability_mutant(
    name='run_start_writes_the_host_in_a_worker_thread',
    kills=['a_callers_unavailable_workspace_is_final'],
    bug='for_run makes a cache directory on the host in a worker thread, even for a run the caller gave no workspace.',
    build=_local(CachesInAWorkerThread),
)


class ReservedRef(ProviderBackend):
    """Reports a made-up id as its ref until its first operation creates the environment."""

    def __init__(self, provider: InMemoryProvider, ref: WorkspaceRef | None) -> None:
        super().__init__(provider, ref)
        self._reserved = WorkspaceRef(provider=PROVIDER, id=uuid.uuid4().hex)

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._ref if self._ref is not None else self._reserved


class HiddenUntilUsed(ProviderBackend):
    """Attached by ref, reports ref None until its first operation connects."""

    @property
    def ref(self) -> WorkspaceRef | None:
        return self._ref if self._connected or not self._attached else None


def _with_backend(kind: type[ProviderBackend]) -> type[ProviderCapability]:
    @dataclass
    class Supplies(ProviderCapability):
        def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
            chosen = super().get_workspace(ctx, ref=ref)
            return None if chosen is None else kind(self.provider, chosen.ref)

    return Supplies


capability_mutant(
    name='reports_a_ref_before_the_environment_exists',
    kills=['an_untouched_run_records_no_new_ref'],
    bug='A lazy backend reports a reserved id as its ref before creating anything, so an untouched run records it.',
    build=on_provider(_with_backend(ReservedRef)),
)
capability_mutant(
    name='attached_ref_hidden_until_first_use',
    kills=['an_untouched_run_records_no_new_ref'],
    bug='A backend attached by ref reports ref None until its first operation, so an untouched turn drops the ref.',
    build=on_provider(_with_backend(HiddenUntilUsed)),
)


class ForgetsOnError(ProviderBackend):
    """Drops its ref after a failed read, so its next operation creates a new environment."""

    async def read_bytes(self, path: str) -> bytes:
        try:
            return await super().read_bytes(path)
        except OSError:
            self._ref, self._attached, self._connected = None, False, False
            raise


capability_mutant(
    name='forgets_its_ref_after_an_error',
    kills=['a_failed_run_keeps_its_environment'],
    bug='After a failed operation the backend drops its ref and starts over, so on_run_error sees another ref.',
    build=on_provider(_with_backend(ForgetsOnError)),
)


class MissingIsEmpty(WrapperWorkspace):
    """Reads a missing file as empty instead of raising."""

    async def read_bytes(self, path: str) -> bytes:
        try:
            return await super().read_bytes(path)
        except FileNotFoundError:
            return b''


capability_mutant(
    name='missing_files_read_as_empty',
    kills=['a_failed_run_keeps_its_environment'],
    bug="The capability's wrapper reads a missing file as b'', so a path error never ends the run.",
    build=_local(ReadOnlyPolicy, layer=MissingIsEmpty),
)


@dataclass
class PerRunDirectory(LocalWorkspace[Any]):
    """Returns a copy over a new directory of its own from `for_run`."""

    async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
        return replace(self, working_dir=tempfile.mkdtemp(prefix='run-', dir=self.working_dir))


capability_mutant(
    name='for_run_moves_to_a_new_directory',
    kills=['for_run_keeps_the_selected_workspace'],
    bug='for_run returns a copy over a new per-run directory, not the workspace the run selected before it.',
    build=_local(PerRunDirectory),
)
capability_mutant(
    name='defers_loading_a_workspace_capability',
    kills=['a_workspace_capability_is_not_deferred'],
    bug='The capability sets defer_loading=True, so no agent can be built with it.',
    build=_local(LocalWorkspace, defer_loading=True, id='deferred_workspace'),
)
