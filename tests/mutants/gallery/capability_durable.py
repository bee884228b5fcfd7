"""Mutants of the rules on durable workers and on what a run records: the run context, credentials, spans."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import LocalWorkspace
from pydantic_ai.workspaces import LocalWorkspaceBackend, ReadOnlyWorkspace, Workspace, WorkspaceBackend, WorkspaceRef

from workspace_conformance.targets.capability import CapabilitySetup

from ..registry import capability_mutant
from .capability import _Claimed, _local, _project


@dataclass
class ReviewsReadOnly(LocalWorkspace[Any]):
    """Reads the run's prompt to make review requests read-only: the prompt does not cross to a durable worker."""

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        backend = LocalWorkspaceBackend(self.working_dir)
        if ref is not None and ref != backend.ref:
            return None
        return ReadOnlyWorkspace(Workspace(backend)) if 'review' in str(ctx.prompt) else backend


capability_mutant(
    name='get_workspace_reads_the_prompt',
    kills=['get_workspace_answers_the_same_on_a_durable_worker', 'a_temporal_run_reattaches_after_an_activity_retry'],
    bug='get_workspace reads ctx.prompt to pick its policy, a field a durable worker does not get, so it raises there.',
    build=_local(ReviewsReadOnly),
)


@dataclass
class TokenInRef(LocalWorkspace[Any]):
    """A sandbox capability that puts the API token it was configured with into the ref id, to reconnect with it."""

    api_token: str = ''

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        own = WorkspaceRef(provider='sandbox', id=f'{self.working_dir}?api_key={self.api_token}')
        if ref is not None and ref != own:
            return None
        return _Claimed(LocalWorkspaceBackend(self.working_dir), own)


def _with_token(run_dir: Path) -> CapabilitySetup:
    token = f'sk-live-{uuid.uuid4().hex}'
    return CapabilitySetup(capability=TokenInRef(_project(run_dir), api_token=token), secrets=(token,))


capability_mutant(
    name='ref_id_embeds_the_api_token',
    kills=['the_ref_and_what_records_it_carry_no_secret'],
    bug='The ref id carries the API token the capability was configured with, so history and spans store it.',
    build=_with_token,
)


class SessionBackend(LocalWorkspaceBackend):
    """A sandbox whose ref is its open session's: none before its first operation, none once the session closed."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.session: bool | None = None

    @property
    def ref(self) -> WorkspaceRef | None:  # type: ignore[override]  # the bug: the ref goes with the session
        return super().ref if self.session else None

    async def working_dir(self) -> str:
        if self.session is None:
            self.session = True
        return await super().working_dir()


@dataclass
class ClosesAfterTheRun(LocalWorkspace[Any]):
    """Closes the sandbox's session when the run ends, before the run's span and result read the ref."""

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        backend = SessionBackend(str(self.working_dir))
        return None if ref is not None and ref != LocalWorkspaceBackend(self.working_dir).ref else backend

    async def after_run(self, ctx: RunContext[Any], *, result: Any) -> Any:
        backend = ctx.workspace.backend
        if isinstance(backend, SessionBackend):
            backend.session = False
        return result


capability_mutant(
    name='ref_gone_when_the_run_ends',
    kills=['the_run_span_records_the_workspace_ref', 'the_recorded_ref_is_the_result_workspace_ref'],
    bug="The sandbox's ref belongs to its session, which the capability closes at run end, so the run span has none.",
    build=_local(ClosesAfterTheRun),
)
