#!/bin/sh
# The screen in the terminals people run it in: inside GNU screen (itself
# in a tmux pane, so the test can read it) and over a real ssh connection
# to a loopback sshd started here. Each draws, follows a resize, detaches,
# and leaves the terminal as it found it.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

WS=$TRASH_DIRECTORY/ws
ATTACH="$HOLT attach -t s"

# fits NAME COLS: the panes' top border ends in the last column.
fits() {
	tui_screen "$1" >fits.screen &&
	python3 - "$2" fits.screen <<-\PY
	import sys
	line = open(sys.argv[2]).read().split("\n")[1].rstrip()
	sys.exit(0 if len(line) == int(sys.argv[1]) and line.endswith("┐")
	    else "%d cells, want %s: %r" % (len(line), sys.argv[1], line))
	PY
}

# inner CMD: what runs inside screen or ssh: the screen, then its exit
# status and whether the terminal is sane again, in files.
# follows_resize W FIT TEXT SMALL BIG (sizes COLSxROWS): at FIT the screen
# fills window W and shows TEXT, at SMALL it says it is too small, at BIG it
# draws again.
follows_resize() {
	$TUI_TMUX resize-window -t "$1" -x "${2%x*}" -y "${2#*x}" &&
	test_wait_for 50 "fits $1 ${2%x*}" &&
	tui_wait "$1" "$3" &&
	$TUI_TMUX resize-window -t "$1" -x "${4%x*}" -y "${4#*x}" &&
	tui_wait "$1" "$4, need 80x24" &&
	$TUI_TMUX resize-window -t "$1" -x "${5%x*}" -y "${5#*x}" &&
	tui_gone "$1" "terminal too small" &&
	test_wait_for 50 "fits $1 ${5%x*}"
}

# detached_sane NAME: after C-b d, holt attach (run by inner NAME) exited 0
# and left its terminal in canonical mode with echo.
detached_sane() {
	test_wait_for 50 "test -s $1.stty" &&
	test "$(cat "$1.exit")" = 0 &&
	tr " " "\n" <"$1.stty" | grep -qx icanon &&
	tr " " "\n" <"$1.stty" | grep -qx echo
}

inner() {
	echo "cd '$TRASH_DIRECTORY' && LC_ALL=C.UTF-8 HOLT_HOME='$HOLT_HOME' $ATTACH;" \
		"echo \$? >$1.exit; stty -a >$1.stty"
}

test_expect_success TMUX 'setup: a workspace and a session' '
	mkdir -p "$WS/src" &&
	echo "int x;" >"$WS/src/parser.c" &&
	echo notes >"$WS/notes.txt" &&
	cat >script.json <<-JSON &&
	{ "session": { "name": "s", "state": "idle", "sandbox_state": "running",
	    "model": "m", "mode": "auto", "step": 1, "steps_cap": 25,
	    "pending": [], "workspace": "$WS" },
	  "events": [ { "type": "user.message", "text": "hello from far away" },
	    { "type": "assistant.message", "text": "the answer is here", "tool_calls": [] } ] }
	JSON
	fake_start script.json &&
	# holt attach looks for the session before it asks the server.
	mkdir -p "$HOLT_HOME/data/sessions/s" &&
	echo "{}" >"$HOLT_HOME/data/sessions/s/session.json"
'

if command -v screen >/dev/null; then
	test_set_prereq SCREEN
else
	say "skip GNU screen: the screen package is not installed"
fi

test_expect_success TMUX,SCREEN 'inside GNU screen the screen draws' '
	mkdir -m 700 screens &&
	printf "startup_message off\nvbell off\n" >screenrc &&
	TUI_CMD="SCREENDIR=$TRASH_DIRECTORY/screens screen -c screenrc -S hs sh -c \"$(inner screen)\"" &&
	tui_start a &&
	tui_wait a "holt │ s │ sbx running" 50 &&
	tui_wait a "the answer is here" &&
	tui_wait a "notes.txt" &&
	fits a 200
'

test_expect_success TMUX,SCREEN 'inside GNU screen it follows a resize' '
	follows_resize a 120x40 "the answer is here" 60x20 160x50
'

test_expect_success TMUX,SCREEN 'inside GNU screen C-b d detaches; both terminals are sane' '
	tui_keys a C-b d &&
	detached_sane screen &&
	tui_wait a "screen is terminating" &&
	tui_wait a "tty=sane" &&
	sent_wait "type=detach" &&
	$TUI_TMUX kill-session -t a
'

# A loopback sshd of our own: host key, authorized key and config in the
# trash directory, on a free port, for root (sshd needs root to log in).
if [ "$(id -u)" != 0 ]; then
	say "skip ssh: sshd can only log in other sessions as root"
elif ! test -x /usr/sbin/sshd || ! command -v ssh >/dev/null; then
	say "skip ssh: sshd or ssh is not installed (openssh-server, openssh-client)"
else
	test_set_prereq SSHD
fi

test_expect_success TMUX,SSHD 'setup: a loopback sshd' '
	ssh-keygen -q -t ed25519 -N "" -f hostkey &&
	ssh-keygen -q -t ed25519 -N "" -f id &&
	cp id.pub authorized_keys &&
	port=$(python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	echo "$port" >port &&
	cat >sshd_config <<-EOF &&
	ListenAddress 127.0.0.1
	Port $port
	HostKey $TRASH_DIRECTORY/hostkey
	AuthorizedKeysFile $TRASH_DIRECTORY/authorized_keys
	PidFile $TRASH_DIRECTORY/sshd.pid
	PermitRootLogin prohibit-password
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	UsePAM no
	StrictModes no
	PrintMotd no
	PrintLastLog no
	EOF
	mkdir -p /run/sshd &&
	/usr/sbin/sshd -f "$TRASH_DIRECTORY/sshd_config" -E "$TRASH_DIRECTORY/sshd.log" &&
	test_wait_for 50 "test -s sshd.pid" &&
	test_wait_for 50 "ssh -F /dev/null -p $port -i id -o BatchMode=yes \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o LogLevel=ERROR -o ConnectTimeout=2 root@127.0.0.1 true"
'
test_when_finished 'test -s "$TRASH_DIRECTORY/sshd.pid" && kill "$(cat "$TRASH_DIRECTORY/sshd.pid")"'

test_expect_success TMUX,SSHD 'over ssh the screen draws' '
	TUI_CMD="ssh -tt -F /dev/null -p $(cat port) -i id -o BatchMode=yes \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o LogLevel=ERROR root@127.0.0.1 \"$(inner ssh)\"" &&
	tui_start b &&
	tui_wait b "holt │ s │ sbx running" 100 &&
	tui_wait b "the answer is here" &&
	tui_wait b "notes.txt" &&
	fits b 200
'

test_expect_success TMUX,SSHD 'over ssh it follows a resize' '
	follows_resize b 100x30 "hello from far away" 70x20 180x50
'

test_expect_success TMUX,SSHD 'over ssh C-b d detaches; both terminals are sane' '
	tui_keys b C-b d &&
	detached_sane ssh &&
	tui_wait b "detached (from session s)" &&
	tui_wait b "exit=0" &&
	tui_wait b "tty=sane"
'

test_done
