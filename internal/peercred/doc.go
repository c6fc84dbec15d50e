// Package peercred tells the user at the other end of a Unix socket
// (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and FreeBSD): the daemon
// checks its clients with it, and the clients check the daemon.
package peercred
