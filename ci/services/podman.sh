#!/usr/bin/env bash
# `podman.sh up`: install Podman (with catatonit, the init `--init` needs) and import the busybox test image.
# `podman.sh down`: remove the containers the certifications labelled, and that image. Podman has no daemon.
# The image goes into root's default store: DockerSandboxBackend runs `podman` with a minimal environment
# (no CONTAINERS_STORAGE_CONF), so a private store would not be seen.
source "$(dirname "$0")/lib.sh"
STATE="$WC_SERVICES/podman"
IMAGE="localhost/workspace-conformance/busybox:ci"
# Podman's store, run roots and runc's state: removed by `down` when `up` found the store without images or
# containers (nothing else uses Podman here), so nothing of Podman's is left however the directories came about.
HOST_DIRS="/var/lib/containers /run/containers /run/libpod /run/runc"

up() {
    apt_install podman podman
    apt_install catatonit catatonit
    apt_install busybox busybox-static
    mkdir -p "$STATE"
    if [ -z "$(podman ps --all --quiet)" ] && [ -z "$(podman images --quiet)" ]; then touch "$STATE/owns-store"; fi
    local rootfs="$STATE/rootfs"
    busybox_rootfs "$rootfs"
    tar -C "$rootfs" -c . | podman import --change 'ENV PATH=/usr/bin:/bin' - "$IMAGE" >/dev/null
    rm -rf "$rootfs"
    podman run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 "$IMAGE" true \
        || { say "podman cannot run a container here"; return 1; }
    export_var WC_PODMAN_IMAGE "$IMAGE"
    say "podman ready with $IMAGE"
}

down() {
    if command -v podman >/dev/null 2>&1; then
        local containers
        containers=$(podman ps --all --quiet --filter label=workspace-conformance.run)
        [ -z "$containers" ] || podman rm --force --volumes $containers >/dev/null
        podman rmi --force "$IMAGE" >/dev/null 2>&1 || true
    fi
    if [ -e "$STATE/owns-store" ]; then
        command -v podman >/dev/null 2>&1 && podman system reset --force >/dev/null 2>&1
        for dir in $HOST_DIRS; do unmount_under "$dir"; done
        rm -rf $HOST_DIRS
    fi
    unmount_under "$STATE"
    rm -rf --one-file-system "$STATE"  # never through a mount that would not go
    say "podman containers and image removed"
}

"${1:?usage: podman.sh up|down}"
