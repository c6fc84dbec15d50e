#!/bin/sh
# PreToolUse hook for Claude Code's own to-do tools (TaskCreate, TaskGet,
# TaskList, TaskUpdate, TodoWrite: the matcher in plugin.json): refuse the
# call, naming this plugin's tools, so the model keeps one list. "tasksessiond
# setup claude-code" denies them by permission rules, which take them out of
# what the model is offered; a plugin cannot ship permission rules, so under
# the plugin they stay offered and this hook refuses each call.
in=$(cat)
case "$in" in
*'"tool_name":"mcp__'* | *'"tool_name": "mcp__'*) exit 0 ;; # an MCP tool (this plugin's own): not ours to refuse
esac
printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Claude Code'"'"'s own to-do tools are off under the tasksessiond plugin: use mcp__plugin_tasksessiond_tasks__TaskCreate, TaskList, TaskGet and TaskUpdate (load them with ToolSearch)"}}'
