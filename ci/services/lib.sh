# Shared by the service scripts: where their state lives, and package installs that say what failed.
# Every service keeps its state (sockets, keys, pid files, logs) under $WC_SERVICES, removed by its `down`.
set -euo pipefail
WC_SERVICES="${WC_SERVICES:-/tmp/workspace-conformance-services}"
ENV_FILE="$WC_SERVICES/env"
mkdir -p "$WC_SERVICES"

say() { echo "services: $*" >&2; }

# apt_install COMMAND PACKAGE...: install the packages unless COMMAND is already on PATH (root only).
apt_install() {
    local command=$1; shift
    command -v "$command" >/dev/null 2>&1 && return 0
    if [ "$(id -u)" != 0 ]; then say "need root to install $*"; return 1; fi
    if [ ! -e "$WC_SERVICES/.apt-updated" ]; then
        apt-get update -qq >/dev/null && touch "$WC_SERVICES/.apt-updated"
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# export_var NAME VALUE: record a variable for the tests (the env file is sourced by ci/services/run-with).
export_var() {
    touch "$ENV_FILE"
    grep -v "^export $1=" "$ENV_FILE" > "$ENV_FILE.new" || true
    printf 'export %s=%q\n' "$1" "$2" >> "$ENV_FILE.new"
    mv "$ENV_FILE.new" "$ENV_FILE"
}

# stop_pidfile FILE NAME: TERM the process in FILE, wait up to 20 s, then KILL it.
stop_pidfile() {
    local file=$1 name=$2 pid
    [ -s "$file" ] || return 0
    pid=$(cat "$file")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -0 "$pid" 2>/dev/null && { say "$name did not stop; killing it"; kill -KILL "$pid" 2>/dev/null || true; }
    fi
    rm -f "$file"
}

# busybox_rootfs DIR: a minimal root filesystem in DIR from the host's static busybox (no registry needed):
# every applet linked into /bin, /usr/bin and /sbin pointing there, root and an unprivileged user 1000.
busybox_rootfs() {
    local rootfs=$1 applet
    rm -rf "$rootfs"
    mkdir -p "$rootfs/bin" "$rootfs/etc" "$rootfs/root" "$rootfs/tmp" "$rootfs/usr"
    cp "$(command -v busybox)" "$rootfs/bin/busybox"
    for applet in $("$rootfs/bin/busybox" --list); do
        [ "$applet" = busybox ] || ln -s busybox "$rootfs/bin/$applet"
    done
    ln -s ../bin "$rootfs/usr/bin"
    ln -s bin "$rootfs/sbin"
    printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/tmp:/bin/sh\n' > "$rootfs/etc/passwd"
    printf 'root:x:0:\nuser:x:1000:\n' > "$rootfs/etc/group"
    chmod 1777 "$rootfs/tmp"
}
