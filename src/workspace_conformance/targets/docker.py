"""The `docker` and `podman` targets: pydantic-ai-harness's `DockerSandboxBackend` on a local engine."""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping
from pathlib import Path

import anyio
from pydantic_ai.workspaces import ReadOnlyWorkspace, WorkspaceBackend, WorkspaceRef

from ._engine import Engine, engine_for
from ._probe import missing_module, missing_program
from .base import CapabilitySetup, NamedTarget, Target, TargetError, TargetOption, created_ref
from .claims import DOCKER_CLAIMS, GVISOR_CLAIMS, PODMAN_CLAIMS

__all__ = ('DOCKER', 'PODMAN', 'RUN_LABEL')

RUN_LABEL = 'workspace-conformance.run'
"""Every container a run creates carries `RUN_LABEL=<run id>`, so cleanup finds all of them and nothing else."""

PODMAN_LIMITS = ('--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=4096:4096')
"""Podman in a container-less host (as on these CI machines) cannot raise the limits it copies from the host."""

_OPTIONS = (
    TargetOption('image', 'image for new containers (must be present locally, e.g. built by ci/services/docker.sh)'),
    TargetOption('user', 'run commands as this UID:GID (e.g. 1000:1000), so the permission rule can run'),
    TargetOption(
        'working-dir', 'absolute working directory in the container (default /workspace, /tmp/workspace with --user)'
    ),
    TargetOption('runtime', "OCI runtime for new containers (e.g. runsc, gVisor's; default: the engine's)"),
)


PODMAN_LIMITS_BY_RULE = {
    'cancellation_mid_create_keeps_the_ref': (
        '`podman run` cancelled at the wrong moment leaves the container Initialized (created, never started), '
        "and the next operation's `podman start` fails (`runc start ... exit status 1`), so it raises "
        'WorkspaceUnavailableError; the contract says the backend keeps the ref and goes on with the environment '
        'it created. Declared as a limit because it is a race that a strict expected failure cannot hold: the '
        'same run failed on asyncio and passed on trio (seen with Podman 4.3.1 and runc on Debian 12; '
        'docs/targets.md, Findings)'
    ),
}
"""A defect of Podman, not of the rules: the rule it breaks, and why it is a limit, not a strict expected failure."""


RUNSC_LIMITS = {
    'destroying_environment_during_command_raises_unavailable': (
        'with gVisor (runsc), `docker rm --force` of a container while `docker exec` runs in it leaves the '
        '`docker exec` client waiting in about half the tries (runc ends it at once with 137), so the command '
        'ends with WorkspaceTimeoutError at its timeout, not WorkspaceUnavailableError; declared as a limit '
        'because it is a race, which a strict expected failure cannot hold (seen with Debian 12 runsc '
        '0.0~20221219 and docker.io 20.10.24; docs/targets.md, Findings)'
    ),
}
"""A defect of Docker on gVisor, not of the backend: the rule it breaks, and why it is a limit, not a failure."""

EXEC_CARRIES_UTF8_ONLY = {
    'undecodable_name_bytes_round_trip': (
        "the engine carries an exec's command line as UTF-8 text, so a name byte that is not UTF-8 reaches the "
        "container as U+FFFD (`docker exec c sh -c 'printf %s caf<0xe9>'` prints ef bf bd): the shell filesystem "
        'of DockerSandboxBackend cannot name such a file, and reads `caf\\udce9` as missing (seen with docker.io '
        '20.10.24 and pydantic-ai-harness 0.62; Podman failed the rule too in CI)'
    ),
}
"""A limit of the engines' exec API that fails a rule on every DockerSandboxBackend target: strict expected failures."""


ATTACHES_TO_ANY_CONTAINER = (
    "the harness's DockerSandbox attaches to whatever container id a `docker` ref names (its docs: pass a ref "
    'supplied by the application to attach to a container created earlier), so it accepts ids such as `/etc` or '
    '`..` and containers it did not create; the contract says a capability attaches only to refs it recognizes, '
    'and refs from history are untrusted (seen with pydantic-ai-harness 0.62)'
)
CAPABILITY_FAILURES = {
    'hostile_ref_ids_are_declined': ATTACHES_TO_ANY_CONTAINER,
    'a_neighbouring_environment_is_declined': ATTACHES_TO_ANY_CONTAINER,
}
"""Known failures of the harness's DockerSandbox capability, not of the rules."""


def _missing(executable: str, package: str, options: Mapping[str, str]) -> str | None:
    absent = missing_module('pydantic_ai_harness', '"workspace-conformance[harness]"') or missing_program(
        executable, package
    )
    if executable == 'docker':
        absent = absent or missing_module('docker', '"workspace-conformance[harness]"')
    if absent:
        return absent
    if 'image' not in options:
        return f'no image: pass --image IMAGE (an image present in the local {executable} store)'
    engine = engine_for(executable)
    why = engine.unanswered()
    if why is not None:
        return f'the {executable} engine does not answer: {why}'
    if 'runtime' in options:
        absent = _missing_runtime(executable, engine, options['runtime'])
        if absent:
            return absent
    why = engine.missing_image(options['image'])
    if why is not None:
        return f'image {options["image"]!r} is not in the local {executable} store: {why}'
    return None


def _missing_runtime(executable: str, engine: Engine, runtime: str) -> str | None:
    """`None` when the engine can run containers with the OCI runtime `runtime`, else a line saying what to do."""
    if executable == 'podman':
        # Podman resolves a runtime name through containers.conf's search paths, which list the usual
        # installs (/usr/bin/runsc, /usr/bin/crun, ...); a name on PATH is found the same way.
        if shutil.which(runtime) is None and not Path(runtime).is_absolute():
            return f'no OCI runtime {runtime!r} on PATH for podman: install it or pass its absolute path'
        return None
    names, why = engine.runtimes()
    if why is not None:
        return f'the {executable} engine did not list its runtimes: {why}'
    if runtime not in names:
        return (
            f'the {executable} engine has no runtime {runtime!r} (it has: {", ".join(names) or "none"}): register '
            'it in the daemon\'s "runtimes" (ci/services/docker.sh registers runsc) or pass another --runtime'
        )
    return None


def _remove_labelled(executable: str, run_id: str, *, tries: int = 5) -> None:
    """Remove every container labelled with this run; raises TargetError naming those still listed after `tries`.

    A forced removal can fail while one the run started is still in progress ("removal already in progress"), so
    the listing is taken again, a second apart, until it is empty.
    """
    engine = engine_for(executable)
    said = ''
    for attempt in range(tries):
        names, why = engine.labelled(f'{RUN_LABEL}={run_id}')
        said = why or said
        if why is None and not names:
            return
        if names:
            said = engine.remove(names) or said
        if attempt < tries - 1:
            time.sleep(1)
    raise TargetError(f'{executable}: containers of run {run_id} were still listed after {tries} removals: {said}')


def _target(name: str, executable: str, options: Mapping[str, str], run_id: str) -> Target:
    from pydantic_ai_harness.docker_sandbox import DockerSandbox, DockerSandboxBackend
    from pydantic_ai_harness.docker_sandbox._backend import remove_container

    user = options.get('user')
    working_dir = options.get('working-dir') or ('/tmp/workspace' if user else '/workspace')
    docker_args = [
        '--label',
        f'{RUN_LABEL}={run_id}',
        *(['--user', user] if user else []),
        *([f'--runtime={options["runtime"]}'] if 'runtime' in options else []),
        *(PODMAN_LIMITS if executable == 'podman' else ()),
    ]

    def new(working: str) -> WorkspaceBackend:
        backend: WorkspaceBackend = DockerSandboxBackend(
            image=options['image'],
            working_dir=working,
            allow_internet_access=False,
            docker_args=docker_args,
            executable=executable,
        )
        return backend

    def attach(_: Path, ref: WorkspaceRef) -> WorkspaceBackend:
        backend: WorkspaceBackend = DockerSandboxBackend(ref=ref, working_dir=working_dir, executable=executable)
        return backend

    async def destroy(backend: WorkspaceBackend) -> None:
        await remove_container(created_ref(backend, 'container').id, executable=executable)

    async def engine_call(verb: str, backend: WorkspaceBackend) -> None:
        ref = created_ref(backend, 'container', verb)
        done = await anyio.run_process([executable, verb, ref.id], check=False)
        if done.returncode != 0:
            said = done.stderr.decode(errors='replace').strip()
            raise RuntimeError(f'`{executable} {verb} {ref.id}` exited {done.returncode}: {said}')

    async def stop(backend: WorkspaceBackend) -> None:
        await engine_call('kill', backend)  # SIGKILL to the container's PID 1, from outside its PID namespace

    async def start(backend: WorkspaceBackend) -> None:
        await engine_call('start', backend)

    def capability(_: Path) -> CapabilitySetup:
        # The harness's DockerSandbox as its users attach it: a new container on first use, labelled with the run.
        sandbox: DockerSandbox[None] = DockerSandbox(
            image=options['image'],
            working_dir=working_dir,
            allow_internet_access=False,
            docker_args=docker_args,
            executable=executable,
        )
        return CapabilitySetup(capability=sandbox, destroy_environment=sandbox.destroy, policy=ReadOnlyWorkspace)

    sacrificial = '/tmp/sacrificial/chain/workspace' if user else '/sacrificial/chain/workspace'
    claims = (
        PODMAN_CLAIMS
        if executable == 'podman'
        else GVISOR_CLAIMS
        if options.get('runtime') == 'runsc'
        else DOCKER_CLAIMS
    )
    runtime = f', runtime {options["runtime"]}' if 'runtime' in options else ''
    return Target(
        name=name,
        description=(
            f"pydantic-ai-harness's DockerSandboxBackend through `{executable}`, image {options['image']}{runtime}"
        ),
        backend=lambda _: new(working_dir),
        fresh_backend=lambda _: new(working_dir),
        destructive_backend=lambda _: new(sacrificial),
        attach_backend=attach,
        destroy_environment=destroy,
        stop_environment=stop,
        start_environment=start,
        capability=capability,
        expected_failures=EXEC_CARRIES_UTF8_ONLY,
        capability_expected_failures=CAPABILITY_FAILURES,
        cleanup=lambda _: _remove_labelled(executable, run_id),
        declared_limits={
            **(PODMAN_LIMITS_BY_RULE if executable == 'podman' else {}),
            **(RUNSC_LIMITS if options.get('runtime') == 'runsc' and executable == 'docker' else {}),
        },
        isolation_claims=claims.claims,
        isolation_source=claims.source,
    )


def _engine(executable: str, where: str, packages: str, *, keeps_capabilities: bool = False) -> NamedTarget:
    """The target of the harness's DockerSandboxBackend driving `executable` (needs `packages` installed)."""
    return NamedTarget(
        name=executable,
        description=f"pydantic-ai-harness's DockerSandboxBackend {where}",
        build=lambda options, run_id: _target(executable, executable, options, run_id),
        missing=lambda options: _missing(executable, packages, options),
        options=_OPTIONS,
        extra='harness',
        keeps_capabilities=keeps_capabilities,
    )


DOCKER = _engine('docker', 'on the local Docker engine', 'docker.io')
# Rootful Podman mounts overlay filesystems, which fails without CAP_DAC_OVERRIDE; pass --user so the permission
# rule still runs for real inside the container.
PODMAN = _engine('podman', 'through Podman', 'podman and catatonit', keeps_capabilities=True)
