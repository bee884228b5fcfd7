#!/usr/bin/env bash
# Start every service the real-target certifications need (Docker engine, sshd, bubblewrap), on loopback only.
# Variables for the tests are written to $WC_SERVICES/env. Stop them all with ci/services/down.sh.
set -euo pipefail
here="$(dirname "$0")"
for service in docker sshd bubblewrap; do
    bash "$here/$service.sh" up
done
