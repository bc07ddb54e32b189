#!/bin/sh
# holt sandbox watch ID: a human watches, in a real terminal (tmux), the
# files, the live output and the diff of a sandbox an E2B program drives.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/e2b-lib.sh"

export TERM=xterm-256color
test_when_finished "e2b_stop; $TMUX_W kill-server"

test_expect_success 'watch --help; an unknown sandbox is an error' '
	holt sandbox watch --help >out &&
	grep "^usage: holt sandbox watch ID" out &&
	test_expect_code 2 holt sandbox watch sbx-000000000000 2>err &&
	grep "sbx-000000000000" err
'

test_expect_success E2B,TMUX 'the tree and the output follow what the program does' '
	e2b_serve &&
	e2b_js create >id &&
	$TMUX_W new-session -d -s w -x 120 -y 30 \
		"$HOLT_BUILD_DIR/holt sandbox watch $(cat id); echo exit=\$?; sleep 30" &&
	screen_wait "watch $(cat id) | running" &&
	screen_wait "package.json" &&
	e2b_js run "$(cat id)" "echo hi >seen.txt; for i in 1 2 3; do echo tick \$i; sleep 0.3; done; echo oops >&2" >out &&
	screen_wait "seen.txt" &&
	screen_wait "tick 3" &&
	screen_wait "oops" &&
	screen_wait "exit 0 --" &&
	$TMUX_W capture-pane -p -t w >screen &&
	grep -n "tick 1" screen >t1 &&
	grep -n "tick 2" screen >t2 &&
	test "$(cut -d: -f1 t1)" -lt "$(cut -d: -f1 t2)"
'

test_expect_success E2B,TMUX 'd shows the diff of each repository, run by git in the sandbox' '
	e2b_js run "$(cat id)" "git init -q . && git add package.json &&
		git -c user.name=t -c user.email=t@example.org commit -qm seed &&
		echo changed-line >package.json && echo new-file >fresh.txt" &&
	$TMUX_W send-keys -t w d &&
	screen_wait "diff of /home/user/repo --" &&
	screen_wait "│+changed-line" &&
	screen_wait "│-{.name.:.seed." &&
	screen_wait "│+new-file"
'

test_expect_success E2B,TMUX 'a paused sandbox is shown paused, then running again' '
	holt sandbox pause "$(cat id)" &&
	screen_wait "| paused |" &&
	holt sandbox resume "$(cat id)" &&
	screen_wait "| running |" &&
	$TMUX_W send-keys -t w q &&
	screen_wait "^exit=0"
'

test_done
