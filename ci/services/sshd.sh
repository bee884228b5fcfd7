#!/usr/bin/env bash
# `sshd.sh up`: install OpenSSH, create the unprivileged user `wcssh` if missing, generate a host key and a
# client key, and start sshd on 127.0.0.1 only. It writes an ssh client config with the alias `wc-sshd`
# (and WC_SSH_CONFIG / WC_SSH_HOST to $WC_SERVICES/env). `sshd.sh down`: stop sshd, end the user's
# leftover processes, delete the keys, and remove the user if `up` created it.
source "$(dirname "$0")/lib.sh"
STATE="$WC_SERVICES/sshd"
USER_NAME=wcssh
PORT="${WC_SSH_PORT:-2222}"

up() {
    apt_install sshd openssh-server
    apt_install ssh openssh-client
    mkdir -p "$STATE" /run/sshd
    chmod 700 "$STATE"
    if ! id "$USER_NAME" >/dev/null 2>&1; then
        useradd --create-home --shell /bin/sh "$USER_NAME"
        touch "$STATE/created-user"
    fi
    # useradd leaves the account locked ("!"), which sshd refuses even for keys; "*" means "no password".
    usermod --password '*' "$USER_NAME"
    local home
    home=$(getent passwd "$USER_NAME" | cut -d: -f6)
    [ -e "$STATE/host_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$STATE/host_key"
    [ -e "$STATE/client_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$STATE/client_key"
    install -d -m 700 -o "$USER_NAME" -g "$USER_NAME" "$home/.ssh"
    install -m 600 -o "$USER_NAME" -g "$USER_NAME" "$STATE/client_key.pub" "$home/.ssh/authorized_keys"
    cat > "$STATE/sshd_config" <<CONFIG
ListenAddress 127.0.0.1
Port $PORT
HostKey $STATE/host_key
PidFile $STATE/sshd.pid
AllowUsers $USER_NAME
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
UsePAM no
PermitRootLogin no
MaxSessions 64
MaxStartups 64:30:128
CONFIG
    printf '[127.0.0.1]:%s %s\n' "$PORT" "$(cut -d' ' -f1,2 "$STATE/host_key.pub")" > "$STATE/known_hosts"
    cat > "$STATE/ssh_config" <<CONFIG
Host wc-sshd
    HostName 127.0.0.1
    Port $PORT
    User $USER_NAME
    IdentityFile $STATE/client_key
    IdentitiesOnly yes
    UserKnownHostsFile $STATE/known_hosts
    StrictHostKeyChecking yes
CONFIG
    if ! [ -s "$STATE/sshd.pid" ] || ! kill -0 "$(cat "$STATE/sshd.pid")" 2>/dev/null; then
        "$(command -v sshd)" -f "$STATE/sshd_config" -E "$STATE/sshd.log"
    fi
    for _ in $(seq 1 40); do
        ssh -F "$STATE/ssh_config" -o BatchMode=yes wc-sshd true 2>/dev/null && break
        sleep 0.25
    done
    ssh -F "$STATE/ssh_config" -o BatchMode=yes wc-sshd true || { say "sshd did not accept the key:"; tail -5 "$STATE/sshd.log" >&2; return 1; }
    export_var WC_SSH_CONFIG "$STATE/ssh_config"
    export_var WC_SSH_HOST wc-sshd
    say "sshd ready on 127.0.0.1:$PORT for $USER_NAME (ssh -F $STATE/ssh_config wc-sshd)"
}

down() {
    stop_pidfile "$STATE/sshd.pid" sshd
    if id "$USER_NAME" >/dev/null 2>&1; then
        pkill -KILL -u "$USER_NAME" 2>/dev/null || true
        if [ -e "$STATE/created-user" ]; then
            userdel --remove "$USER_NAME" 2>/dev/null || true
        fi
    fi
    rm -rf "$STATE"
    say "sshd stopped"
}

"${1:?usage: sshd.sh up|down}"
