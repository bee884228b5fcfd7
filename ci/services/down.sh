#!/usr/bin/env bash
# Stop every service up.sh started, then check that none of their processes or state is left.
set -uo pipefail
here="$(dirname "$0")"
source "$here/lib.sh"
status=0
for service in smol boxlite bubblewrap sshd podman docker; do
    bash "$here/$service.sh" down || status=1
done
left=$(pgrep -af -- "$WC_SERVICES" || true)
if [ -n "$left" ]; then say "left running after down:"; echo "$left" >&2; status=1; fi
rm -f "$ENV_FILE" "$ENV_FILE.lock" "$WC_SERVICES/.apt-updated" "$WC_SERVICES/.install.lock"
rmdir "$WC_SERVICES" 2>/dev/null || { say "state left in $WC_SERVICES:"; ls -A "$WC_SERVICES" >&2; status=1; }
[ "$status" = 0 ] && say "all services stopped; nothing left in $WC_SERVICES"
exit "$status"
