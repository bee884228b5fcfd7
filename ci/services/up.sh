#!/usr/bin/env bash
# Start every service the real-target certifications need (Docker engine with gVisor, Podman, sshd, bubblewrap,
# and the BoxLite and smolvm boot probes), on loopback only or none.
# Variables for the tests are written to $WC_SERVICES/env. Stop them all with ci/services/down.sh.
set -euo pipefail
here="$(dirname "$0")"
for service in docker podman sshd bubblewrap boxlite smol; do
    bash "$here/$service.sh" up
done
