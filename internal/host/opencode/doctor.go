package opencode

import (
	"fmt"

	"github.com/tasksessiond/tasksessiond/internal/host"
)

var _ host.Doctor = Host{}

// tools are the plugin's Task tools.
var tools = []string{"TaskCreate", "TaskList", "TaskGet", "TaskUpdate"}

// Diagnose finds the plugin's tools turned off in OpenCode's config
// ("tools": {"TaskCreate": false}): OpenCode then does not offer them.
func (h Host) Diagnose(o host.Options) host.Diagnosis {
	d := host.Diagnosis{Installed: host.OnPath("opencode") || host.Holds(configDir(o))}
	for _, f := range configFiles(o) {
		var cfg struct {
			Tools map[string]bool `json:"tools"`
		}
		if ok, _ := host.ReadJSON(f, &cfg); !ok {
			continue // Check names a file OpenCode cannot read
		}
		for _, t := range tools {
			if on, set := cfg.Tools[t]; set && !on {
				d.Blocked = append(d.Blocked, host.Finding{
					Problem: fmt.Sprintf(`"tools": {%q: false} in %s: OpenCode does not offer the plugin's %s`, t, f, t),
					Fix:     fmt.Sprintf("remove %q from \"tools\" in %s", t, f),
				})
			}
		}
	}
	return d
}
