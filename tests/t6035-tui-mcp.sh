#!/bin/sh
# An MCP tool's call in the screen: the agent pane shows the tool and its
# arguments, and so does the approval modal, which answers it like any; a
# server that could not start is said there.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

test_expect_success TMUX 'setup' '
	cat >script.json <<-\JSON &&
	{ "session": { "name": "s", "state": "waiting", "sandbox_state": "running",
	    "model": "openai:gpt-4.1", "mode": "auto", "step": 1, "steps_cap": 25,
	    "pending": [] },
	  "events": [ { "type": "tool.call", "call_id": "call-r1",
	                "name": "mcp__everything__get-resource-links",
	                "arguments": { "count": 2, "note": "from the model" } } ] }
	JSON
	fake_start script.json &&
	tui_start a -t s &&
	tui_wait a "mcp__everything__get-resource-links {\"count\":2,\"note\":\"from the model\"}"
'

test_expect_success TMUX 'the approval shows the tool and its arguments; y allows it' '
	fake_ctl "{\"event\": {\"type\": \"approval.needed\", \"request_id\": \"r1\",
	  \"call_id\": \"call-r1\", \"tool\": \"mcp__everything__get-resource-links\",
	  \"arguments\": {\"count\": 2, \"note\": \"from the model\"},
	  \"verdict\": \"ask\", \"cwd\": \"/workspace\",
	  \"parts\": [ {\"command\": \"tool mcp__everything__get-resource-links\",
	               \"verdict\": \"ask\", \"reason\": \"no rule settles this tool\"} ]}}" &&
	tui_wait a "approval needed (1 of 1)" &&
	tui_wait a "tool      mcp__everything__get-resource-links" &&
	tui_wait a "arguments {\"count\":2,\"note\":\"from the model\"}" &&
	tui_wait a "ask    tool mcp__everything__get-resource-links .*no rule settles this tool" &&
	tui_keys a y &&
	sent_wait "type=approve" "request_id=r1" "decision=allow" &&
	tui_gone a "approval needed"
'

test_expect_success TMUX 'a server left out of the run is said in the agent pane' '
	fake_ctl "{\"event\": {\"type\": \"mcp.failed\", \"server\": \"gone\",
	  \"message\": \"cannot start: no such program\"}}" &&
	tui_wait a "mcp server .gone. left out of the run: cannot start: no such program"
'

test_done
