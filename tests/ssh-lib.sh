# tests/ssh-lib.sh: a real sshd on a loopback port, for the ssh provider's
# tests and bench (DESIGN 17). After ssh_setup:
#	SSH_HOST	the Host of SSH_DIR/ssh_config ("holt-remote")
#	SSH_DIR		keys, configs, logs
#	REMOTE_HOME	the HOLT_HOME of the holt "on the host" (this build's)
# and holt.conf says ssh_command (ssh -F SSH_DIR/ssh_config) and ssh_holt.
# A throwaway host key and user key; nothing of the user's ~/.ssh is used.
# ssh_setup returns 1 (the caller skips) when sshd cannot run here.

ssh_master_pid() {
	ssh -F "$SSH_DIR/ssh_config" -o ControlPath="$1" -O check \
		"$SSH_HOST" 2>&1 | sed -n 's/.*(pid=\([0-9]*\)).*/\1/p'
}

ssh_setup() {
	SSHD=/usr/sbin/sshd
	SSH_HOST=holt-remote
	SSH_DIR=$TRASH_DIRECTORY/ssh
	command -v ssh >/dev/null && command -v ssh-keygen >/dev/null &&
		test -x "$SSHD" && test -x /usr/bin/python3 || return 1
	# sshd run by root wants its privilege separation directory.
	if [ "$(id -u)" = 0 ] && ! test -d /run/sshd; then
		mkdir -p /run/sshd 2>/dev/null || return 1
		chmod 755 /run/sshd
	fi
	mkdir -p "$SSH_DIR" && chmod 700 "$SSH_DIR" &&
	ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/host_key" &&
	ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/user_key" &&
	cp "$SSH_DIR/user_key.pub" "$SSH_DIR/authorized_keys" || return 1
	SSH_PORT=$(/usr/bin/python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$SSH_DIR/sshd_config" <<-CONF
	Port $SSH_PORT
	ListenAddress 127.0.0.1
	HostKey $SSH_DIR/host_key
	AuthorizedKeysFile $SSH_DIR/authorized_keys
	PidFile $SSH_DIR/sshd.pid
	StrictModes no
	UsePAM no
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	PermitRootLogin prohibit-password
	AllowTcpForwarding no
	MaxSessions 100
	MaxStartups 100
	LogLevel ERROR
	CONF
	echo "[127.0.0.1]:$SSH_PORT $(cat "$SSH_DIR/host_key.pub")" \
		>"$SSH_DIR/known_hosts"
	cat >"$SSH_DIR/ssh_config" <<-CONF
	Host $SSH_HOST
		HostName 127.0.0.1
		Port $SSH_PORT
		User $(id -un)
		IdentityFile $SSH_DIR/user_key
		IdentitiesOnly yes
		UserKnownHostsFile $SSH_DIR/known_hosts
		StrictHostKeyChecking yes
		GlobalKnownHostsFile /dev/null
	CONF
	ssh_sshd_start || return 1
	n_=0
	until ssh -F "$SSH_DIR/ssh_config" -o BatchMode=yes "$SSH_HOST" true \
	    2>/dev/null; do
		n_=$((n_ + 1))
		[ $n_ -lt 100 ] || { ssh_teardown; return 1; }
		sleep 0.1
	done
	REMOTE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/holt-r.XXXXXX") || return 1
	mkdir -p "$HOLT_HOME/config"
	cat >>"$HOLT_HOME/config/holt.conf" <<-CONF
	ssh_command = ssh -F $SSH_DIR/ssh_config
	ssh_holt = env HOLT_HOME=$REMOTE_HOME $HOLT_BUILD_DIR/holt
	CONF
	export SSH_HOST SSH_DIR REMOTE_HOME
	return 0
}

# The remote's holt, as the host's user would run it.
remote_holt() {
	HOLT_HOME=$REMOTE_HOME "$HOLT_BUILD_DIR/holt" "$@"
}

ssh_sshd_start() {
	"$SSHD" -f "$SSH_DIR/sshd_config" -E "$SSH_DIR/sshd.log"
}

ssh_sshd_stop() {
	test -f "$SSH_DIR/sshd.pid" && kill "$(cat "$SSH_DIR/sshd.pid")" \
		2>/dev/null
	rm -f "$SSH_DIR/sshd.pid"
}

# Every ControlMaster of this HOLT_HOME (holt's run directory) ends.
ssh_masters_kill() {
	for s_ in "$HOLT_HOME"/run/ssh-*; do
		test -S "$s_" || continue
		p_=$(ssh_master_pid "$s_")
		test -n "$p_" && kill -9 "$p_" 2>/dev/null
		rm -f "$s_"
	done
	return 0
}

ssh_teardown() {
	if test -n "${REMOTE_HOME:-}" && test -d "$REMOTE_HOME"; then
		for d_ in "$REMOTE_HOME"/data/sandboxes/sbx-*; do
			test -d "$d_" && remote_holt sandbox rm "${d_##*/}"
		done
		rm -rf "$REMOTE_HOME"
	fi
	ssh_masters_kill
	ssh_sshd_stop
}
