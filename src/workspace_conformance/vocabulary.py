"""The words the suite, the reports and the command share, each written once as a `Literal` and its tuple."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    import pytest

__all__ = (
    'ACCOUNTING_PROPERTY',
    'AREAS',
    'BYPASS_CAPABILITIES',
    'CAPABILITY_AREAS',
    'ISOLATION_AREAS',
    'LEVELS',
    'NOT_APPLICABLE_KINDS',
    'NO_ISOLATION_CLAIMED',
    'OUTCOMES',
    'OUTCOME_PROPERTY',
    'PLATFORMS',
    'PROFILES',
    'REPORT_FORMATS',
    'REQUIREMENTS',
    'RULE_STATUSES',
    'SECRET_NAME',
    'SKIP_KINDS',
    'STRENGTHS',
    'TOOL_AREAS',
    'TOOL_CLAIMS',
    'VERDICTS',
    'Area',
    'BackendArea',
    'CapabilityArea',
    'IsolationArea',
    'Level',
    'Outcome',
    'Platform',
    'Profile',
    'ReportFormat',
    'Requirement',
    'RuleStatus',
    'SkipKind',
    'Strength',
    'ToolArea',
    'ToolClaim',
    'Verdict',
    'user_property',
)

BackendArea = Literal['commands', 'files', 'symlinks', 'lifecycle', 'processes', 'properties', 'stateful', 'platform']
"""The areas of `WorkspaceBackendSuite`: the backend protocol."""
CapabilityArea = Literal['selection', 'untrusted', 'runs', 'facade', 'policies', 'rebuild', 'hygiene']
"""The areas of `WorkspaceCapabilitySuite`: what a capability's `get_workspace` supplies, and agent runs over it."""
ToolArea = Literal['containment', 'policies', 'unattached', 'differential', 'refs', 'bounds']
"""The areas of `WorkspaceToolSuite`: the tools a capability gives the model, run in whatever workspace the run has."""
IsolationArea = Literal['files', 'processes', 'environment', 'network']
"""The areas of `WorkspaceIsolationSuite`, one per claim a sandbox makes (`isolation_claims`): what it keeps apart."""
Area = Literal[BackendArea, CapabilityArea, ToolArea, IsolationArea]
"""The parts of the contract a rule belongs to, in the order the catalog lists them."""
AREAS: tuple[Area, ...] = tuple(
    dict.fromkeys((*get_args(BackendArea), *get_args(CapabilityArea), *get_args(ToolArea), *get_args(IsolationArea)))
)
CAPABILITY_AREAS: tuple[CapabilityArea, ...] = get_args(CapabilityArea)
TOOL_AREAS: tuple[ToolArea, ...] = get_args(ToolArea)
ISOLATION_AREAS: tuple[IsolationArea, ...] = get_args(IsolationArea)
NO_ISOLATION_CLAIMED = 'no isolation claimed'
"""What reports say of an isolation suite whose backend claims nothing: never a pass."""

Level = Literal['core', 'extended']
"""`core`: every applicable core rule must pass, no waiver covers it; `extended`: a gap makes the verdict partial."""
LEVELS: tuple[Level, ...] = get_args(Level)

Strength = Literal['must', 'should', 'claim']
"""How much a rule's clause binds: `must` (a sentence of the contract requires it: it decides the verdict), `should`
(good practice, a peer's convention, a provider's known defect the text does not forbid: a failure is an advisory), or
`claim` (a property only some subjects promise: it binds where the subject declares the claim, else it advises)."""
STRENGTHS: tuple[Strength, ...] = get_args(Strength)

ToolClaim = Literal['bounded', 'contained']
"""What a tool capability may claim beyond the contract (`claims` fixture, `certify --claims`): `bounded`, every
result of a huge read or output is bounded and says it is partial; `contained`, no tool reads or writes outside the
working directory, even through a symlink (the contract makes the working directory a starting point, not a
boundary)."""
TOOL_CLAIMS: tuple[ToolClaim, ...] = get_args(ToolClaim)

Requirement = Literal[
    'commands',
    'filesystem',
    'realpath',
    'run_in_directory',
    'native_files',
    'shell_files',
    'fresh',
    'attach',
    'destroy',
    'sacrificial',
    'posix_shell',
    'inherited_pipes',
    'shell_permissions',
    'parent_file_errors',
    'ln',
    'holds_symlinks',
    'mkfifo',
    'setsid',
    'destroy_ref',
    'faults',
    'stop',
    'restart',
    'policy',
    'dbos',
    'prefect',
    'temporal',
    'local_backend',
    'local_workspace',
    'read_only',
    'writable',
    'workspace_commands',
    'files_only',
    'wrapper_layer',
]
"""What a rule needs, resolved by its guard before the body runs (see `engine/_requires.py` for each one).

The last seven are read from the subject: `local_workspace` from the capability, the others from the workspace its
`get_workspace(ref=None)` supplies; `local_backend` and `files_only` from a backend rule's backend too, the only ones
not only for capability rules. `holds_symlinks`: the backend's storage can hold symlinks (it has commands,
SupportsRealpath or `make_symlink`, or `storage_holds_symlinks` says so), without needing to make one."""
REQUIREMENTS: tuple[Requirement, ...] = get_args(Requirement)

SkipKind = Literal[
    'not-applicable', 'platform', 'declared-limit', 'fixture-missing', 'environment', 'runner', 'overridden'
]
"""Why a rule did not run: outside the backend's scope (`not-applicable`; `platform`, a rule with no form for the
workspace's platform: a POSIX-only rule on a 'windows' workspace, a 'windows'-only one on a 'posix' one), or a gap
of one of the other kinds."""
SKIP_KINDS: tuple[SkipKind, ...] = get_args(SkipKind)
NOT_APPLICABLE_KINDS: tuple[SkipKind, ...] = ('not-applicable', 'platform')
"""The skip kinds outside the verdict's scope: the rule's status is `not-applicable`, never a gap."""
Platform = Literal['posix', 'windows']
"""A workspace's shell and path syntax (pydantic-ai 2.78's `WorkspacePlatform`; 'posix' before it)."""
PLATFORMS: tuple[Platform, ...] = get_args(Platform)

Outcome = Literal['passed', 'failed', 'advisory', 'error', 'skipped', 'xfailed', 'xpassed', 'missing']
"""What one rule did on one event loop (`advisory`: a rule that does not bind here failed: a `should` rule, or a
claim the subject did not declare)."""
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)

RuleStatus = Literal['passed', 'failed', 'broken', 'advisory', 'gap', 'not-applicable', 'missing']
"""One rule's status over every event loop it ran on: the unit the verdict counts, the columns every renderer shows.

`advisory` is a failure of a rule that does not bind the subject (`should`, or an undeclared claim): listed and counted
apart, never a failure and never a pass. `broken` is a failure whose cause another rule already reported: the rule
ended on an error of a backend operation, and the rule that grounds that operation failed on the same operation
(`Rule.grounds`); it points at that rule, is never a pass, and leaves a subject `not certified`."""
RULE_STATUSES: tuple[RuleStatus, ...] = get_args(RuleStatus)

Verdict = Literal['certified', 'partial', 'not certified']
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)

Profile = Literal['ci', 'certify', 'dev']
"""Hypothesis profiles of the generated cases: fast and repeatable, thorough and repeatable, random."""
PROFILES: tuple[Profile, ...] = get_args(Profile)

ReportFormat = Literal['json', 'md', 'html', 'junit', 'badge', 'badge-json']
REPORT_FORMATS: tuple[ReportFormat, ...] = get_args(ReportFormat)

OUTCOME_PROPERTY = 'workspace_conformance_outcome'
"""The `user_properties` key of a rule's structured outcome: `{'rule_id', 'skip_kind', 'reason'}`, `{'failure'}` (and
`'observed'`, what the rule saw without the rule and clause that frame it), `{'advisory'}` (the same, of a rule that
does not bind here: why it only advises), or `{'missing'}` (the session stopped before the rule had a result)."""
ACCOUNTING_PROPERTY = 'workspace_conformance_accounting'
"""The `user_properties` key of a rule's cost: `{'calls', 'round_trips', 'seconds'}` (backend calls, serial round
trips, and the rule's own wall time, which is not its item's when it ran in a batch)."""


def user_property(report: pytest.TestReport, key: str) -> object:
    """The value a report carries under `key` (one of the properties above) in its `user_properties`, or None."""
    return next((value for name, value in report.user_properties if name == key), None)


SECRET_NAME = re.compile(r'KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|SESSION|COOKIE|PRIVATE', re.IGNORECASE)
"""Names of environment variables that hold secrets: reports redact their values, the `secrets` fixture holds them."""
BYPASS_CAPABILITIES = '-dac_override,-dac_read_search'
"""The capabilities `setpriv` drops so that root cannot bypass file permissions (the permission rule runs for real)."""
