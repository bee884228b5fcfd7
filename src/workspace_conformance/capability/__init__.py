"""`WorkspaceCapabilitySuite`: conformance rules for the capabilities that supply workspaces to agent runs."""

from __future__ import annotations

import pytest

from ..authoring import Rule, catalog
from ._support import CapabilityFixtures, Policy
from .durable import DurableRules
from .facade import FacadeRules
from .hygiene import HygieneRules
from .local import LocalRules
from .policies import PolicyRules
from .precedence import PrecedenceRules
from .rebuild import RebuildRules, Rebuilt
from .records import RecordRules
from .runs import RunRules
from .selection import SelectionRules
from .untrusted import UntrustedRefRules

__all__ = ('Policy', 'Rebuilt', 'WorkspaceCapabilitySuite', 'capability_rules')


class WorkspaceCapabilitySuite(
    SelectionRules,
    UntrustedRefRules,
    RunRules,
    PrecedenceRules,
    FacadeRules,
    RecordRules,
    PolicyRules,
    RebuildRules,
    DurableRules,
    HygieneRules,
    LocalRules,
    CapabilityFixtures,
):
    """Subclass in a pytest module and provide a `capability` fixture; each test method checks one rule.

    Optional fixtures: `deps` (the runs' deps), `destroy_environment` (`async (ref) -> None`), `foreign_refs`
    (more refs to decline), `policy` (wraps a `Workspace` in your policy wrapper) and `secrets` (credentials no
    ref or record may hold). Agent runs use a `FunctionModel`, so the suite needs no network.
    """

    pytestmark = pytest.mark.anyio


def capability_rules() -> tuple[Rule, ...]:
    """The catalog of every rule of `WorkspaceCapabilitySuite`."""
    return catalog(WorkspaceCapabilitySuite)
