// Package claudecode is everything tasksessiond knows about Claude Code.
package claudecode

import "github.com/tasksessiond/tasksessiond/internal/host"

func init() { host.Register(Host{}) }

// Host is Claude Code.
type Host struct{}

var _ host.Host = Host{}

// Name is the host's name on the command line.
func (Host) Name() string { return "claude-code" }

// Title is the host's name for people.
func (Host) Title() string { return "Claude Code" }
