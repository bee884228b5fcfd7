"""The fixtures of every `WorkspaceToolSuite`: the capability under test, its deps, workspaces, calls and sweeps."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import pytest
from pydantic_ai.capabilities import AbstractCapability

from ..authoring import SuiteFixtures, machinery_hidden
from ._sweeps import ToolCalls, ToolRuns, ToolSweeps
from ._workspaces import ToolWorkspace, default_workspaces

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = ('ToolFixtures',)


class ToolFixtures(SuiteFixtures):
    """The fixtures of every `WorkspaceToolSuite`; override them in a subclass."""

    @pytest.fixture
    def anyio_backend(self) -> str:
        """`asyncio`: pydantic-ai's agent runs need it, so the tool suite runs on it only."""
        return 'asyncio'

    @pytest.fixture
    def capability(self) -> AbstractCapability[Any]:
        """The capability under test: one that gives the model tools acting in `ctx.workspace`."""
        raise NotImplementedError(
            'WorkspaceToolSuite needs a `capability` fixture: define `@pytest.fixture def capability(self): '
            'return MyTools()` in your subclass.'
        )

    @pytest.fixture
    def deps(self) -> object:
        """The deps of the agent runs the rules make."""
        return None

    @pytest.fixture
    def tool_calls(self) -> ToolCalls:
        """Example arguments per tool name (one mapping or several); tools not named get arguments from their schema."""
        return {}

    @pytest.fixture
    def workspaces(self) -> Sequence[ToolWorkspace]:
        """The workspaces every tool is run in: by default local, commands-only, files-only and in-memory."""
        return default_workspaces()

    @pytest.fixture
    def claims(self) -> Collection[str]:
        """What the capability claims beyond the contract (`bounded`, `contained`): the rules of a claim made bind.

        By default nothing: the contract asks no bound of a tool's result, and makes the working directory a
        starting point, not a boundary, so those rules report what they saw as advisories.
        """
        return frozenset()

    @pytest.fixture(scope='class')
    @classmethod
    def tool_runs(cls, tmp_path_factory: pytest.TempPathFactory) -> ToolRuns:
        """The class's cache of recorded tool runs."""
        return ToolRuns(tmp_path_factory.mktemp('tool-runs'))

    @pytest.fixture
    def sweeps(
        self,
        capability: AbstractCapability[Any],
        deps: object,
        workspaces: Sequence[ToolWorkspace],
        tool_calls: ToolCalls,
        tool_runs: ToolRuns,
    ) -> ToolSweeps:
        """What a tool rule stands on: the capability and its fixtures, sweeping through the class's cache."""
        return ToolSweeps(capability, deps, workspaces, tool_calls, tool_runs)
