#!/bin/sh
# --net policy, the default: the sandbox reaches hosts by name through
# holt's proxy on the host, as the policy's net-allow/net-deny rules say.
# A registry's name is mapped to an HTTP server on the host's loopback by
# the proxy's test-only hosts file (HOLT_PROXY_HOSTS); everything else is
# real: the proxy, envd's hand-off, apt, curl.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/git-lib.sh"

if ! test_have_prereq BWRAP,SYSPYTHON || ! command -v curl >/dev/null; then
	echo "1..0 # SKIP needs bubblewrap, /usr/bin/python3 and curl"
	exit 0
fi

test_sandbox_cleanup

# A web server on the host's loopback, serving this directory.
mkdir -p www/repo &&
echo "hello through the proxy" >www/hello.txt &&
head -c 3000000 /dev/urandom >www/big.bin
test_web_server "$PWD/www"

# A server that takes connections and never says a word.
/usr/bin/python3 -c '
import socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
time.sleep(120)' >silent-port &
silent=$!
test_when_finished "kill $silent"
test_wait_for 50 "test -s silent-port"
silent_port=$(cat silent-port)

# A server that answers a first line at once, then sends back all it got
# once the client shut its side down.
/usr/bin/python3 -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
print(s.getsockname()[1], flush=True)
while True:
	c, _ = s.accept()
	f = c.makefile("rb")
	f.readline()
	c.sendall(b"pong\n")
	rest = f.read()
	c.sendall(rest)
	f.close()
	c.close()' >echo-port &
echo=$!
test_when_finished "kill $echo"
test_wait_for 50 "test -s echo-port"
echo_port=$(cat echo-port)

# The test-only hosts file: two registries' names on the host's loopback.
printf "127.0.0.1 deb.debian.org registry.npmjs.org slow.debian.org asked.example.org\n" >hosts
HOLT_PROXY_HOSTS=$PWD/hosts
export HOLT_PROXY_HOSTS

sbx_net() {
	holt sandbox exec p -- "$@"
}

test_expect_success 'the default is --net policy: proxy variables inside' '
	OPENAI_API_KEY=sk-holt-test-secret GITHUB_TOKEN=ghp-holt-test-secret \
		holt sandbox create --name p >id &&
	read ppid pstart <"$HOLT_HOME/data/sandboxes/$(cat id)/run/proxy.pid" &&
	tr "\0" "\n" </proc/$ppid/environ >penv &&
	grep "^HOLT_HOME=" penv &&
	! grep "holt-test-secret" penv &&
	! grep -a "holt-test-secret" /proc/$ppid/cmdline &&
	holt sandbox ls --json >ls &&
	grep "\"net\":[[:space:]]*\"policy\"" ls &&
	sbx_net sh -c "echo \$HTTPS_PROXY \$http_proxy \$NO_PROXY" >out &&
	echo "http://127.0.0.1:3128 http://127.0.0.1:3128 localhost,127.0.0.1,::1" >expect &&
	test_cmp expect out
'
id=$(cat id 2>/dev/null)
dir=$HOLT_HOME/data/sandboxes/$id

test_expect_success 'an allowed registry is reached through the proxy' '
	sbx_net curl -sS -m 10 http://deb.debian.org:$port/hello.txt >out &&
	echo "hello through the proxy" >expect &&
	test_cmp expect out &&
	grep "allow deb.debian.org:$port deb.debian.org (default:" "$dir/run/net.log"
'

test_expect_success 'a download comes through whole' '
	sbx_net curl -sS -m 30 http://registry.npmjs.org:$port/big.bin -o /tmp/big &&
	sbx_net sha256sum /tmp/big >sum &&
	sha256sum <www/big.bin | cut -d" " -f1 >expect &&
	cut -d" " -f1 sum >got && test_cmp expect got
'

test_expect_success 'a CONNECT tunnel carries both ways, and a half-close' '
	sbx_net python3 -c "import hashlib, os, socket
s = socket.create_connection((\"127.0.0.1\", 3128), timeout=20)
s.sendall(b\"CONNECT deb.debian.org:$echo_port HTTP/1.1\\r\\n\\r\\nping\\n\")
f = s.makefile(\"rb\")
assert f.readline().startswith(b\"HTTP/1.1 200\")
while f.readline() != b\"\\r\\n\": pass
assert f.readline() == b\"pong\\n\"
data = os.urandom(3000000)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
back = f.read()
print(len(back), hashlib.sha256(back).hexdigest() == hashlib.sha256(data).hexdigest())" >out &&
	echo "3000000 True" >expect &&
	test_cmp expect out
'

test_expect_success ROOT 'sudo apt-get installs from a registry the policy allows' '
	command -v dpkg-scanpackages >/dev/null &&
	mkdir -p pkg/DEBIAN pkg/usr/bin &&
	printf "Package: holt-net\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: t\n" >pkg/DEBIAN/control &&
	printf "#!/bin/sh\necho holt-net works\n" >pkg/usr/bin/holt-net &&
	chmod 755 pkg/usr/bin/holt-net &&
	dpkg-deb --build --root-owner-group pkg www/repo/holt-net.deb >/dev/null &&
	(cd www/repo && dpkg-scanpackages . /dev/null >Packages 2>/dev/null) &&
	sbx_net sh -c "echo \"deb [trusted=yes] http://deb.debian.org:$port/repo ./\" |
		sudo tee /etc/apt/sources.list.d/t.list >/dev/null &&
		sudo apt-get -o Dir::Etc::sourcelist=sources.list.d/t.list \
			-o Dir::Etc::sourceparts=- update &&
		sudo apt-get install -y holt-net" >out 2>&1 &&
	sbx_net holt-net >out &&
	echo "holt-net works" >expect && test_cmp expect out
'

test_expect_success 'a host no rule allows is refused at once, named' '
	start=$(date +%s) &&
	test_must_fail sbx_net curl -sS -m 20 https://example.org/ 2>err &&
	grep "response 403" err &&
	test_must_fail sbx_net curl -sS -f -m 20 http://example.org/ >out 2>&1 &&
	sbx_net curl -sS -m 20 http://example.org/ >body &&
	grep "host .example.org. (port 80) refused" body &&
	grep "net-allow example.org" body &&
	test $(( $(date +%s) - start )) -lt 10 &&
	grep "deny example.org:443 " "$dir/run/net.log"
'

test_expect_success 'a literal IP address is refused, the host'"'"'s too' '
	sbx_net curl -sS -m 10 --noproxy "" -x http://127.0.0.1:3128 http://127.0.0.1:$port/hello.txt >body &&
	grep "an IP address" body &&
	sbx_net curl -sS -m 10 --noproxy "" -x http://127.0.0.1:3128 http://[::1]:$port/hello.txt >body &&
	grep "an IP address" body &&
	sbx_net curl -sS -m 10 --noproxy "" -x http://127.0.0.1:3128 http://2130706433:$port/ >body &&
	grep "an IP address" body &&
	test_must_fail sbx_net curl -sS -m 10 --noproxy "*" http://127.0.0.1:$port/hello.txt
'

test_expect_success 'net-allow * still keeps the host'"'"'s loopback out' '
	mkdir -p "$HOLT_HOME/config" &&
	echo "net-allow *" >"$HOLT_HOME/config/policy" &&
	sbx_net curl -sS -m 10 --noproxy "" http://localhost:$port/hello.txt >body &&
	grep "resolves to 127.0.0.1, a loopback, private or link-local address" body &&
	sbx_net curl -sS -m 10 --noproxy "" http://localhost.:$port/hello.txt >body &&
	grep "loopback" body &&
	rm "$HOLT_HOME/config/policy"
'

test_expect_success 'the workspace may deny a host, never allow one' '
	mkdir -p "$dir/workspace/.holt" &&
	echo "net-deny deb.debian.org" >"$dir/workspace/.holt/policy" &&
	sbx_net curl -sS -m 10 http://deb.debian.org:$port/hello.txt >body &&
	grep "refused: denied by a rule" body &&
	echo "net-allow example.org" >"$dir/workspace/.holt/policy" &&
	sbx_net curl -sS -m 10 http://example.org/ >body &&
	grep "refused" body &&
	rm -r "$dir/workspace/.holt" &&
	sbx_net curl -sS -m 10 http://deb.debian.org:$port/hello.txt >out &&
	echo "hello through the proxy" >expect && test_cmp expect out
'

test_expect_success 'DNS and raw sockets fail fast and clearly' '
	start=$(date +%s) &&
	test_must_fail sbx_net getent hosts example.org &&
	test_must_fail sbx_net python3 -c "import socket; socket.getaddrinfo(\"example.org\", 443)" 2>err &&
	grep -i "name\|resolution\|unreachable" err &&
	test_must_fail sbx_net python3 -c "import socket
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.sendto(b\"\\x08\\0\\0\\0\\0\\0\\0\\0\", (\"93.184.216.34\", 0))" 2>err &&
	grep -i "permitted\|unreachable" err &&
	test $(( $(date +%s) - start )) -lt 10
'

test_expect_success 'a target that never answers: 504 within the timeout' '
	start=$(date +%s) &&
	sbx_net curl -sS -m 30 http://slow.debian.org:$silent_port/ >body &&
	grep "did not answer within 10 s" body &&
	test $(( $(date +%s) - start )) -lt 20
'

test_expect_success 'bad requests to the proxy: a clear 400' '
	sbx_net python3 -c "import socket
s = socket.create_connection((\"127.0.0.1\", 3128))
s.sendall(b\"HELLO\\r\\n\\r\\n\")
print(s.recv(4096).decode().splitlines()[0])" >out &&
	echo "HTTP/1.1 400 Bad Request" >expect && test_cmp expect out
'

test_expect_success '10,000 connections: the proxy keeps working' '
	sbx_net python3 -c "import socket
held = []
for i in range(10000):
	try:
		s = socket.create_connection((\"127.0.0.1\", 3128), timeout=5)
	except OSError:
		continue
	held.append(s)
	if len(held) >= 900:
		for h in held: h.close()
		held = []
print(\"done\")" >out &&
	echo done >expect && test_cmp expect out &&
	sbx_net curl -sS -m 10 http://deb.debian.org:$port/hello.txt >out &&
	echo "hello through the proxy" >expect && test_cmp expect out
'

test_expect_success 'the proxy lives and ends with its sandbox' '
	read ppid pstart <"$dir/run/proxy.pid" &&
	kill -0 $ppid &&
	holt sandbox stop p &&
	test_wait_for 30 "! kill -0 $ppid" &&
	holt sandbox start p &&
	sbx_net curl -sS -m 10 http://deb.debian.org:$port/hello.txt >out &&
	echo "hello through the proxy" >expect && test_cmp expect out
'

test_expect_success '--net off: no proxy, no way out' '
	holt sandbox create --name o --net off >id2 &&
	test ! -e "$HOLT_HOME/data/sandboxes/$(cat id2)/run/proxy.pid" &&
	holt sandbox exec o -- sh -c "echo \${HTTPS_PROXY:-none}" >out &&
	echo none >expect && test_cmp expect out &&
	test_must_fail holt sandbox exec o -- curl -sS -m 5 --noproxy "" -x http://127.0.0.1:3128 http://deb.debian.org:$port/hello.txt
'

test_expect_success 'a session asks its human about a host; always adds a rule' '
	mkdir -p "$HOLT_HOME/config" &&
	echo "allow ^curl(\s|$)" >"$HOLT_HOME/config/policy" &&
	cat >ask.json <<-EOF &&
	{ "turns": [
	  { "tool_calls": [ { "name": "run_command", "arguments": { "command": "curl -sS -m 60 http://asked.example.org:$port/hello.txt" } } ] },
	  { "expect": { "last_tool_result_contains": "hello through the proxy" },
	    "text": "got it", "tool_calls": [] } ] }
	EOF
	holt new -d -s ask --model script:ask.json "fetch it" &&
	test_wait_for 150 "holt log -t ask --json | grep approval.needed | grep -q asked.example.org" &&
	holt log -t ask --json >log &&
	grep "approval.needed" log | grep "\"host\":\"asked.example.org\"" >needed &&
	grep "\"port\":$port" needed &&
	grep "\"by_command\":\"curl -sS -m 60 http://asked.example.org" needed &&
	holt approve -t ask always &&
	test_wait_for 150 "holt log -t ask | grep \"run finished\"" &&
	holt log -t ask >log &&
	grep "run finished: done" log &&
	grep "^net-allow asked.example.org$" "$HOLT_HOME/data/sessions/ask/policy" &&
	rm "$HOLT_HOME/config/policy"
'

test_expect_success 'holt policy check --host explains a verdict' '
	holt policy check --host files.pythonhosted.org >out &&
	grep "net-allow files.pythonhosted.org  (default:" out &&
	test_expect_code 10 holt policy check --mode auto --host example.org &&
	test_expect_code 11 holt policy check --mode strict --host example.org >out &&
	grep "add .net-allow example.org." out &&
	test_expect_code 0 holt policy check --mode trust --host example.org &&
	test_expect_code 11 holt policy check --host 10.0.0.1 &&
	printf "net-deny *.example.org\nnet-allow a.example.org\n" >pol &&
	test_expect_code 11 holt policy check --policy pol --host a.example.org &&
	printf "net-allow a.example.org\n" >pol2 &&
	test_expect_code 0 holt policy check --policy pol2 --host A.Example.org. &&
	test_expect_code 10 holt policy check --policy pol2 --host example.org &&
	echo "net-allow 10.0.0.1" >bad &&
	test_expect_code 2 holt policy check --policy bad --host x.org 2>err &&
	grep "an IP address" err
'

test_done
