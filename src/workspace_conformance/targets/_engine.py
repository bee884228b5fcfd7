"""How the container targets reach their engine: Docker through the `docker` SDK, Podman through its command line.

The harness's DockerSandboxBackend, which the targets certify, drives the engine's command line itself; what the
target does around it (checking the engine answers and has the image and runtime, listing a run's containers,
removing them) is the toolkit's own, and goes to Docker's Engine API over its socket (`DOCKER_HOST`, else the
default one) with the `docker` SDK. Podman has no daemon to speak that API unless `podman system service` runs,
which neither Podman's usual install nor the harness starts, so its containers are reached through `podman`.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from ._probe import first_line, probe

if TYPE_CHECKING:
    from docker import DockerClient

__all__ = ('Engine', 'engine_for')

TIMEOUT = 60
"""Seconds one engine request may take."""


class Engine(Protocol):
    """What a container target asks of its engine; each answer is None when all is well, else a line saying why."""

    def unanswered(self) -> str | None:
        """Why the engine does not answer, or None."""

    def missing_image(self, image: str) -> str | None:
        """Why `image` is not in the engine's local store, or None."""

    def runtimes(self) -> tuple[list[str], str | None]:
        """The OCI runtimes the engine has registered, or why they could not be listed."""

    def labelled(self, label: str) -> tuple[list[str], str | None]:
        """The ids of every container carrying `label` (`name=value`), or why they could not be listed."""

    def remove(self, ids: Sequence[str]) -> str | None:
        """Remove the containers `ids` with their volumes, running or not; why one could not be, or None."""


class _DockerApi:
    """Docker's Engine API through the `docker` SDK."""

    @contextmanager
    def _client(self) -> Iterator[DockerClient]:
        import docker

        client = docker.from_env(timeout=TIMEOUT)
        try:
            yield client
        finally:
            client.close()

    def _answer(self, ask: Any) -> tuple[Any, str | None]:
        """`ask(client)`, or None and the engine's (or the connection's) one-line error."""
        from docker.errors import DockerException
        from requests.exceptions import RequestException

        try:
            with self._client() as client:
                return ask(client), None
        except (DockerException, RequestException, OSError) as error:
            return None, _said(error)

    def unanswered(self) -> str | None:
        return self._answer(lambda client: client.ping())[1]

    def missing_image(self, image: str) -> str | None:
        return self._answer(lambda client: client.images.get(image))[1]

    def runtimes(self) -> tuple[list[str], str | None]:
        info, why = self._answer(lambda client: client.info())
        return (sorted(info.get('Runtimes') or {}) if info else []), why

    def labelled(self, label: str) -> tuple[list[str], str | None]:
        found, why = self._answer(
            lambda client: [c.id for c in client.containers.list(all=True, filters={'label': label})]
        )
        return found or [], why

    def remove(self, ids: Sequence[str]) -> str | None:
        from docker.errors import NotFound

        def remove_all(client: DockerClient) -> str | None:
            said = None
            for container_id in ids:
                try:
                    client.api.remove_container(container_id, v=True, force=True)
                except NotFound:
                    continue  # gone meanwhile: what removal wants
                except Exception as error:  # "removal already in progress" and the like: listed again by the caller
                    said = _said(error)
            return said

        done, why = self._answer(remove_all)
        return why or done


def _said(error: BaseException) -> str:
    """The engine's own words for `error` (an API error's explanation, not the request's URL), on one line."""
    explanation = getattr(error, 'explanation', None)
    return first_line(str(explanation or error)) or type(error).__name__


class _Cli:
    """An engine's command line (`podman`), which has no API daemon to talk to."""

    def __init__(self, executable: str) -> None:
        self.executable = executable

    def _run(self, *argv: str, timeout: float = TIMEOUT) -> tuple[str, str | None]:
        try:
            done = subprocess.run(
                [self.executable, *argv], capture_output=True, text=True, timeout=timeout, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return '', first_line(str(error)) or type(error).__name__
        if done.returncode != 0:
            return done.stdout, first_line(done.stderr) or f'exit {done.returncode}'
        return done.stdout, None

    def unanswered(self) -> str | None:
        answers, why = probe([self.executable, 'info'])
        return None if answers else why

    def missing_image(self, image: str) -> str | None:
        present, why = probe([self.executable, 'image', 'inspect', '--format', '{{.Id}}', image])
        return None if present else why

    def runtimes(self) -> tuple[list[str], str | None]:
        listed, why = self._run('info', '--format', '{{range $name, $_ := .Runtimes}}{{$name}} {{end}}', timeout=20)
        return listed.split(), why

    def labelled(self, label: str) -> tuple[list[str], str | None]:
        if shutil.which(self.executable) is None:  # a missing engine made nothing
            return [], None
        listed, why = self._run('ps', '--all', '--quiet', '--filter', f'label={label}')
        return listed.split(), why

    def remove(self, ids: Sequence[str]) -> str | None:
        return self._run('rm', '--force', '--volumes', *ids, timeout=120)[1]


def engine_for(executable: str) -> Engine:
    """The engine `executable` names: Docker through its API, any other (Podman) through its command line."""
    return _DockerApi() if executable == 'docker' else _Cli(executable)
