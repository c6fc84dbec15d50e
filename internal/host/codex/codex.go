// Package codex is everything tasksessiond knows about Codex CLI.
package codex

import "github.com/tasksessiond/tasksessiond/internal/host"

func init() { host.Register(Host{}) }

// Host is Codex CLI.
type Host struct{}

var _ host.Host = Host{}

// Name is the host's name on the command line.
func (Host) Name() string { return "codex" }

// Title is the host's name for people.
func (Host) Title() string { return "Codex CLI" }
