#!/usr/bin/env bash
# Start every service the real-target certifications need (Docker engine with gVisor, Podman, sshd, bubblewrap,
# and the BoxLite and smolvm boot probes), on loopback only or none.
# Variables for the tests are written to $WC_SERVICES/env. Stop them all with ci/services/down.sh.
# The packages go in with one apt-get run (install.sh); then the boot probes, which mostly wait for a VM to boot or
# time out, run in the background while the engines and sshd start one after another.
set -euo pipefail
here="$(dirname "$0")"
source "$here/lib.sh"
bash "$here/install.sh"
probes=()
for service in boxlite smol; do
    bash "$here/$service.sh" up &
    probes+=("$!:$service")
done
status=0
for service in docker podman sshd bubblewrap; do
    bash "$here/$service.sh" up || { status=1; break; }
done
for probe in "${probes[@]}"; do
    wait "${probe%%:*}" || { say "${probe#*:} did not start"; status=1; }
done
exit "$status"
