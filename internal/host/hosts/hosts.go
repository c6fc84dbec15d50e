// Package hosts registers every host package: a command that works with
// hosts imports it once, and names none of them.
package hosts

import (
	_ "github.com/tasksessiond/tasksessiond/internal/host/claudecode" // registers claude-code
	_ "github.com/tasksessiond/tasksessiond/internal/host/codex"      // registers codex
	_ "github.com/tasksessiond/tasksessiond/internal/host/copilot"    // registers copilot
	_ "github.com/tasksessiond/tasksessiond/internal/host/gemini"     // registers gemini
	_ "github.com/tasksessiond/tasksessiond/internal/host/opencode"   // registers opencode
	_ "github.com/tasksessiond/tasksessiond/internal/host/qwen"       // registers qwen
)
