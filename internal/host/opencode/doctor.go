package opencode

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

var _ host.Doctor = Host{}

// tools are the plugin's Task tools.
var tools = []string{"TaskCreate", "TaskList", "TaskGet", "TaskUpdate"}

// Diagnose finds the plugin's tools turned off in OpenCode's config, as
// OpenCode 1.18.33 decides it ("opencode debug agent build" shows it):
// "tools" and "permission" of every config file it merges, the
// project's too, make one ordered list of rules whose names are
// wildcards ("Task*", "*"); a tool whose last matching rule denies it
// (for every pattern) is not offered.
func (h Host) Diagnose(o host.Options) host.Diagnosis {
	d := host.Diagnosis{Installed: host.OnPath("opencode") || host.Holds(configDir(o))}
	var toolRules, permRules ordered
	checked := configFiles(o) // Check names these when OpenCode cannot read them
	for _, f := range mergedFiles(o) {
		b, err := config.Read(f)
		var doc *config.Doc
		if err == nil && b != nil {
			doc, err = config.ParseJSON(b, config.JSONC)
		}
		if err != nil && !slices.Contains(checked, f) {
			d.Block(fmt.Sprintf("OpenCode cannot read %s (%v): it does not start", f, err), "repair "+f)
		}
		if err != nil || b == nil {
			continue
		}
		for _, name := range doc.Members([]string{"tools"}) {
			var on bool
			if doc.Get([]string{"tools", name}, &on) {
				action := "allow"
				if !on {
					action = "deny"
				}
				toolRules.set(name, []rule{{name, "*", action, f}})
			}
		}
		for _, name := range doc.Members([]string{"permission"}) {
			var action string
			if doc.Get([]string{"permission", name}, &action) {
				permRules.set(name, []rule{{name, "*", action, f}})
				continue
			}
			var rs []rule
			for _, pat := range doc.Members([]string{"permission", name}) {
				if doc.Get([]string{"permission", name, pat}, &action) {
					rs = append(rs, rule{name, pat, action, f})
				}
			}
			if rs != nil {
				permRules.set(name, rs)
			}
		}
	}
	// the tools' rules, each overridden in its place by the permission
	// of the same name, then the other permissions
	all := toolRules
	for _, k := range permRules.keys {
		all.set(k, permRules.m[k])
	}
	var rules []rule
	for _, k := range all.keys {
		rules = append(rules, all.m[k]...)
	}
	for _, t := range tools {
		var last *rule
		for i := range rules {
			if host.Wildcard(rules[i].name).MatchString(t) {
				last = &rules[i]
			}
		}
		if last == nil || last.pattern != "*" || last.action != "deny" {
			continue
		}
		key, value := "tools", "false"
		if permRules.m[last.name] != nil {
			key, value = "permission", `"deny"`
		}
		d.Block(fmt.Sprintf(`%q: {%q: %s} in %s: OpenCode does not offer the plugin's %s`, key, last.name, value, last.file, t),
			fmt.Sprintf("remove %q from %q in %s", last.name, key, last.file))
	}
	return d
}

// rule is one entry of OpenCode's permission list.
type rule struct {
	name, pattern, action string
	file                  string
}

// ordered is a JSON object merged over several files: a name keeps the
// place it first had, with the last file's value.
type ordered struct {
	keys []string
	m    map[string][]rule
}

func (o *ordered) set(k string, v []rule) {
	if o.m == nil {
		o.m = map[string][]rule{}
	}
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

// mergedFiles are the config files OpenCode merges, lowest first: the
// global ones, $OPENCODE_CONFIG, then the project's opencode.json(c)
// from its root (the git checkout's, else /) down to the working
// directory (o.Project, else the current one), and its .opencode ones.
func mergedFiles(o host.Options) []string {
	names := []string{"opencode.json", "opencode.jsonc"}
	g := configDir(o)
	out := []string{filepath.Join(g, "config.json"), filepath.Join(g, "opencode.json"), filepath.Join(g, "opencode.jsonc")}
	if f := o.Env("OPENCODE_CONFIG"); f != "" {
		out = append(out, f)
	}
	dir := host.ProjectDir(o)
	if dir == "" {
		return out
	}
	dir, _ = filepath.Abs(dir)
	dirs := host.Upward(dir, func(d string) bool {
		_, err := os.Stat(filepath.Join(d, ".git"))
		return err == nil
	})
	seen := map[string]bool{}
	for _, f := range out {
		seen[filepath.Clean(f)] = true
	}
	for _, sub := range []string{"", ".opencode"} {
		for _, d := range slices.Backward(dirs) {
			for _, n := range names {
				if f := filepath.Join(d, sub, n); !seen[f] {
					seen[f] = true
					out = append(out, f)
				}
			}
		}
	}
	return out
}
