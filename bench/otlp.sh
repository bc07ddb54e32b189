#!/bin/sh
# Traces: does the live export (otel_endpoint) slow a session? A 100-step
# scripted session run by the server, timed from its own log (user.message
# to run.finished), with no endpoint (the reference, measured in the same
# run), with a receiver that answers, one that refuses connections and one
# that takes them and never answers. Then the same for holt run --headless,
# which sends live too: its run timed the same way, and its exit (the end
# of the run to the end of the process, where what is queued is sent, 2 s
# at most) beside the reference's.
set -u
B=${HOLT_BUILD_DIR:-.}
HOLT_HOME=$(mktemp -d)
export HOLT_HOME
mkdir -p "$HOLT_HOME/config"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
SOCK=bench$$
holt() { "$B/holt" -L $SOCK "$@"; }
RPID=
cleanup() {
	for s in reference answering refusing silent h-reference h-answering \
	    h-refusing h-silent; do
		holt kill-session -t $s --rm >/dev/null 2>&1
	done
	holt kill-server >/dev/null 2>&1
	for d in "$HOLT_HOME"/data/sandboxes/sbx-*; do
		[ -d "$d" ] && holt sandbox rm "${d##*/}" >/dev/null 2>&1
	done
	[ -n "$RPID" ] && kill "$RPID" 2>/dev/null
	rm -rf "$HOLT_HOME"
}
trap cleanup EXIT
if ! command -v bwrap >/dev/null 2>&1; then
	echo "otlp: bubblewrap is missing"
	exit 0
fi

steps=100
python3 - "$HOLT_HOME/steps.json" "$steps" <<'PY'
import json, sys
turns = [{"tool_calls": [{"name": "list_dir", "arguments": {}}]} for _ in range(int(sys.argv[2]) - 1)]
turns.append({"text": "done", "tool_calls": []})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PY

# Receivers: one answers 200, one never answers; and a port that refuses.
python3 - >"$HOLT_HOME/ports" <<'PY' &
import http.server, socket, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *a):
        pass
ok = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
silent = socket.socket()
silent.bind(("127.0.0.1", 0))
silent.listen(64)
held = []
def hold():
    while True:
        held.append(silent.accept())
threading.Thread(target=hold, daemon=True).start()
closed = socket.socket()
closed.bind(("127.0.0.1", 0))
print(ok.server_address[1], silent.getsockname()[1], closed.getsockname()[1])
closed.close()
sys.stdout.flush()
threading.Timer(600, lambda: sys.exit(0)).start()
ok.serve_forever()
PY
RPID=$!
n=0
while ! [ -s "$HOLT_HOME/ports" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
read -r ok silent refused <"$HOLT_HOME/ports"

# run NAME [URL]: ms per step of a session run with otel_endpoint = URL.
run() {
	printf "otel_endpoint = %s\n" "${2:-}" >"$HOLT_HOME/config/holt.conf"
	holt new -d -s "$1" --model "script:$HOLT_HOME/steps.json" \
		--steps $((steps + 5)) go >/dev/null || return 1
	n=0
	while ! holt log -t "$1" --json 2>/dev/null |
	    grep -q '"type":"run.finished"'; do
		n=$((n + 1))
		if [ $n -gt 600 ]; then
			echo "otlp: session $1 did not finish in 60 s" >&2
			return 1
		fi
		sleep 0.1
	done
	holt log -t "$1" --json | python3 -c '
import json, sys, datetime
def t(e):
    return datetime.datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp()
ev = [json.loads(l) for l in sys.stdin]
a = next(e for e in ev if e["type"] == "user.message")
b = next(e for e in ev if e["type"] == "run.finished")
print("%.2f" % ((t(b) - t(a)) * 1000 / '$steps'))'
}

ref=$(run reference) || exit 1
answering=$(run answering "http://127.0.0.1:$ok") || exit 1
refusing=$(run refusing "http://127.0.0.1:$refused") || exit 1
silent_ms=$(run silent "http://127.0.0.1:$silent") || exit 1
ratio() { python3 -c "print('%.2f' % ($1 / max($2, 0.001)))"; }
echo "a ${steps}-step session, ms per step: no otel_endpoint ${ref} (the reference); a receiver that answers ${answering} (ratio $(ratio "$answering" "$ref")); one that refuses ${refusing} (ratio $(ratio "$refusing" "$ref")); one that never answers ${silent_ms} (ratio $(ratio "$silent_ms" "$ref"))"
# The server's last word on what it dropped, when it stops.
holt kill-server >/dev/null 2>&1
grep "otlp: .* spans dropped" "$HOLT_HOME/run/$SOCK.log" | tail -n 1 |
	sed 's/^[^ ]* \[[0-9]*\] /server log at its exit: /'

# headless NAME [URL]: "ms-per-step exit-ms" of holt run --headless with
# otel_endpoint = URL; exit-ms from its run.finished to its exit.
headless() {
	printf "otel_endpoint = %s\n" "${2:-}" >"$HOLT_HOME/config/holt.conf"
	"$B/holt" run -s "$1" --model "script:$HOLT_HOME/steps.json" \
		--steps $((steps + 5)) --headless go 2>"$HOLT_HOME/$1.err" |
	python3 -c '
import json, sys, time, datetime
def t(e):
    return datetime.datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp()
a = b = None
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "user.message" and a is None:
        a = e
    elif e["type"] == "run.finished":
        b, fin = e, time.time()
end = time.time()
print("%.2f %.0f" % ((t(b) - t(a)) * 1000 / '$steps', (end - fin) * 1000))'
}

h_ref=$(headless h-reference) || exit 1
h_ans=$(headless h-answering "http://127.0.0.1:$ok") || exit 1
h_ref2=$(headless h-refusing "http://127.0.0.1:$refused") || exit 1
h_sil=$(headless h-silent "http://127.0.0.1:$silent") || exit 1
set -- $h_ref $h_ans $h_ref2 $h_sil
echo "holt run --headless, ${steps} steps, ms per step (and ms from run.finished to its exit): no otel_endpoint $1 ($2, the reference); a receiver that answers $3 (ratio $(ratio "$3" "$1"); $4); one that refuses $5 (ratio $(ratio "$5" "$1"); $6); one that never answers $7 (ratio $(ratio "$7" "$1"); $8, the bound 2000)"
tail -n 1 "$HOLT_HOME/h-silent.err" | sed 's/^/its stderr at the exit, never answered: /'
