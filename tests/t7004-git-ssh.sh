#!/bin/sh
# git over ssh: a real sshd on loopback, the user's ssh agent holding the
# key. Clone and push authenticate through the agent only; the host key must
# be in ~/.ssh/known_hosts.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"

SSHD=$(command -v sshd || echo /usr/sbin/sshd)
why=
for p in "$SSHD" ssh-agent ssh-add ssh-keygen; do
	command -v "$p" >/dev/null 2>&1 || why="$p is missing"
done
if [ -n "$why" ]; then
	say "SKIP: $why"
else
	test_set_prereq SSHD
fi
ME=$(id -un)

test_expect_success SSHD 'setup: sshd on loopback, an agent with the key' '
	mkdir -p "$HOME/.ssh" sshd &&
	ssh-keygen -q -t ed25519 -N "" -f sshd/host_key &&
	ssh-keygen -q -t ed25519 -N "" -f user_key &&
	cp user_key.pub sshd/authorized_keys &&
	port=$(python3 -c "import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); print(s.getsockname()[1])") &&
	echo "$port" >sshd/port &&
	cat >sshd/config <<-EOF &&
	Port $port
	ListenAddress 127.0.0.1
	HostKey $TRASH_DIRECTORY/sshd/host_key
	AuthorizedKeysFile $TRASH_DIRECTORY/sshd/authorized_keys
	PidFile $TRASH_DIRECTORY/sshd/pid
	StrictModes no
	UsePAM no
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	PermitRootLogin prohibit-password
	SetEnv PATH=$PATH
	EOF
	if [ "$(id -u)" = 0 ]; then mkdir -p /run/sshd; fi &&
	{ timeout 300 "$SSHD" -D -f "$TRASH_DIRECTORY/sshd/config" \
		-E "$TRASH_DIRECTORY/sshd/log" </dev/null & } &&
	test_wait_for 50 "test -s sshd/pid" &&
	echo "[127.0.0.1]:$port $(cut -d" " -f1,2 sshd/host_key.pub)" >"$HOME/.ssh/known_hosts" &&
	{ timeout 300 ssh-agent -D -a "$TRASH_DIRECTORY/agent.sock" >/dev/null 2>&1 </dev/null & } &&
	echo $! >agent.pid &&
	test_wait_for 50 "test -S agent.sock" &&
	SSH_AUTH_SOCK=$TRASH_DIRECTORY/agent.sock ssh-add -q user_key 2>/dev/null &&
	rm user_key &&
	git init -q -b main work &&
	(cd work && seq 1 5 >a.txt && git add . && git commit -q -m one) &&
	mkdir -p srv/o && git clone -q --bare work srv/o/proj.git
'
PORT=$(cat sshd/port 2>/dev/null)
URL=ssh://$ME@127.0.0.1:$PORT$TRASH_DIRECTORY/srv/o/proj.git
test_when_finished 'kill $(cat "$TRASH_DIRECTORY/sshd/pid") $(cat "$TRASH_DIRECTORY/agent.pid")'
SSH_AUTH_SOCK=$TRASH_DIRECTORY/agent.sock
export SSH_AUTH_SOCK

test_expect_success SSHD 'clone over ssh with the key from the agent' '
	git_tool import "$URL" ws1 >base &&
	test "$(cat base)" = "$(git -C work rev-parse HEAD)" &&
	test_cmp work/a.txt ws1/a.txt
'

test_expect_success SSHD 'holt pr pushes over ssh through the agent' '
	git_session s1 "$URL" main &&
	echo ssh >>"$(git_ws s1)/a.txt" &&
	{
		HOLT_GIT_TOKEN=api-only HOLT_GITHUB_API=http://127.0.0.1:1 test_expect_code 1 \
			holt pr -t s1 --title "over ssh" 2>err || { cat err; false; }
	} &&
	grep "could not reach" err &&
	! grep -i "unconfined" err &&
	git -C srv/o/proj.git log -1 --format=%s holt/s1 >subject &&
	echo "over ssh" >expect && test_cmp expect subject
'

test_expect_success SSHD 'without the agent, a clear failure' '
	SSH_AUTH_SOCK= test_must_fail git_tool import "$URL" ws2 2>err &&
	grep "clone of" err
'

test_expect_success SSHD 'an unknown host key is refused' '
	mv "$HOME/.ssh/known_hosts" kh.save &&
	test_must_fail git_tool import "$URL" ws3 2>err &&
	grep -i "hostkey\|host key\|known_hosts" err &&
	mv kh.save "$HOME/.ssh/known_hosts"
'

test_expect_success SSHD '--depth over ssh: a shallow clone through the agent, in batch mode' '
	(cd work && echo two >>a.txt && git commit -q -am two) &&
	git -C work push -q "$TRASH_DIRECTORY/srv/o/proj.git" main &&
	git_tool import "$URL" wsd -d 1 >base &&
	test "$(cat base)" = "$(git -C work rev-parse HEAD)" &&
	test -s wsd/.git/shallow &&
	git -C wsd rev-list --count HEAD >count &&
	echo 1 >expect && test_cmp expect count &&
	SSH_AUTH_SOCK= test_must_fail git_tool import "$URL" wsd2 -d 1 2>err &&
	grep "clone of .*Permission denied\|clone of .*Could not read from remote" err &&
	mv "$HOME/.ssh/known_hosts" kh.save &&
	test_must_fail git_tool import "$URL" wsd3 -d 1 2>err &&
	mv kh.save "$HOME/.ssh/known_hosts" &&
	grep -i "host key verification failed" err
'

test_done
