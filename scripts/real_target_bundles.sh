#!/usr/bin/env bash
# Bundles of the real targets CI certifies, for submissions/: the backend suite with CI's arguments, two at a time.
#
#   bash ci/services/up.sh                      # as root on Debian, from the targets environment (nox -s targets)
#   bash scripts/real_target_bundles.sh OUT     # then: python scripts/generate_submissions.py --from OUT
#
# Each bundle's directory names its submission (docker, gvisor, podman, ssh, bubblewrap, e2b-local).
set -euo pipefail
out=$(realpath -m "${1:?usage: real_target_bundles.sh OUT_DIR}")
set -a; . "${WC_SERVICES:-/tmp/workspace-conformance-services}/env"; set +a
slow=(-n 2 --conformance-profile ci --conformance-time-scale 3)
run() {
    local name=$1; shift
    rm -rf "${out:?}/$name"
    workspace-conformance certify "$@" "${slow[@]}" --bundle "$out/$name" > "$out/$name.log" 2>&1 || true
    echo "$name: $(tail -n 1 "$out/$name.log")"
}
mkdir -p "$out"
(
    run docker docker --image "$WC_DOCKER_IMAGE" --user 1000:1000 --anyio-backend asyncio
    run gvisor docker --image "$WC_DOCKER_IMAGE" --user 1000:1000 --runtime runsc --anyio-backend asyncio
    run ssh ssh --host "$WC_SSH_HOST" --ssh-config "$WC_SSH_CONFIG" --anyio-backend asyncio
) &
(
    run podman podman --image "$WC_PODMAN_IMAGE" --user 1000:1000 --anyio-backend asyncio
    run bubblewrap bubblewrap
    run e2b-local e2b-local --anyio-backend asyncio
) &
wait
