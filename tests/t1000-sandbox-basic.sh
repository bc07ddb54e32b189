#!/bin/sh
# holt sandbox: create, ls, exec, put/get, errors. Real bubblewrap sandboxes.
. "$(dirname "$0")/lib.sh"

test_sandbox_script

test_expect_success 'every subcommand answers --help' '
	for s in create ls exec sh put get pause resume stop start rm \
		service forward; do
		holt sandbox $s --help >out || { echo "$s --help failed"; exit 1; }
		grep "^usage: holt sandbox $s" out || { cat out; exit 1; }
	done &&
	holt sandbox --help >out &&
	grep "forward" out
'

test_expect_success 'an unknown subcommand is a usage error' '
	test_expect_code 2 holt sandbox frob 2>err &&
	grep "unknown subcommand .frob." err
'

test_expect_success 'create prints an id and the sandbox runs' '
	holt sandbox create --name one >id &&
	grep -E "^sbx-[0-9a-f]{12}$" id &&
	id=$(cat id) &&
	test -f "$HOLT_HOME/data/sandboxes/$id/meta.json" &&
	test -d "$HOLT_HOME/data/sandboxes/$id/workspace" &&
	test -d "$HOLT_HOME/data/sandboxes/$id/home" &&
	test -S "$HOLT_HOME/data/sandboxes/$id/run/envd.sock" &&
	holt sandbox ls >ls &&
	grep "^$id  *one  *running " ls
'
id=$(cat id 2>/dev/null)

test_expect_success 'the control socket is private to its owner' '
	stat -c %a "$HOLT_HOME/data/sandboxes/$id/run/envd.sock" >mode &&
	echo 600 >expect &&
	test_cmp expect mode
'

test_expect_success 'ls --json has every field' '
	holt sandbox ls --json >ls.json &&
	python3 -c "
import json, sys
l = json.load(open(\"ls.json\"))
s = [x for x in l if x[\"id\"] == \"$id\"][0]
for k in (\"id\", \"name\", \"state\", \"created\", \"last_used\", \"disk_bytes\"):
    assert k in s, k
assert s[\"state\"] == \"running\" and s[\"name\"] == \"one\"
assert s[\"disk_bytes\"] > 0
"
'

test_expect_success 'a name is unique' '
	test_expect_code 2 holt sandbox create --name one 2>err &&
	grep "name .one.: already used by sandbox .$id." err
'

test_expect_success 'exec by id and by name; stdout and stderr apart; status' '
	test_expect_code 3 holt sandbox exec "$id" -- \
		sh -c "echo out; echo err >&2; exit 3" >out 2>err &&
	echo out >expect && test_cmp expect out &&
	echo err >expect && test_cmp expect err &&
	holt sandbox exec one -- echo by-name >out &&
	echo by-name >expect && test_cmp expect out
'

test_expect_success 'options may come before or after the id' '
	holt sandbox exec --cwd /tmp one --env A=1 --env B=two -- \
		sh -c "pwd; echo \$A \$B" >out &&
	printf "/tmp\n1 two\n" >expect &&
	test_cmp expect out
'

test_expect_success 'the environment is fixed, nothing from the host' '
	HOLT_LEAK=secret-value holt sandbox exec one -- env >env &&
	! grep secret-value env &&
	grep "^HOME=/home/user$" env &&
	grep "^USER=user$" env &&
	grep "^PATH=" env &&
	holt sandbox exec one -- id -u >uid &&
	echo 1000 >expect && test_cmp expect uid
'

test_expect_success 'stdin reaches the command' '
	printf "line1\nline2\n" | holt sandbox exec one -- wc -l >out &&
	echo 2 >expect && test_cmp expect out
'

test_expect_success 'a closed stdout ends the command, as SIGPIPE would' '
	{ timeout 20 "$HOLT_BUILD_DIR/holt" -L "$HOLT_SOCKET" sandbox exec one -- yes; echo $? >rc; } | head -n 2 >out &&
	printf "y\ny\n" >expect && test_cmp expect out &&
	echo 141 >expect && test_cmp expect rc &&
	holt sandbox exec one -- ps -eo comm >ps &&
	! grep -x yes ps
'

test_expect_success 'a missing program exits 127' '
	test_expect_code 127 holt sandbox exec one -- no-such-program 2>err &&
	grep "no-such-program" err
'

test_expect_success 'a file written in one exec is there in the next' '
	holt sandbox exec one -- sh -c "echo kept >/workspace/f; echo home >~/h" &&
	holt sandbox exec one -- cat /workspace/f /home/user/h >out &&
	printf "kept\nhome\n" >expect && test_cmp expect out &&
	test -f "$HOLT_HOME/data/sandboxes/$id/workspace/f"
'

test_expect_success 'timeout: partial output, grandchildren killed, exit 124' '
	m=holt-t1000-grandchild-$$ &&
	test_expect_code 124 holt sandbox exec one --timeout 1 -- sh -c \
		"echo started; (sh -c \"sleep 300; :\" $m-a &) ;
		sh -c \"sleep 300; :\" $m-b & sleep 300" >out 2>err &&
	echo started >expect && test_cmp expect out &&
	grep "timed out" err &&
	holt sandbox exec one -- ps -eo args >ps &&
	! grep "$m" ps &&
	! grep "sleep 300" ps
'

test_expect_success 'put and get copy files both ways, keeping the mode' '
	printf "#!/bin/sh\necho run\n" >script && chmod 755 script &&
	holt sandbox put one script deep/er/script &&
	holt sandbox exec one -- /workspace/deep/er/script >out &&
	echo run >expect && test_cmp expect out &&
	holt sandbox get one /workspace/deep/er/script back &&
	test_cmp script back &&
	head -c 300000 /dev/urandom >bin &&
	holt sandbox put one bin /tmp/bin &&
	holt sandbox get one /tmp/bin bin2 &&
	cmp bin bin2 &&
	holt sandbox get one /tmp/bin - >bin3 && cmp bin bin3
'

test_expect_success 'a large file goes over in pieces' '
	head -c 9000000 /dev/urandom >big &&
	holt sandbox put one big big &&
	holt sandbox get one big big2 &&
	cmp big big2
'

test_expect_success 'put/get stay inside the sandbox: .., absolute, symlinks' '
	echo secret >"$TRASH_DIRECTORY/host-file" &&
	test_must_fail holt sandbox get one "../../../../../../..$TRASH_DIRECTORY/host-file" x 2>err &&
	grep "outside" err &&
	test_must_fail holt sandbox get one /etc/passwd x 2>err &&
	grep "outside /workspace" err &&
	holt sandbox exec one -- ln -s /etc /workspace/etc-link &&
	test_must_fail holt sandbox get one etc-link/passwd x &&
	holt sandbox exec one -- ln -s /proc/1/root /workspace/root-link &&
	test_must_fail holt sandbox put one script root-link/tmp/evil &&
	test ! -e x
'

test_expect_success 'an unknown sandbox: exit 2, and none is created' '
	ls "$HOLT_HOME/data/sandboxes" >before &&
	for s in exec; do
		test_expect_code 2 holt sandbox exec sbx-000000000000 -- true 2>err &&
		grep "sbx-000000000000.: no such sandbox" err || return 1
	done &&
	test_expect_code 2 holt sandbox exec nosuchname -- true &&
	test_expect_code 2 holt sandbox start nosuchname &&
	test_expect_code 2 holt sandbox rm sbx-000000000000 &&
	test_expect_code 2 holt sandbox get nosuchname a b &&
	ls "$HOLT_HOME/data/sandboxes" >after &&
	test_cmp before after
'

test_expect_success 'a corrupt meta.json gives an error naming the file' '
	holt sandbox create >id2 &&
	id2=$(cat id2) &&
	holt sandbox stop "$id2" &&
	echo "{ not json" >"$HOLT_HOME/data/sandboxes/$id2/meta.json" &&
	test_must_fail holt sandbox start "$id2" 2>err &&
	grep "data/sandboxes/$id2/meta.json: corrupt" err &&
	holt sandbox ls >ls 2>err &&
	grep "meta.json" err &&
	rm -rf "$HOLT_HOME/data/sandboxes/$id2"
'

test_expect_success 'rm deletes the sandbox' '
	holt sandbox create --name gone >id3 &&
	id3=$(cat id3) &&
	holt sandbox rm gone &&
	test ! -e "$HOLT_HOME/data/sandboxes/$id3" &&
	test_expect_code 2 holt sandbox exec "$id3" -- true
'

test_done
