"""The public API for writing a conformance rule: the decorator, and the helpers a rule body uses.

A rule is an `async def test_<rule_id>(self, backend, ...)` method of a `WorkspaceBackendSuite` subclass, decorated
with `@rule(area=..., requires=[...])`, whose docstring's first sentence states the clause it checks. Its guard
resolves `requires` before the body runs (one classified skip when something is missing), bounds it with a hang
guard, and frames every failure with the rule and its clause. A capability rule is the same on a
`WorkspaceCapabilitySuite` subclass, taking `capability` and `deps`: `own_environment`, `select`, `first_use` and
`accepted` ask for and use the workspace its `get_workspace` supplies. See docs/writing-rules.md.
"""

from __future__ import annotations

from ._frames import error_chain, machinery_hidden
from .engine._baseline import ALWAYS_CHANGING, env_variables
from .engine._canary import CANARY, environment_of, leaked, runners_canary
from .engine._failures import RuleFailure, safe_str
from .engine._guard import RuleRun, current_run, wait_until
from .engine._host import HostEvent, HostWatch, calling, opens_for_writing, owning, watching_host
from .engine._hypothesis import call_in_loop, profile_settings, run_in_worker
from .engine._platform import (
    EXIT_0_ARGV,
    PWD_ARGV,
    PWD_SCRIPT,
    REPORT_COMMAND,
    SLEEP_COMMAND,
    current_platform,
    lines,
    paths,
    platform_argv,
    platform_form,
    platform_of,
)
from .engine._rules import AREAS, LEVELS, REQUIREMENTS, Area, Level, Requirement, Rule, catalog, narrow, rule, rule_of
from .engine._supplied import (
    accepted,
    described,
    first_use,
    own_environment,
    ref_text,
    run_context,
    select,
    select_some,
)
from .engine._support import (
    SCRATCH_PREFIX,
    ConformanceConfigError,
    FaultKind,
    InjectFault,
    MakeSymlink,
    SuiteFixtures,
    before_rules,
    commands_of,
    expect_error,
    gather,
    lacking,
    make_link,
    run_environment_tool,
    scratch,
    skip,
    skip_as_before,
    supplied,
    workspace_of,
)
from .engine._tracing import traced_beside, unwrap
from .vocabulary import (
    ISOLATION_AREAS,
    NO_ISOLATION_CLAIMED,
    SECRET_NAME,
    SKIP_KINDS,
    IsolationArea,
    Platform,
    SkipKind,
)

__all__ = (
    'ALWAYS_CHANGING',
    'AREAS',
    'CANARY',
    'EXIT_0_ARGV',
    'ISOLATION_AREAS',
    'LEVELS',
    'NO_ISOLATION_CLAIMED',
    'PWD_ARGV',
    'PWD_SCRIPT',
    'REPORT_COMMAND',
    'REQUIREMENTS',
    'SCRATCH_PREFIX',
    'SECRET_NAME',
    'SKIP_KINDS',
    'SLEEP_COMMAND',
    'Area',
    'ConformanceConfigError',
    'FaultKind',
    'HostEvent',
    'HostWatch',
    'InjectFault',
    'IsolationArea',
    'Level',
    'MakeSymlink',
    'Platform',
    'Requirement',
    'Rule',
    'RuleFailure',
    'RuleRun',
    'SkipKind',
    'SuiteFixtures',
    'accepted',
    'before_rules',
    'call_in_loop',
    'calling',
    'catalog',
    'commands_of',
    'current_platform',
    'current_run',
    'described',
    'env_variables',
    'environment_of',
    'error_chain',
    'expect_error',
    'first_use',
    'gather',
    'lacking',
    'leaked',
    'lines',
    'machinery_hidden',
    'make_link',
    'narrow',
    'opens_for_writing',
    'own_environment',
    'owning',
    'paths',
    'platform_argv',
    'platform_form',
    'platform_of',
    'profile_settings',
    'ref_text',
    'rule',
    'rule_of',
    'run_context',
    'run_environment_tool',
    'run_in_worker',
    'runners_canary',
    'safe_str',
    'scratch',
    'select',
    'select_some',
    'skip',
    'skip_as_before',
    'supplied',
    'traced_beside',
    'unwrap',
    'wait_until',
    'watching_host',
    'workspace_of',
)
