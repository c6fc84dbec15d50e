package pgdb

import (
	"context"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Every wait on PostgreSQL is bounded, so that a daemon frozen or cut off
// while it holds a lock (a compaction holds its session's lease row until
// it commits) delays a takeover by about a lease at most, and so that a
// daemon never waits without end on a server it cannot reach. The bounds
// derive from the lease unless the connection string sets them:
//
//   - idle_in_transaction_session_timeout, half a lease: the server ends
//     the session of a daemon frozen inside a transaction, which frees its
//     locks;
//   - lock_timeout, half a lease: a statement waits that long for a row
//     lock (a takeover waiting on a frozen holder's lock fails and is
//     retried rather than hanging);
//   - statement_timeout, two leases and at least 5 s: no statement runs
//     for ever (a replay's read of a long log takes well under that);
//   - tcp_keepalives_idle/interval/count and tcp_user_timeout, on the
//     server's side and the daemon's: a peer that vanished without closing
//     its connection (a partition, a lost machine) is given up after about
//     a lease, not after the kernel's two hours.
//
// Settings returns them, for docs and status.
func Settings(lease time.Duration) map[string]string {
	if lease <= 0 {
		lease = DefaultLease
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(max(d.Milliseconds(), 1), 10) }
	secs := func(d time.Duration) string { return strconv.FormatInt(max(int64(d/time.Second), 1), 10) }
	return map[string]string{
		"idle_in_transaction_session_timeout": ms(lease / 2),
		"lock_timeout":                        ms(lease / 2),
		"statement_timeout":                   ms(max(2*lease, 5*time.Second)),
		"tcp_keepalives_idle":                 secs(lease / 3),
		"tcp_keepalives_interval":             secs(lease / 3),
		"tcp_keepalives_count":                "3",
		"tcp_user_timeout":                    ms(lease),
		// Not a wait, but one all the same: the daemon's queries are short
		// and indexed, and compiling one that the planner costs high (a
		// table not yet analysed) took seconds.
		"jit": "off",
	}
}

// bound sets the bounds on a connection's configuration: the server's
// settings (unless the connection string sets them, as a parameter or in
// options=-c …), and the daemon's side of the socket.
func bound(cfg *pgx.ConnConfig, lease time.Duration) {
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	options := cfg.RuntimeParams["options"]
	for k, v := range Settings(lease) {
		if _, set := cfg.RuntimeParams[k]; set || strings.Contains(options, k) {
			continue
		}
		cfg.RuntimeParams[k] = v
	}
	if cfg.ConnectTimeout <= 0 {
		// At least 5 s: forking a backend on a loaded server takes a while.
		cfg.ConnectTimeout = max(lease, 5*time.Second)
	}
	d := &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: max(lease/3, time.Second), Interval: max(lease/3, time.Second), Count: 3},
		Control: func(network, address string, c syscall.RawConn) error {
			if !strings.HasPrefix(network, "tcp") {
				return nil
			}
			var serr error
			err := c.Control(func(fd uintptr) { serr = setUserTimeout(fd, lease) })
			if err != nil {
				return err
			}
			return serr
		},
	}
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
}
