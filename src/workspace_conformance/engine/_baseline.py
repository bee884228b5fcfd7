"""What the backend's environment held before the rules acted: the facts a run-time skip may rest on.

A rule that finds a tool missing, or no variable in `env`, may be seeing what another rule (or its own actions) did
to the backend, not the environment the backend provides. So such a fact is taken once per backend per session, by
one command made at a rule's own item before that rule (or the batch it leads) starts, when no other rule is running:
the baseline. A rule skips only when the baseline agrees with what it saw; when the baseline saw the tool, or the
variable, and the rule did not, the rule fails quoting both observations.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field

import pytest
from pydantic_ai.workspaces import SupportsCommands

from .._frames import machinery_hidden
from .._platforms import BASELINE_ENV_MARK, BASELINE_POWERSHELL
from ._requires import TOOLS
from ._rule import Rule, rule_of

__tracebackhide__ = machinery_hidden  # pytest leaves these frames out of a rule's failure (not with --tb=long)
__all__ = (
    'ALWAYS_CHANGING',
    'BASELINE_ARGV',
    'BASELINE_POWERSHELL',
    'CHECKS',
    'Baseline',
    'baseline_key',
    'cached_baseline',
    'env_variables',
    'keep_baseline',
    'needs_baseline',
)

PROBE_DIR = '.workspace-conformance-baseline-$$'
"""The directory the probe makes (and removes) in the working directory to try `ln -s`, `mkfifo` and modes there."""
PROBED_TOOLS = (
    'env',
    'ls',
    'ps',
    'chmod',
    'ln',
    'mkfifo',
    'setsid',
    'nc',
    'bash',
    'python3',
    'python',
    'busybox',
    'curl',
    'socat',
)
CHECKS: dict[str, tuple[str, str]] = {
    **{tool: (f'command -v {tool}', f'`command -v {tool}` found it') for tool in PROBED_TOOLS},
    'nc -U': ("command -v nc && nc -h 2>&1 | grep -q -- '-U'", '`nc -h` lists -U'),
    'busybox nc': ('command -v busybox && busybox --list 2>/dev/null | grep -qx nc', 'busybox has nc'),
    'busybox wget': ('command -v busybox && busybox --list 2>/dev/null | grep -qx wget', 'busybox has wget'),
    '/proc/self/environ': ('[ -r /proc/self/environ ]', '/proc/self/environ was readable'),
    '/proc/self/cmdline': ('[ -r /proc/self/cmdline ]', '/proc/self/cmdline was readable'),
    'ln -s': (f'ln -s target "{PROBE_DIR}/link"', '`ln -s` made a symlink in the working directory'),
    'mkfifo here': (f'mkfifo "{PROBE_DIR}/fifo"', '`mkfifo` made a FIFO in the working directory'),
    'reads mode 000': (
        f': > "{PROBE_DIR}/locked" && chmod 000 "{PROBE_DIR}/locked" && cat "{PROBE_DIR}/locked"',
        'the command user read a mode-000 file',
    ),
}
"""Name -> (shell condition, what it means when true): every fact the baseline records about the environment."""
ENV_MARK = BASELINE_ENV_MARK
_SCRIPT = '\n'.join(
    (
        f'mkdir "{PROBE_DIR}" >/dev/null 2>&1',
        # Each check in a subshell: a failed redirection of a special builtin (`: > file` where `mkdir` was missing)
        # ends a non-interactive shell, and one broken check must not cost the others or the listing.
        *(f"if ( {shell} ) >/dev/null 2>&1; then echo 'found {name}'; fi" for name, (shell, _) in CHECKS.items()),
        f'chmod 700 "{PROBE_DIR}/locked" >/dev/null 2>&1; rm -rf "{PROBE_DIR}" >/dev/null 2>&1',
        f"echo '{ENV_MARK}'",
        'env',
    )
)
BASELINE_ARGV = ('sh', '-c', _SCRIPT)
"""The one command the baseline is: each check it passes as `found <name>`, then `env`'s listing."""
ALWAYS_CHANGING = frozenset({'_', 'PWD', 'OLDPWD', 'SHLVL'})
"""Variables a shell sets per command, so never the backend's own."""


def env_variables(listing: str) -> dict[str, str]:
    """`env` output as name -> value: names that are shell identifiers, a value spanning lines cut to its first."""
    found: dict[str, str] = {}
    for line in listing.splitlines():
        name, equals, value = line.partition('=')
        if equals and name.replace('_', 'a').isalnum() and not name[0].isdigit():
            found.setdefault(name, value)
    return found


@dataclass(frozen=True)
class Baseline:
    """The baseline's answer: the checks it passed and the variables `env` listed, or why it gave none."""

    found: frozenset[str] = frozenset()
    variables: Mapping[str, str] = field(default_factory=dict)
    answered: bool = True
    said: str = ''
    """Without an answer: what the probe returned or raised instead. With one: empty."""
    no_shell: bool = False
    """The probe's `sh` exited 127: the environment has no POSIX shell to look with."""
    seconds: float = 0.0

    @classmethod
    def of(cls, exit_code: object, stdout: object, seconds: float) -> Baseline:
        """What a result of `BASELINE_ARGV` says (an unanswered baseline when it is not that command's output)."""
        listed = isinstance(stdout, str) and ENV_MARK in stdout
        if exit_code == 127 and not listed:  # `sh` itself was not found (the script's last `env` may be missing)
            return cls(answered=True, no_shell=True, seconds=seconds, said='`sh` exited 127')
        if not isinstance(stdout, str) or not listed:
            return cls(answered=False, said=f'`sh -c` exited {exit_code!r} without its listing', seconds=seconds)
        facts, _, listing = stdout.partition(ENV_MARK)
        found = frozenset(line.removeprefix('found ') for line in facts.splitlines() if line.startswith('found '))
        variables = {name: value for name, value in env_variables(listing).items() if name not in ALWAYS_CHANGING}
        return cls(found=found & set(CHECKS), variables=variables, seconds=seconds)

    def saw(self, checks: tuple[str, ...]) -> str:
        """What the baseline saw of `checks`, as a clause: `ln -s made a symlink ...` or `found none of ...`."""
        if not self.answered:
            return f'the probe of the environment got no answer ({self.said})'
        if self.no_shell:
            return 'the environment had no POSIX shell `sh` (exit 127)'
        seen = [CHECKS[name][1] for name in checks if name in self.found]
        if seen:
            return '; '.join(seen)
        return f'it found none of {", ".join(f"`{name}`" for name in checks)}'

    def has_any(self, checks: tuple[str, ...]) -> bool:
        """Whether the baseline answered and passed one of `checks`."""
        return self.answered and any(name in self.found for name in checks)


BASELINES = pytest.StashKey[dict[Hashable, tuple[Callable[[], object], Baseline]]]()
"""On the session: each backend's baseline, by `baseline_key`, with a reference to the backend it was taken of."""


def baseline_key(item: pytest.Item) -> Hashable:
    """Which backend a baseline describes: the class's `backend` fixture's value, or for a per-rule fixture the fixture.

    The fixture's own value, not the rule's argument, which rebuild-per-call wraps anew for every rule.
    """
    info = getattr(item, '_fixtureinfo', None)
    defs = getattr(info, 'name2fixturedefs', {}).get('backend')
    if not defs:
        return None
    definition = defs[-1]
    cached = getattr(definition, 'cached_result', None)
    if definition.scope == 'function' or cached is None:
        return ('fixture', item.parent.nodeid if item.parent is not None else '', id(definition))
    return ('backend', id(cached[0]))


def _held(item: pytest.Item, key: Hashable) -> object:
    """What must stay alive for `key` to name the same backend: the fixture's value, or the class's node."""
    info = getattr(item, '_fixtureinfo', None)
    definition = getattr(info, 'name2fixturedefs', {})['backend'][-1]
    if isinstance(key, tuple) and key[0] == 'backend':
        return definition.cached_result[0]
    return definition


def cached_baseline(item: pytest.Item) -> Baseline | None:
    """The baseline already taken of the item's backend in this session, or None."""
    key = baseline_key(item)
    found = None if key is None else item.session.stash.setdefault(BASELINES, {}).get(key)
    if found is None:
        return None
    held, baseline = found
    return baseline if held() is not None else None


def keep_baseline(item: pytest.Item, baseline: Baseline) -> None:
    """Remember `baseline` as the session's for the item's backend (weakly, where it can be weakly referenced)."""
    key = baseline_key(item)
    if key is None:
        return
    target = _held(item, key)
    try:
        held: Callable[[], object] = weakref.ref(target)
    except TypeError:
        held = lambda: target  # noqa: E731  # kept alive: its id must not be reused by another backend
    item.session.stash.setdefault(BASELINES, {})[key] = (held, baseline)


def needs_baseline(item: pytest.Item, backend: object) -> bool:
    """Whether to take a baseline now: the backend has commands and none yet, and a rule of its class runs them."""
    if not isinstance(backend, SupportsCommands) or baseline_key(item) is None or cached_baseline(item) is not None:
        return False
    return any(candidate.parent is item.parent and _runs_commands(candidate) for candidate in item.session.items)


def _runs_commands(item: pytest.Item) -> bool:
    meta: Rule | None = rule_of(getattr(item, 'function', None))
    return meta is not None and bool({'commands', *TOOLS} & set(meta.requires))
