package host

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// HookHostPID returns the pid of the host process that ran this hook, for
// a host that gives its hooks no pid of its own: parent (the hook's
// parent as Env tells it, the npm launcher stepped over) or its nearest
// ancestor that is not a shell (a host runs a hook with "bash -c", which may exec
// the command or run it as its child, as may a wrapper script). Such a
// host starts its MCP servers as its direct children, so this is the
// bridge's parent. 0 when it cannot be told.
func HookHostPID(parent int) int {
	pid := parent
	for range 4 {
		if pid <= 1 || !isShell(pid) {
			break
		}
		pid = parentOf(pid)
	}
	if pid <= 1 {
		return 0
	}
	return pid
}

func isShell(pid int) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return false
	}
	switch filepath.Base(exe) {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox":
		return true
	}
	return false
}

// parentOf reads a process's parent from /proc (0 if it cannot).
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
