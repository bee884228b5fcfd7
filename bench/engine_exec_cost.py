"""Wall time and CPU of one backend call on each real target's engine: where `nox -s targets` spends its time.

Each call of DockerSandboxBackend, SshBackend and the bubblewrap target is one process on the host (`docker exec`,
`podman exec`, `ssh` over the run's master connection, `bwrap`); a certification makes about 3,100 of them per
target (report.json: `calls`, plus the 64 KiB pages of the 8 MiB file). This runs COUNT calls of the shell
filesystem's page read (`dd ... | base64` of 64 KiB) one after another on each engine ci/services started and
prints, per call: wall ms, CPU ms of the client processes (this process is their subreaper, so daemonized helpers
such as conmon count too) and CPU ms of the engine's long-lived processes (dockerd, containerd and its shims, the
gVisor sandbox, sshd). CPU per call times 3,100 calls is a target's CPU floor; on 2 cores the step cannot take less
than the sum of the floors over 2. Usage, with the services up (`bash ci/services/up.sh`, then
`set -a; . $WC_SERVICES/env`): python bench/engine_exec_cost.py [--count N]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import shutil
import subprocess
import time

PR_SET_CHILD_SUBREAPER = 36
PAGE_READ = 'dd if=/bin/busybox bs=65536 count=1 2>/dev/null | base64'
"""What pydantic-ai's shell filesystem runs for each 64 KiB page of a read (sh -c)."""
DOCKER_ENGINE = ('dockerd', 'containerd', 'exe')
"""Command names of Docker's long-lived processes (`exe`: gVisor's sandbox and gofer); Podman has none."""
LABEL = 'workspace-conformance.bench=exec-cost'


def _engine_cpu(names: tuple[str, ...]) -> float:
    """CPU seconds so far of the processes named `names`, their reaped children included."""
    ticks = 0
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat') as file:
                stat = file.read()
        except OSError:
            continue
        name = stat[stat.index('(') + 1 : stat.rindex(')')]
        if names and name.startswith(names):
            fields = stat[stat.rindex(')') + 2 :].split()
            ticks += sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf('SC_CLK_TCK')


def _reap_orphans() -> None:
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def measure(name: str, command: list[str], count: int, engine_names: tuple[str, ...] = ()) -> None:
    """Run `command` `count` times; print wall, client CPU and CPU of the `engine_names` processes per call."""
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)  # warm: caches, the ssh master connection
    _reap_orphans()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    engine = _engine_cpu(engine_names)
    start = time.monotonic()
    for _ in range(count):
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    _reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    clients = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    engines = _engine_cpu(engine_names) - engine
    per = 1000 / count
    print(
        f'{name:<14} wall {wall * per:6.0f} ms   cpu: clients {clients * per:4.0f} ms + engine {engines * per:4.0f} ms'
        f' = {(clients + engines) * per:4.0f} ms a call'
    )


def _container(executable: str, image: str, *extra: str) -> str:
    started = subprocess.run(
        [executable, 'run', '--detach', '--label', LABEL, *extra, image, 'sleep', '3600'],
        capture_output=True,
        text=True,
        check=True,
    )
    return started.stdout.strip()


def main() -> None:
    """Measure every engine whose service variables are set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--count', type=int, default=30, help='calls per engine (default 30)')
    count = parser.parse_args().count
    containers: dict[str, tuple[str, str]] = {}
    try:
        # Created before this process becomes the subreaper: a container's own conmon must not become its child.
        if os.environ.get('WC_DOCKER_IMAGE') and shutil.which('docker'):
            for runtime in ('runc', 'runsc'):
                image = os.environ['WC_DOCKER_IMAGE']
                containers[f'docker {runtime}'] = ('docker', _container('docker', image, f'--runtime={runtime}'))
        if os.environ.get('WC_PODMAN_IMAGE') and shutil.which('podman'):
            limits = ('--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=4096:4096')
            containers['podman runc'] = ('podman', _container('podman', os.environ['WC_PODMAN_IMAGE'], *limits))
        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        for name, (executable, container) in containers.items():
            engine = DOCKER_ENGINE if executable == 'docker' else ()
            measure(name, [executable, 'exec', container, 'sh', '-c', PAGE_READ], count, engine)
        if os.environ.get('WC_SSH_HOST'):
            host = os.environ['WC_SSH_HOST']
            control = f'ControlPath=/tmp/wc-bench-ssh-{os.getpid()}'
            ssh = ['ssh', '-F', os.environ['WC_SSH_CONFIG'], '-o', 'ControlMaster=auto', '-o', control]
            try:
                measure('ssh (master)', [*ssh, '-o', 'ControlPersist=60', '-T', host, PAGE_READ], count, ('sshd',))
            finally:
                subprocess.run([*ssh, '-O', 'exit', host], capture_output=True, check=False)
        if shutil.which('bwrap'):
            bwrap = ['bwrap', '--ro-bind', '/', '/', '--dev', '/dev', '--unshare-all', '--die-with-parent']
            measure('bubblewrap', [*bwrap, 'sh', '-c', PAGE_READ], count)
    finally:
        for executable, container in containers.values():
            subprocess.run([executable, 'rm', '--force', container], capture_output=True, check=False)
        _reap_orphans()


if __name__ == '__main__':
    main()
