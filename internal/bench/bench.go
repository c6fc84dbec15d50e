// Package bench measures the daemon against its physical limits in one
// run, on temp databases with the daemon's own pragmas: raw SQLite inserts
// of the log's row shape, the transport's no-op ceiling over the same
// socket and connections, the daemon's calls, replay against a raw scan,
// compaction, resume, start-up and memory. Figures are meant to be read as
// ratios to the baselines measured in the same run.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// Config configures a run.
type Config struct {
	Dir   string    // scratch space for the databases and sockets
	Quick bool      // a smoke run: short phases, small sizes
	Log   io.Writer // progress; nil for none
	// Baseline is the commit whose binary the daemon is measured against
	// side by side ("" for none).
	Baseline string
	// Only names the parts to run, comma-separated; "" runs them all.
	Only string
}

// sizes are the run's phase lengths and data sizes.
type sizes struct {
	phase          time.Duration
	sustained      time.Duration
	replayRows     int
	compactTasks   []int
	memSessions    int
	startupSession int
}

func (c Config) sizes() sizes {
	if c.Quick {
		return sizes{phase: 400 * time.Millisecond, sustained: 2 * time.Second, replayRows: 10_000, compactTasks: []int{100, 1000, 10_000}, memSessions: 1000, startupSession: 10_000}
	}
	return sizes{phase: 3 * time.Second, sustained: 60 * time.Second, replayRows: 100_000, compactTasks: []int{100, 1000, 10_000}, memSessions: 10_000, startupSession: 100_000}
}

// Latency is a distribution of one operation's time.
type Latency struct {
	P50  time.Duration `json:"p50"`
	P99  time.Duration `json:"p99"`
	P999 time.Duration `json:"p999"`
}

// Rate is a throughput measurement.
type Rate struct {
	Name    string  `json:"name"`
	Sync    string  `json:"sync,omitempty"`
	Clients int     `json:"clients,omitempty"`
	PerSec  float64 `json:"perSec"`
	Latency Latency `json:"latency"`
	// Ratios to the baselines of the same run.
	VsNoop      float64 `json:"vsNoop,omitempty"`
	VsRawSingle float64 `json:"vsRawSingle,omitempty"`
}

// Results is everything a run measured.
type Results struct {
	Machine    Machine         `json:"machine"`
	Quick      bool            `json:"quick"`
	Raw        []Rate          `json:"raw"`
	Storage    []StorageResult `json:"storage"`
	Sustained  SustainedResult `json:"sustained"`
	Targets    []Target        `json:"targets"`
	Noop       []Rate          `json:"noop"`
	Unlogged   []Rate          `json:"unlogged"`
	Daemon     []Rate          `json:"daemon"`
	InProcess  Rate            `json:"inProcess"`
	Replay     ReplayResult    `json:"replay"`
	Compaction []Timed         `json:"compaction"`
	Resume     ResumeResult    `json:"resume"`
	Startup    StartupResult   `json:"startup"`
	Memory     MemoryResult    `json:"memory"`
	Versus     VersusResult    `json:"versus"`
	Heavy      HeavyResult     `json:"writeHeavy"`
	Took       time.Duration   `json:"took"`
}

// Machine says where the run happened.
type Machine struct {
	GOOS, GOARCH, Go string
	CPUs             int
}

// ReplayResult compares replay with a raw scan of the same rows.
type ReplayResult struct {
	Rows       int     `json:"rows"`
	PerSec     float64 `json:"perSec"`
	ScanPerSec float64 `json:"scanPerSec"`
	Ratio      float64 `json:"ratio"`
}

// Timed is one timed operation.
type Timed struct {
	Tasks int           `json:"tasks"`
	Took  time.Duration `json:"took"`
}

// ResumeResult compares resuming a compacted session whose ancestor holds
// a long history with one whose ancestor holds a short one (same tasks).
type ResumeResult struct {
	Tasks         int           `json:"tasks"`
	LongAncestor  int           `json:"longAncestorCalls"`
	ShortAncestor int           `json:"shortAncestorCalls"`
	LongTook      time.Duration `json:"longTook"`
	ShortTook     time.Duration `json:"shortTook"`
	Ratio         float64       `json:"ratio"`
}

// StartupResult is the time from opening a database to serving a request.
type StartupResult struct {
	Sessions int           `json:"sessions"`
	Took     time.Duration `json:"took"`
}

// MemoryResult is the memory held per loaded session and per task: the Go
// heap, and the process's resident set (RSS, Linux only: 0 elsewhere).
type MemoryResult struct {
	Sessions        int     `json:"sessions"`
	TasksPerSession int     `json:"tasksPerSession"`
	BytesPerSession float64 `json:"bytesPerSession"`
	BytesPerTask    float64 `json:"bytesPerTask"`
	RSSPerSession   float64 `json:"rssPerSession,omitempty"`
	RSSPerTask      float64 `json:"rssPerTask,omitempty"`
}

// Run measures everything.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	start := time.Now()
	sz := cfg.sizes()
	r := &Results{Quick: cfg.Quick, Machine: Machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, Go: runtime.Version(), CPUs: runtime.NumCPU()}}
	b := &bencher{cfg: cfg, sz: sz}
	steps := []struct {
		name string
		run  func(context.Context, *Results) error
	}{
		{"raw SQLite", b.raw},
		{"storage ceilings", b.storage},
		{"socket", b.socket},
		{"in process", b.inProcess},
		{"sustained load", b.sustained},
		{"replay", b.replay},
		{"compaction", b.compaction},
		{"resume", b.resume},
		{"start-up", b.startup},
		{"memory", b.memory},
		{"side by side", b.versus},
		{"write-heavy", b.heavy},
	}
	for _, s := range steps {
		if cfg.Only != "" && !slices.Contains(strings.Split(cfg.Only, ","), s.name) {
			continue
		}
		fmt.Fprintf(cfg.Log, "bench: %s...\n", s.name)
		if err := s.run(ctx, r); err != nil {
			return r, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	r.Targets = targets(r)
	r.Took = time.Since(start)
	return r, nil
}

type bencher struct {
	cfg Config
	sz  sizes
	n   int
}

// path returns a fresh file name in the scratch directory.
func (b *bencher) path(name string) string {
	b.n++
	return filepath.Join(b.cfg.Dir, fmt.Sprintf("%02d-%s", b.n, name))
}

// A TaskCreate row as the daemon logs it, for the raw baseline.
var (
	rowArgs   = `{"subject":"Write the parser tests","description":"Cover the error paths."}`
	rowResult = mustJSON(tools.ErrorResult(strings.Repeat("x", 400)))
)

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// best runs f n times and returns the shortest time.
func best(n int, f func() error) (time.Duration, error) {
	var min time.Duration
	for i := range n {
		t0 := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		if d := time.Since(t0); i == 0 || d < min {
			min = d
		}
	}
	return min, nil
}

func percentiles(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(int(q*float64(len(d))), len(d)-1)] }
	return Latency{P50: at(0.50), P99: at(0.99), P999: at(0.999)}
}

// TempDir makes a scratch directory for a run.
func TempDir() (string, error) { return os.MkdirTemp("", "tsd-bench") }
