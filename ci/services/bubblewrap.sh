#!/usr/bin/env bash
# `bubblewrap.sh up`: install bwrap and check it can start a sandbox here. `down`: nothing runs between calls.
source "$(dirname "$0")/lib.sh"

up() {
    apt_install bwrap bubblewrap
    bwrap --unshare-user --ro-bind / / --dev /dev --proc /proc -- true || { say "bwrap cannot start a sandbox"; return 1; }
    say "bubblewrap ready ($(bwrap --version))"
}

down() { :; }

"${1:?usage: bubblewrap.sh up|down}"
