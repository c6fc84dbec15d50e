package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/wire"
)

// memory measures the Go heap held by loaded sessions: with no tasks, and
// with 20 tasks (and their 60 logged calls with callIds) each.
func (b *bencher) memory(ctx context.Context, r *Results) error {
	d, err := db.Open(ctx, b.path("memory.db"), db.Options{Sync: db.SyncNormal})
	if err != nil {
		return err
	}
	defer d.Close()
	const perSession = 20
	n := b.sz.memSessions
	seed := session.NewManager(d, nil)
	for i := range n {
		if _, err := seed.Create(ctx, wire.CreateSession{SessionID: fmt.Sprint("empty-", i)}); err != nil {
			return err
		}
		if _, err := seed.Replay(ctx, wire.ReplaySession{SessionID: fmt.Sprint("full-", i), Calls: transcript(perSession*3, perSession)}); err != nil {
			return err
		}
	}
	seed = nil
	haveRSS := rss() > 0
	// Each load returns the heap and the RSS it added per session.
	load := func(prefix string) (heapPer, rssPer float64, err error) {
		m := session.NewManager(d, nil)
		heap0, rss0 := heap(), rss()
		for i := range n {
			if _, err := m.Resume(ctx, fmt.Sprint(prefix, i)); err != nil {
				return 0, 0, err
			}
		}
		heap1, rss1 := heap(), rss()
		runtime.KeepAlive(m)
		return (float64(heap1) - float64(heap0)) / float64(n), (float64(rss1) - float64(rss0)) / float64(n), nil
	}
	empty, emptyRSS, err := load("empty-")
	if err != nil {
		return err
	}
	full, fullRSS, err := load("full-")
	if err != nil {
		return err
	}
	r.Memory = MemoryResult{Sessions: n, TasksPerSession: perSession, BytesPerSession: empty, BytesPerTask: (full - empty) / perSession}
	if haveRSS {
		r.Memory.RSSPerSession, r.Memory.RSSPerTask = emptyRSS, (fullRSS-emptyRSS)/perSession
	}
	return nil
}

// rss is the process's resident set in bytes, after a collection has
// handed freed memory back to the system; 0 where /proc is missing.
func rss() uint64 {
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident uint64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return 0
	}
	return resident * uint64(os.Getpagesize())
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
