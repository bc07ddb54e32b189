#!/bin/sh
# The screen and long sessions: the status line shows the share of the
# model's window in use; the agent pane shows the project instructions once,
# a compaction and a switch of model.
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/tui-lib.sh"

test_expect_success TMUX 'setup' '
	mkdir -p ws &&
	cat >script.json <<-JSON &&
	{ "session": { "name": "s", "state": "idle", "sandbox_state": "running",
	    "model": "openai:gpt-4.1", "mode": "auto", "step": 2, "steps_cap": 25,
	    "input_tokens": 1200, "output_tokens": 340, "cost_usd": 0.0123,
	    "cached_input_tokens": 900,
	    "run": { "input_tokens": 300, "output_tokens": 40,
	             "cached_input_tokens": 200, "cost_usd": 0.002 },
	    "context": { "tokens": 3400, "window": 8000, "percent": 42,
	                 "compact_at": 80, "compacting": false },
	    "workspace": "$TRASH_DIRECTORY/ws", "pending": [] },
	  "events": [
	    { "seq": 1, "type": "user.message", "text": "fix it" },
	    { "seq": 2, "type": "instructions.loaded", "files": ["AGENTS.md"],
	      "text": "## The project instructions (AGENTS.md)\\n\\nUSE-TABS-RULE" },
	    { "seq": 3, "type": "context.compacted", "summary": "S",
	      "through_seq": 1, "tokens_before": 7000, "tokens_after": 2100,
	      "by": "auto" },
	    { "seq": 4, "type": "model.changed", "model": "openai:gpt-4o",
	      "previous": "openai:gpt-4.1", "context_window": 128000 } ] }
	JSON
	fake_start script.json &&
	tui_start a -t s &&
	tui_wait a "message the agent"
'

test_expect_success TMUX 'the status line shows the share of the window' '
	tui_wait a "ctx 42%"
'

test_expect_success TMUX 'instructions, compaction and model switch in the agent pane' '
	tui_wait a "project instructions: AGENTS.md" &&
	tui_wait a "USE-TABS-RULE" &&
	tui_wait a "conversation compacted (auto): 7000 → 2100 tokens" &&
	tui_wait a "model: openai:gpt-4o"
'

test_expect_success TMUX '/cost: the run and the session, cached tokens, context' '
	tui_keys a "/cost" Enter &&
	tui_wait a "session: 1200 tokens in (900 cached), 340 out, .0.0123; run: 300 in (200 cached), 40 out, .0.0020; context 3400 of 8000 tokens (42%)"
'

test_expect_success TMUX 'cleanup' '
	tui_stop &&
	fake_stop
'

test_done
