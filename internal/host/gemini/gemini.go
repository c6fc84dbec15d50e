// Package gemini is everything tasksessiond knows about Gemini CLI.
package gemini

import "github.com/tasksessiond/tasksessiond/internal/host"

func init() { host.Register(Host{}) }

// Host is Gemini CLI.
type Host struct{}

var _ host.Host = Host{}

// Name is the host's name on the command line.
func (Host) Name() string { return "gemini" }

// Title is the host's name for people.
func (Host) Title() string { return "Gemini CLI" }
