package main

import (
	"runtime/debug"
	"strings"
)

// versionLine is what "tasksessiond version" prints: the stamped version
// and commit of a release build, else what the Go toolchain recorded (the
// module's version after "go install ...@v1.2.3", the VCS revision of a
// build in a clone), else "devel".
func versionLine() string {
	v, c := version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = strings.TrimPrefix(info.Main.Version, "v")
		}
		if c == "" {
			var modified bool
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					c = s.Value
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if c != "" && modified {
				c += "-dirty"
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	if c == "" {
		return "tasksessiond " + v
	}
	return "tasksessiond " + v + " (commit " + c + ")"
}
