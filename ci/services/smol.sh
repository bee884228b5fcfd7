#!/usr/bin/env bash
# `smol.sh up`: install the smolvm SDK (pydantic-ai-harness[smol]), keep smolvm's data and cache under $STATE
# (XDG_DATA_HOME, XDG_CACHE_HOME in $WC_SERVICES/env), and boot one test VM from smolvm's bundled Alpine root
# filesystem (no pull) to record whether a smolvm micro-VM boots here ($STATE/boot-probe.json, which the `smol`
# target's `missing()` reads). A VM that does not boot is recorded, not an error. As root, smolvm would run
# each VM as its own unprivileged uid, which cannot open a root-only /dev/kvm, so SMOLVM_VM_UID_DROP=off.
# `smol.sh down`: end every process left under $STATE (VM engines), delete it, and check both are gone.
source "$(dirname "$0")/lib.sh"
STATE="$WC_SERVICES/smol"

up() {
    pip_extra smol smol
    mkdir -p "$STATE/data" "$STATE/cache" "$STATE/tmp"
    export XDG_DATA_HOME="$STATE/data" XDG_CACHE_HOME="$STATE/cache"
    [ "$(id -u)" != 0 ] || export SMOLVM_VM_UID_DROP=off
    TMPDIR="$STATE/tmp" timeout 180 python -m workspace_conformance.targets.boot_probe smol \
        --record "$STATE/boot-probe.json" \
        || { say "the smolvm boot probe did not finish"; return 1; }
    export_var XDG_DATA_HOME "$XDG_DATA_HOME"
    export_var XDG_CACHE_HOME "$XDG_CACHE_HOME"
    [ "$(id -u)" != 0 ] || export_var SMOLVM_VM_UID_DROP off
}

down() {
    end_processes_under "$STATE" smol
    rm -rf "$STATE"
    local left
    left=$(processes_under "$STATE")
    [ -z "$left" ] || { say "smol processes still running: $left"; return 1; }
    say "smol state removed"
}

"${1:?usage: smol.sh up|down}"
