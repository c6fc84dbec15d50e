package harness

import (
	"testing"
	"time"
)

// WaitFor polls cond (every 20ms) until it holds, or fails the test after
// timeout saying what it waited for.
func WaitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("harness: timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
