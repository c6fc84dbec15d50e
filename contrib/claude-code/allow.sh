#!/bin/sh
# PreToolUse hook for this plugin's four Task tools only (the matcher in
# plugin.json): allow the call, so Claude Code does not ask before each one.
# A plugin cannot ship permission rules; this hook is how it spares the
# prompt. The tools change nothing but the session's task list.
cat >/dev/null
printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"tasksessiond: the Task tools change only the task list"}}'
