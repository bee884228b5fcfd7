#!/usr/bin/env bash
# Install the Debian packages of every service up.sh starts, in one apt-get run, and nothing else (root only).
# up.sh runs it first; .ci/run also starts it in the background at the very beginning, so on a fresh machine the
# packages arrive while the tests run. Two runs at once take turns on a lock; the second finds nothing to do.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
exec 8>"$WC_SERVICES/.install.lock"
flock 8
apt_install_missing dockerd:docker.io runsc:runsc podman:podman catatonit:catatonit busybox:busybox-static \
    bwrap:bubblewrap sshd:openssh-server ssh:openssh-client
