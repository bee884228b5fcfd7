"""`ProviderCapability`: the capability an `InMemoryProvider` hands agents, with switches that break its clauses.

Well-behaved by default: `get_workspace(ref=None)` builds an unconnected backend (one creation on first use), a
ref of this provider that it created (live or destroyed) gets a backend attached to it, and every other ref is
declined. Each switch breaks one clause, for agent and tool authors who want to see their code meet that bug.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.workspaces import ReadOnlyWorkspace, Workspace, WorkspaceBackend, WorkspaceRef

from ._names import PROVIDER

if TYPE_CHECKING:
    from .provider import InMemoryProvider

__all__ = ('ProviderCapability',)


@dataclass
class ProviderCapability(AbstractCapability[Any]):
    """Supplies the provider's environments to agent runs; see the module docstring for the switches."""

    provider: InMemoryProvider
    _: KW_ONLY
    read_only: bool = False
    """Wrap every workspace in `ReadOnlyWorkspace` (a policy, not a bug)."""
    accept_any_ref: bool = False
    """Bug: attach to any id of this provider, also ones it never created (untrusted history steers it)."""
    ignore_provider: bool = False
    """Bug: attach to a ref of another provider when the id matches one of its own."""
    remember_last: bool = False
    """Bug: `get_workspace(ref=None)` reattaches to the environment created last (state kept between calls)."""
    fresh_for_refs: bool = False
    """Bug: ignore the ref and hand out a fresh backend, so a continued run does not continue."""
    id: str | None = 'in_memory_provider'

    def _recognizes(self, ref: WorkspaceRef) -> bool:
        if ref.provider != self._provider_name() and not self.ignore_provider:
            return False
        return self.accept_any_ref or ref.id in self.provider.environments or ref.id in self.provider.destroyed

    def _provider_name(self) -> str:
        return PROVIDER

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        """The provider's backend for `ref` (a fresh one for `None`), or None for a ref it does not own."""
        backend: WorkspaceBackend
        if ref is None or self.fresh_for_refs:
            latest = list(self.provider.environments)[-1:] if self.remember_last else []
            backend = self.provider.attach(self._ref_of(latest[0])) if latest else self.provider.backend()
        elif self._recognizes(ref):
            backend = self.provider.attach(ref)
        else:
            return None
        return ReadOnlyWorkspace(Workspace(backend)) if self.read_only else backend

    def _ref_of(self, environment_id: str) -> WorkspaceRef:
        return WorkspaceRef(provider=self._provider_name(), id=environment_id)
