#!/bin/sh
# The server's memory: libcurl and libgit2, and the forty libraries they
# pull in, are loaded only when a session first needs them, so the idle
# server stays small; one that cannot be loaded fails that run, never the
# server.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/lib-mock-llm.sh"

# The server's mappings that name one of the libraries.
server_maps() {
	grep -E "$1" /proc/$(server_pid)/maps
}

test_expect_success 'the idle server has neither libcurl nor libgit2 loaded' '
	holt ls >/dev/null &&
	test -n "$(server_pid)" &&
	server_maps "libc\\.so" >/dev/null &&
	! server_maps "libcurl|libgit2|libcrypto|libgnutls" &&
	rss=$(awk "/^VmRSS/ { print \$2 }" /proc/$(server_pid)/status) &&
	say "server idle RSS: $rss KB" &&
	test $rss -le 8192
'

test_expect_success BWRAP 'sessions on a script model load neither' '
	cat >hi.json <<-\EOF &&
	{ "turns": [ { "text": "hi", "tool_calls": [] } ] }
	EOF
	for i in 1 2 3; do
		holt new -d -s idle$i --model script:hi.json "hello" >/dev/null || exit 1
	done &&
	test_wait_for 300 "test \$(holt ls | grep -c \" finished \") = 3" &&
	! server_maps "libcurl|libgit2" &&
	rss=$(awk "/^VmRSS/ { print \$2 }" /proc/$(server_pid)/status) &&
	say "server RSS with 3 idle sessions: $rss KB"
'

test_expect_success BWRAP 'a libcurl that cannot be loaded fails the run, not the server' '
	mkdir -p badlib &&
	echo "not a library" >badlib/libcurl.so.4 &&
	holt kill-server &&
	LD_LIBRARY_PATH=$PWD/badlib holt ls >/dev/null &&
	holt new -d -s nocurl --model openai:m --base-url http://127.0.0.1:9/v1 \
		"hello" >/dev/null &&
	test_wait_for 100 "holt log -t nocurl | grep \"run finished\"" &&
	holt log -t nocurl >log &&
	grep "libcurl: cannot load libcurl.so.4" log &&
	grep "run finished: error" log &&
	holt ls >out &&
	grep nocurl out &&
	holt kill-server
'

test_expect_success BWRAP 'a model request over HTTP loads libcurl and works' '
	cat >web.json <<-\EOF &&
	{ "turns": [ { "text": "hello over http", "tool_calls": [] } ] }
	EOF
	start_mock web.json &&
	holt ls >/dev/null &&
	! server_maps libcurl &&
	holt new -d -s web --model openai:m --base-url "$MOCK_URL/v1" \
		"hello" >/dev/null &&
	test_wait_for 100 "holt log -t web | grep \"run finished\"" &&
	stop_mock &&
	holt log -t web >log &&
	grep "hello over http" log &&
	grep "run finished: done" log &&
	server_maps libcurl >/dev/null &&
	! server_maps libgit2
'

test_done
