"""Rules on the whole alphabet of `env=`: names in every case, many variables at once, and concurrent calls apart.

POSIX leaves names with lower-case letters to applications (XBD 8.1; its utilities use upper case), and `execve`
and shells keep names byte for byte. Providers that send `env=` as a JSON object, a form field or a container spec
must keep them so too.
"""

from __future__ import annotations

from pydantic_ai.workspaces import CommandResult, WorkspaceBackend

from ..authoring import commands_of, env_variables, gather, rule, skip, traced_beside, unwrap

__all__ = ('EnvRules',)

CASED = {
    'wc_lower_case_1': 'all lower case',
    'Wc_Mixed_Case_2': 'mixed case',
    'WC_UPPER_CASE_3': 'all upper case',
    'wc_twin': 'the lower-case twin',
    'WC_TWIN': 'the upper-case twin',
    'wC_tWiN': 'the mixed-case twin',
    '_wc_leading_underscore': 'a leading underscore',
    'wc9_digits_0_and_42': 'digits',
}
"""Names that differ only in case are different variables: a backend that folds case loses two of the twins."""
MANY = 200
CONCURRENT = 8
BACKEND_ENV = {'WC_BACKEND_ONLY': 'set on the backend', 'WC_BOTH': 'the backend value'}
CALL_ENV = {'WC_CALL_ONLY': 'set on the call', 'WC_BOTH': 'the call value'}
"""A backend built with `env=BACKEND_ENV`, run with `env=CALL_ENV`: one name in both, where the call's value wins."""


def _listed(result: CommandResult, doing: str) -> dict[str, str]:
    """The variables `env` printed (values here have no newline), failing unless it exited 0."""
    assert result.exit_code == 0, f'`env` {doing} exited {result.exit_code}: {result.stderr[:200]!r}'
    return env_variables(result.stdout)


class EnvRules:
    """Rules on what `env=` carries: every name's case, two hundred variables, and each concurrent call its own."""

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.3.0', must='B26')
    async def test_env_names_keep_their_case(self, backend: WorkspaceBackend) -> None:
        """Names passed in `env=` arrive with their case: lower, mixed and upper, and twins that differ only in case."""
        seen = _listed(await commands_of(backend).run(['env'], env=CASED), 'with env= of cased names')
        wrong = {name: seen.get(name) for name, value in CASED.items() if seen.get(name) != value}
        ours = {name.casefold() for name in CASED}
        strangers = sorted(name for name in seen if name.casefold() in ours and name not in CASED)
        assert not wrong and not strangers, f'env= names lost their case: {wrong} arrived as None or another value' + (
            f', and {strangers} arrived, which env= never named' if strangers else ''
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.3.0', must='B26')
    async def test_two_hundred_env_variables_arrive_in_one_call(self, backend: WorkspaceBackend) -> None:
        """All 200 variables passed in one `env=` reach the command, each with its own value."""
        many = {f'WC_MANY_{index:03d}': f'value {index} ' + '=' * (index % 5) for index in range(MANY)}
        seen = _listed(await commands_of(backend).run(['env'], env=many), f'with env= of {MANY} variables')
        missing = sorted(name for name in many if name not in seen)
        changed = sorted(name for name in many if name in seen and seen[name] != many[name])
        assert not missing and not changed, (
            f'of {MANY} variables passed in one env=, {len(missing)} never arrived (e.g. {missing[:3]}) and '
            f'{len(changed)} arrived changed (e.g. {[(name, seen[name]) for name in changed[:2]]})'
        )

    @rule(area='commands', requires=['commands', 'posix_shell'], since='0.3.0', must='B26')
    async def test_concurrent_commands_see_only_their_own_env(self, backend: WorkspaceBackend) -> None:
        """Commands run at once with different `env=` each see their own variables, and none of the others'."""
        envs = [{'WC_CALLER': f'caller-{index}', f'WC_ONLY_CALLER_{index}': str(index)} for index in range(CONCURRENT)]
        commands = commands_of(backend)
        results = await gather(*(commands.run(['env'], env=env) for env in envs))
        problems = []
        for index, (env, result) in enumerate(zip(envs, results, strict=True)):
            seen = _listed(result, f'of concurrent caller {index}')
            theirs = sorted(name for name in seen if name.startswith('WC_ONLY_CALLER_') and name not in env)
            if seen.get('WC_CALLER') != env['WC_CALLER'] or f'WC_ONLY_CALLER_{index}' not in seen or theirs:
                problems.append(
                    f'caller {index} saw WC_CALLER={seen.get("WC_CALLER")!r}, its own variable '
                    f"{'present' if f'WC_ONLY_CALLER_{index}' in seen else 'missing'}, and the others' {theirs}"
                )
        assert not problems, f'{CONCURRENT} concurrent commands with different env= mixed them up: ' + '; '.join(
            problems
        )

    @rule(area='commands', requires=['commands', 'posix_shell', 'local_backend'], since='0.3.0', must='S03')
    async def test_a_backend_env_reaches_every_command_under_the_call_env(self, backend: WorkspaceBackend) -> None:
        """A `LocalWorkspaceBackend` built with `env=` gives it to every command, with a call's `env=` on top."""
        kind = type(unwrap(backend))
        root = await backend.working_dir()
        try:
            configured = traced_beside(backend, kind(root, env=BACKEND_ENV))
        except TypeError as error:
            skip('not-applicable', f'{kind.__qualname__}(working_dir, env=...) cannot be built ({error})')
        commands = commands_of(configured)
        layered = _listed(await commands.run(['env'], env=CALL_ENV), 'with env= on a backend built with env=')
        wanted = {**BACKEND_ENV, **CALL_ENV}
        wrong = {name: layered.get(name) for name, value in wanted.items() if layered.get(name) != value}
        assert not wrong, (
            f'{kind.__qualname__}(env={BACKEND_ENV}) run with env={CALL_ENV} gave {wrong}, expected {wanted}: the '
            "backend's env applies to every command and the call's env= goes on top"
        )
        plain = _listed(await commands.run('env', shell=True), 'as a shell string without env=')
        wrong = {name: plain.get(name) for name, value in BACKEND_ENV.items() if plain.get(name) != value}
        leaked = 'WC_CALL_ONLY' in plain
        assert not wrong and not leaked, (
            f'a later shell command without env= saw {wrong or "the backend env"}'
            + (" and the earlier call's WC_CALL_ONLY" if leaked else '')
            + f', expected {BACKEND_ENV} alone'
        )
