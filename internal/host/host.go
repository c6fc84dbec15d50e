// Package host is the seam between the daemon's host-agnostic commands (the
// MCP bridge, the hook command, cmd) and each agent host. Each host is one
// package under internal/host that implements Host and registers itself by
// name; the commands look hosts up here and never name one.
package host

import (
	"fmt"
	"sort"
	"sync"
)

// Host is what an agent host is to the daemon.
type Host interface {
	// Name is the host's name on the command line ("claude-code").
	Name() string
	// Title is the host's name for people ("Claude Code").
	Title() string
	// Installer sets the host up and checks it (setup.go).
	Installer
}

var (
	mu    sync.RWMutex
	hosts = map[string]Host{}
)

// Register makes a host known by its name. It panics when the name is
// taken: two packages claiming one host is a programming error.
func Register(h Host) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := hosts[h.Name()]; dup {
		panic(fmt.Sprintf("host: %q registered twice", h.Name()))
	}
	hosts[h.Name()] = h
}

// Lookup returns the host registered under name.
func Lookup(name string) (Host, bool) {
	mu.RLock()
	defer mu.RUnlock()
	h, ok := hosts[name]
	return h, ok
}

// All returns every registered host, by name.
func All() []Host {
	mu.RLock()
	defer mu.RUnlock()
	all := make([]Host, 0, len(hosts))
	for _, h := range hosts {
		all = append(all, h)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name() < all[j].Name() })
	return all
}

// Names returns the registered hosts' names, sorted.
func Names() []string {
	var names []string
	for _, h := range All() {
		names = append(names, h.Name())
	}
	return names
}
