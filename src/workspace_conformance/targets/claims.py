"""What each named target's provider documents its sandbox keeps apart from the host, with where it says so.

`certify TARGET --isolation` checks these claims with `WorkspaceIsolationSuite`. A claim is made only where the
provider's own documentation makes it, for the sandbox as the target configures it; what a provider leaves unsaid
is not claimed, even where a rule would pass (docs/isolation.md, "What the targets claim").
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = (
    'BUBBLEWRAP_CLAIMS',
    'DOCKER_CLAIMS',
    'E2B_LOCAL_CLAIMS',
    'E2B_LOCAL_UNCONFINED',
    'GVISOR_CLAIMS',
    'IN_PROCESS_DOUBLE',
    'LOCAL_CLAIMS',
    'PODMAN_CLAIMS',
    'SSH_CLAIMS',
    'Claims',
)

ALL = frozenset({'files', 'processes', 'environment', 'network'})


@dataclass(frozen=True)
class Claims:
    """A target's isolation claims and the documents that make them (or say why it makes none)."""

    claims: frozenset[str]
    source: str


LOCAL_CLAIMS = Claims(
    frozenset(),
    "pydantic-ai's LocalWorkspaceBackend docstring (pydantic_ai/workspaces/local.py): it runs commands as plain host "
    'subprocesses and "isolates nothing: commands and absolute paths reach anywhere this process can"',
)
IN_PROCESS_DOUBLE = Claims(
    frozenset(),
    "this toolkit's test double (docs/doubles.md): it lives in the certifying process and is no sandbox",
)
SSH_CLAIMS = Claims(
    frozenset(),
    "a loopback sshd account: OpenSSH's sshd(8) runs each command as that user's login shell on this very host, "
    "with the host's files, processes and network; pydantic-ai-harness's SSHWorkspace README names no isolation",
)
DOCKER_CLAIMS = Claims(
    ALL,
    'Docker: a container has its own PID, network, mount and IPC namespaces, so its processes "cannot see, and even '
    'less affect, processes running in ... the host system" (https://docs.docker.com/engine/security/#kernel-namespaces)'
    ', its own root filesystem from the image (https://docs.docker.com/get-started/docker-concepts/the-basics/what-is-a-'
    'container/), and with `--network none` only a loopback device of its own (https://docs.docker.com/engine/network/'
    "drivers/none/); pydantic-ai-harness's DockerSandbox README: allow_internet_access=False (as the target sets it) "
    "runs `--network none`, and \"nothing from your machine's environment reaches the container except Docker's proxy "
    'settings"; the target mounts no host directory',
)
GVISOR_CLAIMS = Claims(
    ALL,
    f'{DOCKER_CLAIMS.source}; gVisor (runsc) adds an application kernel between the container and the host '
    "(https://gvisor.dev/docs/architecture_guide/security/), so the same namespaces are its own kernel's",
)
PODMAN_CLAIMS = Claims(
    ALL,
    'Podman: `podman run` gives a container a private PID namespace by default and `--network none` "no networking" '
    '(https://docs.podman.io/en/latest/markdown/podman-run.1.html, --pid and --network), and its own root filesystem '
    "from the image; pydantic-ai-harness's DockerSandbox README (Podman works too): allow_internet_access=False runs "
    "`--network none`, and nothing from your machine's environment reaches the container; the target mounts no host "
    'directory',
)
BUBBLEWRAP_CLAIMS = Claims(
    frozenset({'network'}),
    'pydantic-ai-harness\'s BubblewrapSandbox README (What the sandbox allows): with its defaults commands have "no '
    'network": a network namespace of their own and a seccomp filter that blocks connecting to "Unix sockets the host '
    'has elsewhere on disk". The same README says commands see the host\'s files read-only ("can read every file the '
    'host user can") and "share the host\'s process list", and says nothing of the environment: files, processes and '
    'environment are not claimed',
)
E2B_LOCAL_CLAIMS = Claims(
    frozenset({'files', 'processes', 'environment'}),
    'docs/e2b-local.md (A sandbox from inside): confined by bubblewrap, a sandbox has its own root bound as `/` with '
    "only the host's /usr and /etc read-only over it, its own user, PID, IPC, UTS and mount namespaces, and a command "
    'environment built from scratch (services/e2b/sandbox.py); its network is the host\'s (Not emulated: "Internet '
    'access is the host\'s"), so network is not claimed. Hosted E2B documents a Firecracker micro-VM per sandbox '
    '(https://e2b.dev/docs), which this emulation is not',
)
E2B_LOCAL_UNCONFINED = Claims(
    frozenset(),
    'docs/e2b-local.md (A sandbox from inside): without bwrap and an nsenter that can join its namespaces, serve e2b '
    'runs sandboxes UNCONFINED, as host processes, and claims nothing',
)
