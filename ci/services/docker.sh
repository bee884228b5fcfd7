#!/usr/bin/env bash
# `docker.sh up`: install Docker and gVisor, start a private dockerd (unix socket only, no bridge, no iptables
# changes) with gVisor's `runsc` registered as the runtime `runsc`, and build the busybox test image from the
# host's static busybox. `docker.sh down`: remove every container of that daemon, stop it and delete its
# state. The tests find it through DOCKER_HOST in $WC_SERVICES/env.
source "$(dirname "$0")/lib.sh"
STATE="$WC_SERVICES/docker"
SOCKET="unix://$STATE/docker.sock"
IMAGE="workspace-conformance/busybox:ci"
HOST_DIRS="/run/containerd /var/run/docker"

up() {
    apt_install dockerd docker.io
    apt_install busybox busybox-static
    apt_install runsc runsc
    mkdir -p "$STATE"
    # gVisor's own network stack refuses to start in the host's network namespace ("cannot run with network
    # enabled in root network namespace"); the suite's containers have no network anyway (--network none).
    cat > "$STATE/daemon.json" <<JSON
{"runtimes": {"runsc": {"path": "$(command -v runsc)", "runtimeArgs": ["--network=none"]}}}
JSON
    if ! DOCKER_HOST=$SOCKET docker info >/dev/null 2>&1; then
        # dockerd and its containerd also make these (plugin sockets, shim sockets) whatever their roots are.
        for dir in $HOST_DIRS; do [ -e "$dir" ] || echo "$dir" >> "$STATE/created-dirs"; done
        # No TCP listener: the engine is reachable only through its socket file. No bridge and no iptables
        # rules: the host's network is left as it was; the suite's containers run with --network none.
        dockerd --config-file "$STATE/daemon.json" --host "$SOCKET" --data-root "$STATE/data" --exec-root "$STATE/exec" --pidfile "$STATE/dockerd.pid" \
            --bridge none --iptables=false --ip6tables=false --ip-masq=false \
            > "$STATE/dockerd.log" 2>&1 &
        for _ in $(seq 1 60); do DOCKER_HOST=$SOCKET docker info >/dev/null 2>&1 && break; sleep 0.5; done
        DOCKER_HOST=$SOCKET docker info >/dev/null 2>&1 || { say "dockerd did not start:"; tail -5 "$STATE/dockerd.log" >&2; return 1; }
    fi
    build_image
    DOCKER_HOST=$SOCKET docker run --rm --network none --runtime runsc "$IMAGE" true \
        || { say "docker cannot run a container with --runtime runsc (gVisor) here"; return 1; }
    export_var DOCKER_HOST "$SOCKET"
    export_var WC_DOCKER_IMAGE "$IMAGE"
    say "docker ready at $SOCKET with $IMAGE (runtimes: runc, runsc)"
}

build_image() {
    local rootfs="$STATE/rootfs"
    busybox_rootfs "$rootfs"
    tar -C "$rootfs" -c . | DOCKER_HOST=$SOCKET docker import -c 'ENV PATH=/usr/bin:/bin' - "$IMAGE" >/dev/null
    rm -rf "$rootfs"
}

down() {
    if DOCKER_HOST=$SOCKET docker info >/dev/null 2>&1; then
        local containers
        containers=$(DOCKER_HOST=$SOCKET docker ps --all --quiet)
        [ -z "$containers" ] || DOCKER_HOST=$SOCKET docker rm --force --volumes $containers >/dev/null
    fi
    stop_pidfile "$STATE/dockerd.pid" dockerd
    # dockerd started its own containerd under the exec root; it ends with dockerd.
    unmount_under "$STATE"
    if [ -s "$STATE/created-dirs" ]; then
        while read -r dir; do unmount_under "$dir"; rm -rf "$dir"; done < "$STATE/created-dirs"
    fi
    rm -rf --one-file-system "$STATE"  # never through a mount that would not go
    say "docker stopped"
}

"${1:?usage: docker.sh up|down}"
