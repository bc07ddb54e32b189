#!/bin/sh
# A sandbox made by root where no pids cgroup can hold it runs as a host
# uid of its own (RLIMIT_NPROC binds every user but root). What holt does
# in its workspace from the host, as root (the clone, a commit, a revert),
# must stay that uid's, or the sandbox's user could not change it.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"

if ! test_have_prereq ROOT,BWRAP; then
	skip_all='needs root and bubblewrap'
	test_done
fi
HOLT_SANDBOX_CGROUPS=0
export HOLT_SANDBOX_CGROUPS

test_expect_success 'a repository to start from' '
	git init -q -b main repo &&
	mkdir repo/src &&
	echo one >repo/src/a.txt &&
	echo keep >repo/b.txt &&
	git -C repo add . &&
	git -C repo commit -q -m first
'

test_expect_success 'holt new --repo: a sandbox with a uid of its own' '
	holt new -d -s s --model script:/dev/null --repo "$PWD/repo" >name &&
	sbx=$(json_q "print(d[\"sandbox\"])" \
		<"$HOLT_HOME/data/sessions/s/session.json") &&
	echo "$sbx" >sbx &&
	meta=$HOLT_HOME/data/sandboxes/$sbx/meta.json &&
	json_q "print(d[\"host_uid\"])" <"$meta" >uid &&
	test "$(cat uid)" -gt 65535
'
sbx=$(cat sbx 2>/dev/null)
hu=$(cat uid 2>/dev/null)
ws=$HOLT_HOME/data/sandboxes/$sbx/workspace

# Entries of the workspace not owned by the sandbox's uid.
not_theirs() {
	find "$ws" ! -uid "$hu" -printf "%u %p\n" | head
}

test_expect_success 'the clone is the sandbox uid s, all of it' '
	not_theirs >wrong &&
	{ cat wrong; test ! -s wrong; }
'

test_expect_success 'the sandbox user changes and commits in it' '
	holt sandbox exec "$sbx" -- sh -c "echo two >>src/a.txt &&
		mkdir -p src/new && echo n >src/new/c.txt &&
		git add -A && git -c user.name=u -c user.email=u@x \
		commit -q -m inside" &&
	git -c safe.directory='*' -C "$ws" log --format=%s -1 >log &&
	echo inside >expect &&
	test_cmp expect log
'

test_expect_success 'holt commit from the host: still the sandbox uid s' '
	holt sandbox exec "$sbx" -- sh -c "echo three >>b.txt" &&
	holt commit -t s -m "from the host" &&
	not_theirs >wrong &&
	{ cat wrong; test ! -s wrong; } &&
	holt sandbox exec "$sbx" -- sh -c "echo four >>b.txt &&
		git add -A && git -c user.name=u -c user.email=u@x \
		commit -q -m again"
'

test_expect_success 'a revert from the host: the file stays theirs' '
	holt sandbox exec "$sbx" -- sh -c "echo five >>src/a.txt" &&
	git_tool revert-file "$ws" "$(git -c safe.directory='*' -C "$ws" rev-parse HEAD)" src/a.txt &&
	not_theirs >wrong &&
	{ cat wrong; test ! -s wrong; } &&
	holt sandbox exec "$sbx" -- sh -c "echo six >>src/a.txt"
'

test_expect_success 'a symbolic link in the workspace leads nowhere' '
	echo secret >host-file &&
	chown 0:0 host-file &&
	holt sandbox exec "$sbx" -- ln -s "$PWD/host-file" hostlink &&
	holt sandbox exec "$sbx" -- sh -c "echo seven >>b.txt" &&
	holt commit -t s -m "with a link" &&
	test "$(stat -c %u host-file)" = 0
'

test_expect_success 'cleanup' '
	holt kill-session -t s --rm
'

test_done
