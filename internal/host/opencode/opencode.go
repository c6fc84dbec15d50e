// Package opencode is everything tasksessiond knows about OpenCode.
package opencode

import "github.com/tasksessiond/tasksessiond/internal/host"

func init() { host.Register(Host{}) }

// Host is OpenCode.
type Host struct{}

var _ host.Host = Host{}

// Name is the host's name on the command line.
func (Host) Name() string { return "opencode" }

// Title is the host's name for people.
func (Host) Title() string { return "OpenCode" }
