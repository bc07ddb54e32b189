#!/bin/sh
# A session's repository: import from a local checkout, holt diff (plain,
# --stat, --json), reverting hunks and files, quoting a hunk, holt commit.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"

test_expect_success 'setup: a repository with uncommitted work' '
	git init -q -b main src &&
	(
		cd src &&
		printf "*.log\n" >.gitignore &&
		echo keep >keep.txt &&
		seq 1 12 >mod.txt &&
		echo gone >del.txt &&
		seq 100 140 >old-name.txt &&
		printf "bin\000ary" >bin.dat &&
		echo "echo hi" >script.sh &&
		ln -s keep.txt link &&
		echo file >tc &&
		echo staged >staged.txt &&
		git add -A && git commit -q -m base
	) &&
	echo "user edit" >>src/keep.txt &&
	echo "user new" >src/user-new.txt &&
	echo "noise" >src/debug.log &&
	git -C src status --porcelain >status.before &&
	cp src/.git/index index.before
'

test_expect_success 'import copies uncommitted and untracked files, not ignored ones' '
	git_session s1 "$TRASH_DIRECTORY/src" &&
	ws=$(git_ws s1) &&
	test_cmp src/keep.txt "$ws/keep.txt" &&
	test_cmp src/user-new.txt "$ws/user-new.txt" &&
	test ! -e "$ws/debug.log" &&
	test "$(git_base s1)" = "$(git -C src rev-parse HEAD)"
'

test_expect_success 'import leaves the user checkout alone and shares no inode' '
	git -C src status --porcelain >status.after &&
	test_cmp status.before status.after &&
	cmp index.before src/.git/index &&
	ws=$(git_ws s1) &&
	find "$ws/.git/objects" -type f -links +1 >shared &&
	test ! -s shared
'

test_expect_success 'import from a file:// URL is a local import' '
	git_tool import "file://$TRASH_DIRECTORY/src" fileurl >base &&
	test "$(cat base)" = "$(git -C src rev-parse HEAD)" &&
	test_cmp src/user-new.txt fileurl/user-new.txt
'

test_expect_success 'import refuses a workspace that is not empty' '
	mkdir full && echo x >full/f &&
	test_must_fail git_tool import "$TRASH_DIRECTORY/src" full 2>err &&
	grep "workspace .*full.: not empty" err
'

test_expect_success 'the agent changes things' '
	ws=$(git_ws s1) &&
	(
		cd "$ws" &&
		rm keep.txt && git checkout -q keep.txt &&
		rm user-new.txt &&
		sed -i -e "2s/.*/two/" -e "11s/.*/eleven/" mod.txt &&
		rm del.txt &&
		mv old-name.txt new-name.txt &&
		printf "bin\000ARY" >bin.dat &&
		chmod +x script.sh &&
		rm link && ln -s mod.txt link &&
		rm tc && ln -s keep.txt tc &&
		echo "staged change" >staged.txt && git add staged.txt &&
		echo "brand new" >added.txt &&
		echo noise >trace.log
	)
'

test_expect_success 'holt diff --json: every kind of change' '
	holt diff -t s1 --json >d.json &&
	json_q "
base = d[\"base\"]
f = {x[\"path\"]: x for x in d[\"files\"]}
assert set(f) == {\"mod.txt\", \"del.txt\", \"new-name.txt\", \"bin.dat\",
	\"script.sh\", \"link\", \"tc\", \"staged.txt\", \"added.txt\"}, sorted(f)
m = f[\"mod.txt\"]
assert m[\"status\"] == \"modified\" and len(m[\"hunks\"]) == 2, m
assert m[\"additions\"] == 2 and m[\"deletions\"] == 2
h = m[\"hunks\"][0]
assert h[\"old_start\"] == 1 and h[\"header\"].startswith(\"@@ -1,5 +1,5 @@\"), h
assert {\"origin\": \"-\", \"text\": \"2\"} in h[\"lines\"]
assert {\"origin\": \"+\", \"text\": \"two\"} in h[\"lines\"]
assert f[\"del.txt\"][\"status\"] == \"deleted\" and f[\"del.txt\"][\"new_mode\"] == \"\"
r = f[\"new-name.txt\"]
assert r[\"status\"] == \"renamed\" and r[\"old_path\"] == \"old-name.txt\", r
assert f[\"bin.dat\"][\"binary\"] is True and f[\"bin.dat\"][\"hunks\"] == []
s = f[\"script.sh\"]
assert (s[\"old_mode\"], s[\"new_mode\"]) == (\"100644\", \"100755\"), s
assert f[\"link\"][\"new_mode\"] == \"120000\"
assert {\"origin\": \"+\", \"text\": \"mod.txt\"} in f[\"link\"][\"hunks\"][0][\"lines\"]
t = f[\"tc\"]
assert t[\"status\"] == \"typechange\" and t[\"new_mode\"] == \"120000\", t
assert [[l[\"origin\"] + l[\"text\"] for l in h[\"lines\"]] for h in t[\"hunks\"]] == \
	[[\"-file\"], [\"+keep.txt\"]], t
assert (t[\"additions\"], t[\"deletions\"]) == (1, 1), t
assert f[\"added.txt\"][\"status\"] == \"added\" and f[\"added.txt\"][\"old_mode\"] == \"\"
assert f[\"staged.txt\"][\"status\"] == \"modified\"
" <d.json
'

test_expect_success 'the non-blocking diff gives the same JSON' '
	git_tool diff-async "$(git_ws s1)" "$(git_base s1)" >async.json &&
	test_cmp d.json async.json &&
	test_must_fail git_tool diff-async "$(git_ws s1)" 0000000 2>err &&
	grep "commit .0000000.: not in the workspace" err
'

test_expect_success 'holt diff prints a patch as git diff does' '
	holt diff -t s1 >patch &&
	grep "^diff --git a/mod.txt b/mod.txt" patch &&
	grep "^-2$" patch && grep "^+two$" patch &&
	grep "^rename from old-name.txt" patch &&
	grep "^Binary files" patch &&
	grep "^old mode 100644" patch && grep "^new mode 100755" patch &&
	grep "^+brand new" patch &&
	! grep -q "$(printf "\033")" patch
'

test_expect_success 'the patch applies to the base commit and gives the workspace' '
	ws=$(git_ws s1) &&
	rm -rf check && git clone -q src check &&
	git -C check checkout -q "$(git_base s1)" &&
	holt diff -t s1 >patch &&
	grep -v "^Binary files\|bin.dat" patch >/dev/null &&
	(cd check && git apply --exclude=bin.dat ../patch) &&
	for f in mod.txt new-name.txt staged.txt added.txt script.sh; do
		cmp "$ws/$f" "check/$f" || return 1
	done &&
	test -x check/script.sh && test ! -e check/del.txt &&
	test "$(readlink check/link)" = mod.txt
'

test_expect_success 'holt diff --stat is git diff --stat' '
	ws=$(git_ws s1) &&
	rm -rf copy && cp -a "$ws" copy &&
	git -C copy add -A &&
	git -C copy diff --cached --stat=80 -M "$(git_base s1)" >expect &&
	holt diff -t s1 --stat >actual &&
	test_cmp expect actual
'

test_expect_success 'holt diff and --stat are git'"'"'s: renames in directories, scaling, long names' '
	git init -q -b main st &&
	(
		cd st && mkdir -p src/deep/er &&
		seq 1 50 >src/deep/er/moved.txt &&
		seq 1 300 >big.txt &&
		echo x >src/a-file-with-a-really-long-name-that-needs-cutting-down-to-fit.txt &&
		git add -A && git commit -q -m base
	) &&
	git_session st "$TRASH_DIRECTORY/st" &&
	ws=$(git_ws st) &&
	git -C "$ws" mv src/deep/er/moved.txt src/deep/er/renamed.txt &&
	seq 1 300 | sed "s/^/changed /" >"$ws/big.txt" &&
	echo y >>"$ws/src/a-file-with-a-really-long-name-that-needs-cutting-down-to-fit.txt" &&
	rm -rf copy && cp -a "$ws" copy && git -C copy add -A &&
	git -C copy diff --cached --stat=80 -M "$(git_base st)" >expect &&
	holt diff -t st --stat >actual &&
	test_cmp expect actual &&
	git -C copy diff --cached -M "$(git_base st)" >expect &&
	holt diff -t st >actual &&
	test_cmp expect actual
'

test_expect_success 'holt diff --json is valid UTF-8 for a Latin-1 file' '
	ws=$(git_ws st) &&
	printf "caf\351 cr\350me\n" >"$ws/latin1.txt" &&
	holt diff -t st --json >l.json &&
	json_q "
f = [x for x in d[\"files\"] if x[\"path\"] == \"latin1.txt\"][0]
assert f[\"hunks\"][0][\"lines\"][0][\"text\"] == \"caf\\ufffd cr\\ufffdme\", f
" <l.json &&
	rm "$ws/latin1.txt"
'

test_expect_success 'holt diff: an unknown session is exit 2, a bad option too' '
	test_expect_code 2 holt diff -t nosuch 2>err &&
	grep "session .nosuch.: no such session" err &&
	test_expect_code 2 holt diff 2>err &&
	test_expect_code 2 holt diff -t s1 --bogus 2>err
'

test_expect_success PYTHON 'holt diff colours a terminal, NO_COLOR turns it off' '
	on_pty $HOLT diff -t s1 >coloured &&
	grep "$(printf "\033")\[32m+two" coloured &&
	NO_COLOR=1 on_pty $HOLT diff -t s1 >plain &&
	grep "^+two" plain && ! grep -q "$(printf "\033")" plain
'

test_expect_success 'a corrupt session.json is an error naming the file' '
	mkdir -p "$HOLT_HOME/data/sessions/bad" &&
	echo "{\"sandbox\": " >"$HOLT_HOME/data/sessions/bad/session.json" &&
	test_expect_code 1 holt diff -t bad 2>err &&
	grep "sessions/bad/session.json" err
'

test_expect_success 'a hunk quoted for the agent' '
	ws=$(git_ws s1) &&
	git_tool quote "$ws" "$(git_base s1)" mod.txt 1 "why eleven?" >q &&
	cat >expect <<-\EOF &&
	About mod.txt, lines 8-12:
	> @@ -8,5 +8,5 @@
	>  8
	>  9
	>  10
	> -11
	> +eleven
	>  12

	why eleven?
	EOF
	test_cmp expect q
'

test_expect_success 'revert one hunk: the other stays' '
	ws=$(git_ws s1) && base=$(git_base s1) &&
	git_tool revert-hunk "$ws" "$base" mod.txt 0 &&
	seq 1 12 | sed "11s/.*/eleven/" >expect &&
	test_cmp expect "$ws/mod.txt" &&
	holt diff -t s1 --json >d.json &&
	json_q "
m = [x for x in d[\"files\"] if x[\"path\"] == \"mod.txt\"][0]
assert len(m[\"hunks\"]) == 1 and m[\"hunks\"][0][\"new_start\"] == 8, m
" <d.json
'

test_expect_success 'revert a hunk at the end of a file without a newline' '
	ws=$(git_ws s1) && base=$(git_base s1) &&
	printf "keep\nmore" >>"$ws/keep.txt" &&
	git_tool revert-hunk "$ws" "$base" keep.txt 0 &&
	echo keep >expect && test_cmp expect "$ws/keep.txt"
'

test_expect_success 'revert the only hunk of a new file: the file goes' '
	ws=$(git_ws s1) && base=$(git_base s1) &&
	printf "one\ntwo\n" >"$ws/fresh.txt" &&
	git_tool revert-hunk "$ws" "$base" fresh.txt 0 &&
	test ! -e "$ws/fresh.txt"
'

test_expect_success 'revert-hunk refuses a stale hunk index and binary files' '
	ws=$(git_ws s1) && base=$(git_base s1) &&
	test_must_fail git_tool revert-hunk "$ws" "$base" mod.txt 5 2>err &&
	grep "no hunk 5" err &&
	test_must_fail git_tool revert-hunk "$ws" "$base" bin.dat 0 2>err &&
	grep "binary" err
'

test_expect_success 'revert-file with the index locked changes nothing' '
	ws=$(git_ws s1) && base=$(git_base s1) &&
	cp "$ws/mod.txt" mod.before &&
	: >"$ws/.git/index.lock" &&
	test_must_fail git_tool revert-file "$ws" "$base" mod.txt 2>err &&
	grep "the index is locked" err &&
	rm "$ws/.git/index.lock" &&
	test_cmp mod.before "$ws/mod.txt"
'

test_expect_success 'revert whole files: modified, added, deleted, renamed, mode, link' '
	ws=$(git_ws s1) && base=$(git_base s1) &&
	for f in mod.txt added.txt del.txt new-name.txt script.sh link tc \
		bin.dat staged.txt; do
		git_tool revert-file "$ws" "$base" $f || return 1
	done &&
	seq 1 12 >expect && test_cmp expect "$ws/mod.txt" &&
	test ! -e "$ws/added.txt" && test ! -e "$ws/new-name.txt" &&
	echo gone >expect && test_cmp expect "$ws/del.txt" &&
	seq 100 140 >expect && test_cmp expect "$ws/old-name.txt" &&
	test ! -x "$ws/script.sh" &&
	test "$(readlink "$ws/link")" = keep.txt &&
	test -f "$ws/tc" && ! test -h "$ws/tc" &&
	holt diff -t s1 >patch &&
	test ! -s patch &&
	test "$(git_tool has-changes "$ws")" = no
'

test_expect_success 'revert never writes through a symlinked directory' '
	ws=$(git_ws s1) &&
	mkdir -p outside && echo secret >outside/f &&
	mkdir -p "$ws/sub" && echo x >"$ws/sub/f" &&
	(cd "$ws" && git add sub/f && git commit -q -m sub) &&
	head=$(git -C "$ws" rev-parse HEAD) &&
	rm -r "$ws/sub" && ln -s "$TRASH_DIRECTORY/outside" "$ws/sub" &&
	test_must_fail git_tool revert-file "$ws" "$head" sub/f 2>err &&
	grep "symlink" err &&
	echo secret >expect && test_cmp expect outside/f &&
	ls outside >list && echo f >expect && test_cmp expect list
'

test_expect_success 'holt commit: author from --author, message, HEAD moves' '
	git_session s2 "$TRASH_DIRECTORY/src" &&
	ws=$(git_ws s2) &&
	echo change >>"$ws/mod.txt" && echo n >"$ws/n.txt" && rm "$ws/del.txt" &&
	holt commit -t s2 -m "the change" --author "Jo Doe <jo@example.com>" >out &&
	c=$(cat out) &&
	test "$(git -C "$ws" rev-parse --short=12 HEAD)" = "$c" &&
	git -C "$ws" log -1 --format="%an <%ae>|%s|%P" >actual &&
	echo "Jo Doe <jo@example.com>|the change|$(git_base s2)" >expect &&
	test_cmp expect actual &&
	git -C "$ws" show --stat --format= HEAD >stat &&
	grep "n.txt" stat && grep "del.txt" stat &&
	test "$(git_tool has-changes "$ws")" = no
'

test_expect_success 'holt commit: a locked index says what to do' '
	ws=$(git_ws s2) &&
	echo locked >>"$ws/mod.txt" &&
	: >"$ws/.git/index.lock" &&
	head=$(git -C "$ws" rev-parse HEAD) &&
	test_expect_code 1 holt commit -t s2 -m locked 2>err &&
	grep "remove .git/index.lock if nothing is" err &&
	test "$(git -C "$ws" rev-parse HEAD)" = "$head" &&
	rm "$ws/.git/index.lock" &&
	holt commit -t s2 -m locked &&
	git -C "$ws" log -1 --format=%s >subject &&
	echo locked >expect && test_cmp expect subject
'

test_expect_success 'holt commit: nothing to commit is an error' '
	test_expect_code 1 holt commit -t s2 -m again 2>err &&
	grep "nothing to commit" err
'

test_expect_success 'holt commit: the host user global identity, else holt' '
	ws=$(git_ws s2) &&
	echo more >>"$ws/mod.txt" &&
	git -C "$ws" config user.name "Workspace Liar" &&
	holt commit -t s2 -m "no author" &&
	git -C "$ws" log -1 --format="%an <%ae>" >actual &&
	echo "holt <holt@localhost>" >expect && test_cmp expect actual &&
	printf "[user]\n\tname = Host User\n\temail = host@example.com\n" >"$HOME/.gitconfig" &&
	echo more >>"$ws/mod.txt" &&
	holt commit -t s2 -m "global author" &&
	git -C "$ws" log -1 --format="%an <%ae>" >actual &&
	echo "Host User <host@example.com>" >expect && test_cmp expect actual &&
	rm "$HOME/.gitconfig"
'

test_expect_success 'holt commit: bad author and usage errors' '
	test_expect_code 2 holt commit -t s2 -m x --author "nobody" 2>err &&
	grep "expected .Name <email>." err &&
	test_expect_code 2 holt commit -t s2 2>err &&
	test_expect_code 2 holt commit -t nosuch -m x
'

test_expect_success 'holt pr --local pushes the branch into the source repository' '
	git -C src rev-parse HEAD >head.before &&
	holt pr -t s2 --local >out 2>err &&
	grep "pushed branch .holt/s2." err && test ! -s out &&
	test "$(git -C src rev-parse holt/s2)" = "$(git -C "$(git_ws s2)" rev-parse HEAD)" &&
	git -C src rev-parse HEAD >head.after && test_cmp head.before head.after &&
	git -C src status --porcelain >status.after &&
	test_cmp status.before status.after
'

test_expect_success 'holt pr --local again: the branch is ours, moved forward' '
	ws=$(git_ws s2) &&
	echo again >>"$ws/mod.txt" &&
	holt pr -t s2 --local --title "more" &&
	test "$(git -C src rev-parse holt/s2)" = "$(git -C "$ws" rev-parse HEAD)" &&
	git -C src log -1 --format=%s holt/s2 >actual &&
	echo more >expect && test_cmp expect actual
'

test_expect_success 'the default title: the summary first line, cut at a character' '
	git_session s4 "$TRASH_DIRECTORY/src" &&
	long=$(python3 -c "print(\"a\" + \"\\u00e9\" * 50)") &&
	printf "{\"seq\":1,\"type\":\"assistant.message\",\"text\":\"%s\\\\nmore\"}\n" "$long" \
		>"$HOLT_HOME/data/sessions/s4/events.jsonl" &&
	echo x >>"$(git_ws s4)/mod.txt" &&
	holt pr -t s4 --local 2>err &&
	git -C src log -1 --format=%s holt/s4 >subject &&
	python3 -c "print(\"a\" + \"\\u00e9\" * 35)" >expect &&
	test_cmp expect subject &&
	git -C src log -1 --format=%b holt/s4 >body &&
	grep "^more$" body
'

test_expect_success 'holt pr --local refuses the checked-out branch and foreign history' '
	git -C src rev-parse main >main.before &&
	test_expect_code 1 holt pr -t s2 --local --branch main 2>err &&
	grep "branch .main. is checked out" err &&
	git -C src rev-parse main >main.after && test_cmp main.before main.after &&
	git -C src branch -q other main~0 &&
	(cd src && git checkout -q other && echo o >o.txt && git add o.txt &&
	 git commit -q -m other && git checkout -q main) &&
	test_expect_code 1 holt pr -t s2 --local --branch other 2>err &&
	grep "rejected: .*non-fast-forward" err
'

test_expect_success 'a long summary is cut for the PR body' '
	git_session s5 "$TRASH_DIRECTORY/src" &&
	python3 -c "
import json
print(json.dumps({\"seq\": 1, \"type\": \"assistant.message\",
	\"text\": \"Title\\n\" + \"x\" * 70000}))
" >"$HOLT_HOME/data/sessions/s5/events.jsonl" &&
	echo y >>"$(git_ws s5)/mod.txt" &&
	holt pr -t s5 --local --branch holt/s5 2>err &&
	git -C src log -1 --format=%B holt/s5 >msg &&
	test $(wc -c <msg) -lt 61000 &&
	grep "(cut: the summary is longer)" msg
'

test_expect_success 'holt pr with no changes since the base says so' '
	git_session s3 "$TRASH_DIRECTORY/src" &&
	ws=$(git_ws s3) &&
	git -C "$ws" checkout -q -- . && rm -f "$ws/user-new.txt" &&
	test_expect_code 1 holt pr -t s3 --local 2>err &&
	grep "no changes since the base commit" err
'

test_done
