#!/usr/bin/env bash
# `boxlite.sh up`: install the BoxLite SDK (pydantic-ai-harness[boxlite]) and bubblewrap (BoxLite jails its VM
# engine with it), build the busybox test image as a local OCI layout (no registry), and boot one test box to
# record whether a BoxLite micro-VM boots here ($STATE/boot-probe.json, which the `boxlite` target's
# `missing()` reads). A VM that does not boot is recorded, not an error. `boxlite.sh down`: end every process
# left under its state (VM engines), delete the state, and check both are gone.
source "$(dirname "$0")/lib.sh"
STATE="$WC_SERVICES/boxlite"
# BoxLite's per-user runtime directory (its shims' sockets), outside $STATE.
RUNTIME_DIR="/tmp/bl-$(id -u)"

up() {
    pip_extra boxlite boxlite
    apt_install bwrap bubblewrap
    apt_install busybox busybox-static
    [ -e "$RUNTIME_DIR" ] || { mkdir -p "$STATE"; touch "$STATE/created-runtime-dir"; }
    mkdir -p "$STATE/tmp"
    busybox_oci_layout "$STATE/busybox-oci"
    # The probe boots one box in a BoxLite home under $STATE/tmp; the engines give up on a guest after 30 s.
    TMPDIR="$STATE/tmp" timeout 180 python -m workspace_conformance.targets.boot_probe boxlite \
        --rootfs "$STATE/busybox-oci" --record "$STATE/boot-probe.json" \
        || { say "the BoxLite boot probe did not finish"; return 1; }
    export_var WC_BOXLITE_ROOTFS "$STATE/busybox-oci"
}

down() {
    end_processes_under "$STATE" boxlite
    rm -rf "$STATE/tmp"
    if [ -e "$STATE/created-runtime-dir" ]; then rmdir "$RUNTIME_DIR" 2>/dev/null || true; fi
    rm -rf "$STATE"
    local left
    left=$(processes_under "$STATE")
    [ -z "$left" ] || { say "boxlite processes still running: $left"; return 1; }
    say "boxlite state removed"
}

"${1:?usage: boxlite.sh up|down}"
