"""`WorkspaceToolSuite`: conformance rules for capabilities that give the model tools acting in the run's workspace."""

from __future__ import annotations

import pytest

from ..authoring import Rule, catalog
from ._fixtures import ToolFixtures
from ._workspaces import ToolWorkspace, default_workspaces, files_only_with_symlinks
from .bounds import BoundRules
from .containment import ContainmentRules
from .differential import DifferentialRules
from .policies import PolicyRules
from .refs import RefRules
from .unattached import UnattachedRules

__all__ = ('ToolWorkspace', 'WorkspaceToolSuite', 'default_workspaces', 'files_only_with_symlinks', 'tool_rules')


class WorkspaceToolSuite(
    ContainmentRules, PolicyRules, UnattachedRules, DifferentialRules, RefRules, BoundRules, ToolFixtures
):
    """Subclass in a pytest module and provide a `capability` fixture; each test method checks one rule.

    Optional fixtures: `tool_calls` (tool name -> example arguments), `deps`, and `workspaces` (by default a local
    one, a commands-only one, a files-only one without realpath, and an in-memory one). Every tool is called through
    a real agent run with a `FunctionModel`, so the suite needs no network.
    """

    pytestmark = pytest.mark.anyio


def tool_rules() -> tuple[Rule, ...]:
    """The catalog of every rule of `WorkspaceToolSuite`."""
    return catalog(WorkspaceToolSuite)
