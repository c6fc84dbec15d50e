//go:build unix

package autostart

import "syscall"

// detached puts the daemon in a session of its own.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// noFollow refuses a symlink planted where the log goes.
const noFollow = syscall.O_NOFOLLOW
