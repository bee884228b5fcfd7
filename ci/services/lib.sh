# Shared by the service scripts: where their state lives, and package installs that say what failed.
# Every service keeps its state (sockets, keys, pid files, logs) under $WC_SERVICES, removed by its `down`.
set -euo pipefail
WC_SERVICES="${WC_SERVICES:-/tmp/workspace-conformance-services}"
ENV_FILE="$WC_SERVICES/env"
mkdir -p "$WC_SERVICES"

say() { echo "services: $*" >&2; }

# apt_get_install PACKAGE...: install the packages (root only), after one `apt-get update` per set of services.
apt_get_install() {
    if [ "$(id -u)" != 0 ]; then say "need root to install $*"; return 1; fi
    if [ ! -e "$WC_SERVICES/.apt-updated" ]; then
        apt-get update -qq >/dev/null && touch "$WC_SERVICES/.apt-updated"
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# apt_install COMMAND PACKAGE...: install the packages unless COMMAND is already on PATH (root only).
apt_install() {
    local command=$1; shift
    command -v "$command" >/dev/null 2>&1 && return 0
    apt_get_install "$@"
}

# apt_install_missing COMMAND:PACKAGE...: one apt-get run for every package whose command is not on PATH, so
# services that then install nothing more can start side by side.
apt_install_missing() {
    local pair missing=()
    for pair in "$@"; do
        command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
    done
    [ "${#missing[@]}" = 0 ] || apt_get_install "${missing[@]}"
}

# export_var NAME VALUE: record a variable for the tests (the env file is sourced by ci/services/run-with); services
# starting at once take turns on a lock.
export_var() {
    (
        flock 9
        touch "$ENV_FILE"
        grep -v "^export $1=" "$ENV_FILE" > "$ENV_FILE.new" || true
        printf 'export %s=%q\n' "$1" "$2" >> "$ENV_FILE.new"
        mv "$ENV_FILE.new" "$ENV_FILE"
    ) 9>"$ENV_FILE.lock"
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

# unmount_under DIR: unmount every mount at or below DIR, deepest first (an engine killed mid-run leaves its
# overlay and bind mounts behind, and `rm -rf` then fails with "Device or resource busy").
unmount_under() {
    local dir mount
    dir=$(realpath -m "$1")
    awk -v dir="$dir" '$5 == dir || index($5, dir "/") == 1 { print $5 }' /proc/self/mountinfo | LC_ALL=C sort -r | while read -r mount; do
        umount "$mount" 2>/dev/null || umount -l "$mount" 2>/dev/null || say "cannot unmount $mount"
    done
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

# busybox_oci_layout DIR: the busybox root filesystem as a one-layer OCI image layout in DIR (oci-layout,
# index.json, blobs/sha256/...), for runtimes that boot a local image without a registry or a daemon.
busybox_oci_layout() {
    local layout=$1 rootfs blobs layer_digest layer_size config config_digest config_size manifest manifest_digest
    rm -rf "$layout"
    blobs="$layout/blobs/sha256"
    mkdir -p "$blobs"
    rootfs=$(mktemp -d "$layout.rootfs.XXXXXX")
    busybox_rootfs "$rootfs"
    tar -C "$rootfs" --numeric-owner -c . > "$layout/layer.tar"
    rm -rf "$rootfs"
    layer_digest=$(sha256sum "$layout/layer.tar" | cut -d' ' -f1)
    layer_size=$(stat -c %s "$layout/layer.tar")
    mv "$layout/layer.tar" "$blobs/$layer_digest"
    config=$(printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/bin:/bin"],"Cmd":["/bin/sh"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$layer_digest")
    config_digest=$(printf '%s' "$config" | sha256sum | cut -d' ' -f1)
    config_size=$(printf '%s' "$config" | wc -c)
    printf '%s' "$config" > "$blobs/$config_digest"
    manifest=$(printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
        "$config_digest" "$config_size" "$layer_digest" "$layer_size")
    manifest_digest=$(printf '%s' "$manifest" | sha256sum | cut -d' ' -f1)
    printf '%s' "$manifest" > "$blobs/$manifest_digest"
    printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"ci"}}]}' \
        "$manifest_digest" "$(printf '%s' "$manifest" | wc -c)" > "$layout/index.json"
    printf '{"imageLayoutVersion":"1.0.0"}' > "$layout/oci-layout"
}

# pip_extra MODULE EXTRA: install pydantic-ai-harness[EXTRA], at the harness version already installed, into the
# Python on PATH (the nox session's) unless MODULE imports there.
pip_extra() {
    local module=$1 extra=$2 version
    python -c "import $module" 2>/dev/null && return 0
    version=$(python -c 'import importlib.metadata as m; print(m.version("pydantic-ai-harness"))') \
        || { say "pydantic-ai-harness is not installed in $(command -v python)"; return 1; }
    if python -m pip --version >/dev/null 2>&1; then
        python -m pip install -q "pydantic-ai-harness[$extra]==$version" 2>&1 | grep -v '^WARNING: Location' >&2 || true
    else  # an environment uv built has no pip: nox's uv is on PATH after it
        uv pip install -q --python "$(command -v python)" "pydantic-ai-harness[$extra]==$version" >&2 || true
    fi
    python -c "import $module" || { say "could not install pydantic-ai-harness[$extra]"; return 1; }
}

# processes_under DIR: the pids of processes whose command line or executable names a path under DIR.
processes_under() {
    local dir=$1 pid
    for pid in $(ls /proc | grep -E '^[0-9]+$'); do
        [ "$pid" = "$$" ] && continue
        if { tr '\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null | grep -q -- "$dir/" \
            || readlink "/proc/$pid/exe" 2>/dev/null | grep -q -- "^$dir/"; then
            echo "$pid"
        fi
    done
}

# end_processes_under DIR NAME: TERM, then KILL after 10 s, every process working under DIR.
end_processes_under() {
    local dir=$1 name=$2 pids
    pids=$(processes_under "$dir")
    [ -z "$pids" ] && return 0
    say "ending $name processes left under $dir: $(echo $pids)"
    kill -TERM $pids 2>/dev/null || true
    for _ in $(seq 1 20); do [ -z "$(processes_under "$dir")" ] && return 0; sleep 0.5; done
    kill -KILL $(processes_under "$dir") 2>/dev/null || true
}
