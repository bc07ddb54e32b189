#!/bin/sh
# The workspace is written by the agent: a crafted repository tries hooks,
# filters, fsmonitor, core.worktree, hooksPath, excludesFile, includes, a
# .git file or symlink pointing at the user's real repository, symlinks to
# host secrets, alternates and submodules. Nothing may run, and holt may not
# read or write outside the workspace (checked with strace where it is).
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"

if command -v strace >/dev/null 2>&1 && strace -o /dev/null true 2>/dev/null; then
	test_set_prereq STRACE
else
	say "strace is missing or not allowed: the file-access traces are skipped"
fi
M=$TRASH_DIRECTORY/markers
SECRET=HOST-SECRET-4b1d
# Files holt must not touch. A command run by any trick leaves a marker.
evil() {
	echo "mkdir -p '$M' && touch '$M/$1'"
}

# No marker, and the user's repository as it was.
untouched() {
	ls "$M" >markers.now 2>/dev/null
	test ! -s markers.now || { echo "ran: $(cat markers.now)"; return 1; }
	git -C src rev-parse HEAD >head.now && test_cmp head.before head.now &&
	git -C src for-each-ref >refs.now && test_cmp refs.before refs.now &&
	git -C src status --porcelain >status.now && test_cmp status.before status.now
}

# Paths outside the workspace, HOLT_HOME and the system that a traced
# command reached (stat, open, exec, readlink, ...). A process that has
# chrooted into the workspace cannot name anything outside it: its lines are
# skipped, and at least one chroot must have happened.
outside_accesses() {
	python3 - "$1" "$HOLT_HOME" "$TRASH_DIRECTORY" "$HOLT_BUILD_DIR/holt" <<-\EOF
	import re, sys
	trace, home, trash, binary = sys.argv[1:]
	jailed, chroots, bad = set(), 0, set()
	ok = ("/usr/", "/lib", "/etc/", "/proc/", "/dev/", "/sys/", home + "/")
	for line in open(trace):
	    m = re.match(r"(\d+)\s+(\w+)\((.*)", line)
	    if not m:
	        continue
	    pid, call, rest = m.groups()
	    if pid in jailed:
	        continue
	    if call == "chroot" and line.rstrip().endswith("= 0"):
	        jailed.add(pid)
	        chroots += 1
	        continue
	    for p in re.findall(r'"(/[^"]*)"', rest):
	        if p.startswith(ok) or p == home or \
	            (p.startswith(binary) and "/" not in p[len(binary):]) or \
	            (trash + "/").startswith(p.rstrip("/") + "/") or \
	            (home + "/").startswith(p.rstrip("/") + "/"):
	            continue	# the system, holt's files, their ancestors
	        if p in (trash + "/.gitconfig", trash + "/.config/git/config"):
	            continue	# the host user's identity (HOME is the trash)
	        bad.add(call + " " + p)
	if chroots == 0:
	    bad.add("no chroot: libgit2 ran unconfined")
	if bad:
	    print("\n".join(sorted(bad)))
	EOF
}

test_expect_success 'setup: the user repository and a host secret' '
	git init -q -b main src &&
	(cd src && seq 1 5 >a.txt && echo b >b.txt && git add . && git commit -q -m base) &&
	echo "$SECRET" >host-secret.txt &&
	mkdir outside-wt && echo "outside" >outside-wt/extra.txt &&
	git_session s1 "$TRASH_DIRECTORY/src" &&
	git -C src rev-parse HEAD >head.before &&
	git -C src for-each-ref >refs.before &&
	git -C src status --porcelain >status.before
'

test_expect_success 'setup: the agent plants hooks, filters and config tricks' '
	ws=$(git_ws s1) &&
	for h in pre-commit post-commit commit-msg prepare-commit-msg pre-push \
		post-checkout reference-transaction post-index-change pre-auto-gc; do
		printf "#!/bin/sh\n%s\n" "$(evil hook-$h)" >"$ws/.git/hooks/$h" &&
		chmod +x "$ws/.git/hooks/$h" || return 1
	done &&
	mkdir evilhooks &&
	printf "#!/bin/sh\n%s\n" "$(evil hookspath)" >evilhooks/pre-commit &&
	chmod +x evilhooks/pre-commit &&
	echo "*.txt" >host-excludes &&
	git -C "$ws" config core.hooksPath "$TRASH_DIRECTORY/evilhooks" &&
	git -C "$ws" config core.fsmonitor "$(evil fsmonitor)" &&
	git -C "$ws" config core.worktree "$TRASH_DIRECTORY/outside-wt" &&
	git -C "$ws" config core.excludesFile "$TRASH_DIRECTORY/host-excludes" &&
	git -C "$ws" config core.attributesFile "$TRASH_DIRECTORY/host-excludes" &&
	git -C "$ws" config core.sshCommand "$(evil ssh)" &&
	git -C "$ws" config core.pager "$(evil pager)" &&
	git -C "$ws" config filter.evil.clean "$(evil clean); cat" &&
	git -C "$ws" config filter.evil.smudge "$(evil smudge); cat" &&
	git -C "$ws" config filter.evil.process "$(evil process)" &&
	git -C "$ws" config filter.evil.required true &&
	git -C "$ws" config diff.evil.textconv "$(evil textconv); cat" &&
	git -C "$ws" config diff.external "$(evil external)" &&
	git -C "$ws" config gc.auto 1 &&
	printf "* filter=evil diff=evil\n" >"$ws/.gitattributes" &&
	echo change >>"$ws/a.txt" &&
	echo new >"$ws/new.txt" &&
	ln -s "$TRASH_DIRECTORY/host-secret.txt" "$ws/leak" &&
	mkdir "$ws/sub" && echo "gitdir: $TRASH_DIRECTORY/src/.git" >"$ws/sub/.git" &&
	echo inner >"$ws/sub/inner.txt"
'

test_expect_success 'holt diff: workspace files only, links as links, nothing run' '
	holt diff -t s1 >patch &&
	holt diff -t s1 --stat >stat &&
	holt diff -t s1 --json >d.json &&
	grep "^+change" patch && grep "^+new" patch &&
	grep "^+$TRASH_DIRECTORY/host-secret.txt" patch &&
	! grep -r -F "$SECRET" patch stat d.json &&
	! grep -F "extra.txt" patch &&
	json_q "
f = {x[\"path\"]: x for x in d[\"files\"]}
assert f[\"leak\"][\"new_mode\"] == \"120000\", f[\"leak\"]
assert \"new.txt\" in f and \"a.txt\" in f, sorted(f)
assert \"extra.txt\" not in f
" <d.json &&
	untouched
'

test_expect_success STRACE 'holt diff opens nothing outside the workspace' '
	ASAN_OPTIONS=detect_leaks=0 strace -f -s 4096 -e trace=%file,%process -o trace holt diff -t s1 >/dev/null &&
	outside_accesses trace >outside &&
	{ test ! -s outside || { cat outside; false; }; }
'

test_expect_success 'holt commit: the workspace files, nothing run' '
	holt commit -t s1 -m "agent work" >c &&
	ws=$(git_ws s1) &&
	git -C "$ws" ls-tree -r --name-only HEAD >files &&
	grep -x new.txt files && grep -x leak files && ! grep extra.txt files &&
	git -C "$ws" cat-file -p HEAD:leak >link &&
	printf "%s" "$TRASH_DIRECTORY/host-secret.txt" >expect && test_cmp expect link &&
	! git -C "$ws" cat-file -p HEAD:a.txt | grep -F "$SECRET" &&
	test "$(cat outside-wt/extra.txt)" = outside && ls outside-wt >l &&
	echo extra.txt >expect && test_cmp expect l &&
	untouched
'

test_expect_success STRACE 'holt commit and pr --local open nothing outside (bar the target)' '
	ws=$(git_ws s1) &&
	echo more >>"$ws/a.txt" &&
	ASAN_OPTIONS=detect_leaks=0 strace -f -s 4096 -e trace=%file,%process -o trace holt commit -t s1 -m more >/dev/null &&
	outside_accesses trace >outside &&
	{ test ! -s outside || { cat outside; false; }; }
'

test_expect_success 'holt pr --local and revert: nothing run' '
	ws=$(git_ws s1) && base=$(git_base s1) &&
	holt pr -t s1 --local --branch agent &&
	test "$(git -C src rev-parse agent)" = "$(git -C "$ws" rev-parse HEAD)" &&
	git -C src branch -D -q agent && git -C src gc -q --prune=now &&
	git_tool revert-file "$ws" "$base" a.txt &&
	git_tool revert-file "$ws" "$base" leak &&
	test ! -e "$ws/leak" && test "$(cat host-secret.txt)" = "$SECRET" &&
	untouched
'

test_expect_success 'an include in .git/config is refused before anything is read' '
	ws=$(git_ws s1) &&
	printf "[user]\n\tname = $SECRET\n" >host.cfg &&
	git -C "$ws" config include.path "$TRASH_DIRECTORY/host.cfg" &&
	test_expect_code 1 holt diff -t s1 2>err &&
	grep ".git/config has an include (refused; remove it)" err &&
	test_expect_code 1 holt commit -t s1 -m x 2>err &&
	grep "include" err &&
	git -C "$ws" config --unset include.path &&
	git -C "$ws" config "includeIf.gitdir:/.path" "$TRASH_DIRECTORY/host.cfg" &&
	test_expect_code 1 holt diff -t s1 2>err && grep include err &&
	git -C "$ws" config --remove-section "includeIf.gitdir:/" &&
	holt diff -t s1 >/dev/null
'

test_expect_success 'a .git file pointing at the user repository is refused' '
	git_session s2 "$TRASH_DIRECTORY/src" &&
	ws=$(git_ws s2) &&
	mv "$ws/.git" "$ws/.git-real" &&
	echo "gitdir: $TRASH_DIRECTORY/src/.git" >"$ws/.git" &&
	echo x >>"$ws/a.txt" &&
	test_expect_code 1 holt diff -t s2 2>err &&
	grep ".git is not a directory (refused" err &&
	test_expect_code 1 holt commit -t s2 -m steal 2>err &&
	test_expect_code 1 holt pr -t s2 --local 2>err &&
	untouched
'

test_expect_success 'a .git symlink to the user repository is refused' '
	ws=$(git_ws s2) &&
	rm "$ws/.git" && ln -s "$TRASH_DIRECTORY/src/.git" "$ws/.git" &&
	test_expect_code 1 holt diff -t s2 2>err &&
	grep ".git is a symlink (refused" err &&
	test_expect_code 1 holt commit -t s2 -m steal 2>err &&
	untouched &&
	rm "$ws/.git" && mv "$ws/.git-real" "$ws/.git"
'

test_expect_success 'symlinks inside .git are refused (config, objects, refs)' '
	ws=$(git_ws s2) &&
	mv "$ws/.git/description" desc.save &&
	ln -s "$TRASH_DIRECTORY/host-secret.txt" "$ws/.git/description" &&
	test_expect_code 1 holt diff -t s2 2>err &&
	grep ".git holds a symlink (refused)" err &&
	rm "$ws/.git/description" && mv desc.save "$ws/.git/description" &&
	ln -s "$TRASH_DIRECTORY/src/.git/refs/heads" "$ws/.git/refs/heads/evil" &&
	test_expect_code 1 holt commit -t s2 -m x 2>err &&
	grep "symlink" err &&
	rm "$ws/.git/refs/heads/evil" &&
	holt diff -t s2 >/dev/null
'

test_expect_success 'alternates and commondir pointing outside are refused' '
	ws=$(git_ws s2) &&
	echo "$TRASH_DIRECTORY/src/.git/objects" >"$ws/.git/objects/info/alternates" &&
	test_expect_code 1 holt diff -t s2 2>err &&
	grep "objects/info/alternates points outside" err &&
	rm "$ws/.git/objects/info/alternates" &&
	echo "$TRASH_DIRECTORY/src/.git" >"$ws/.git/commondir" &&
	test_expect_code 1 holt diff -t s2 2>err &&
	grep "commondir points outside" err &&
	rm "$ws/.git/commondir" &&
	untouched
'

test_expect_success 'a submodule is not entered' '
	ws=$(git_ws s2) &&
	(
		cd "$ws" &&
		printf "[submodule \"m\"]\n\tpath = m\n\turl = %s\n" "$TRASH_DIRECTORY/src" >.gitmodules &&
		git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,m &&
		mkdir m && echo "gitdir: $TRASH_DIRECTORY/src/.git" >m/.git
	) &&
	holt diff -t s2 --json >d.json &&
	json_q "
f = {x[\"path\"]: x for x in d[\"files\"]}
assert not any(x.startswith(\"m/\") for x in f), sorted(f)
m = f[\"m\"]
assert m[\"new_mode\"] == \"160000\", m
assert [l[\"text\"] for l in m[\"hunks\"][0][\"lines\"]] == [\"Subproject commit \" + \"1\" * 40], m
" <d.json &&
	holt diff -t s2 >patch &&
	grep "^+Subproject commit 1111111111111111111111111111111111111111$" patch &&
	grep "^new file mode 160000" patch &&
	holt diff -t s2 --stat >stat &&
	grep "^ m  *| 1 +$" stat &&
	untouched
'

test_expect_success STRACE 'the submodule and symlink workspace: no access outside' '
	ASAN_OPTIONS=detect_leaks=0 strace -f -s 4096 -e trace=%file,%process -o trace holt diff -t s2 >/dev/null &&
	outside_accesses trace >outside &&
	{ test ! -s outside || { cat outside; false; }; }
'

test_done
