#!/usr/bin/env bash
# `docker.sh up`: install Docker, start a private dockerd (unix socket only, no bridge, no iptables changes)
# and build the busybox test image from the host's static busybox. `docker.sh down`: remove every container
# of that daemon, stop it and delete its state. The tests find it through DOCKER_HOST in $WC_SERVICES/env.
source "$(dirname "$0")/lib.sh"
STATE="$WC_SERVICES/docker"
SOCKET="unix://$STATE/docker.sock"
IMAGE="workspace-conformance/busybox:ci"

up() {
    apt_install dockerd docker.io
    apt_install busybox busybox-static
    mkdir -p "$STATE"
    if ! DOCKER_HOST=$SOCKET docker info >/dev/null 2>&1; then
        # No TCP listener: the engine is reachable only through its socket file. No bridge and no iptables
        # rules: the host's network is left as it was; the suite's containers run with --network none.
        dockerd --host "$SOCKET" --data-root "$STATE/data" --exec-root "$STATE/exec" --pidfile "$STATE/dockerd.pid" \
            --bridge none --iptables=false --ip6tables=false --ip-masq=false \
            > "$STATE/dockerd.log" 2>&1 &
        for _ in $(seq 1 60); do DOCKER_HOST=$SOCKET docker info >/dev/null 2>&1 && break; sleep 0.5; done
        DOCKER_HOST=$SOCKET docker info >/dev/null 2>&1 || { say "dockerd did not start:"; tail -5 "$STATE/dockerd.log" >&2; return 1; }
    fi
    build_image
    export_var DOCKER_HOST "$SOCKET"
    export_var WC_DOCKER_IMAGE "$IMAGE"
    say "docker ready at $SOCKET with $IMAGE"
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
    rm -rf "$STATE"
    say "docker stopped"
}

"${1:?usage: docker.sh up|down}"
