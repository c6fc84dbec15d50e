package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// The side-by-side part of the run: the daemon as a user runs it (the
// binary built from this tree, in a process of its own) against the raw
// single-commit loop and against the binary of a baseline commit, on the
// mix a working agent makes (openTasks open tasks per session: create one,
// complete the oldest), in rounds taken in turn so that the machine's drift
// weighs on all of them alike.

// DefaultBaseline is the commit the daemon is measured against: the last
// with the tasks projection and the log's index beside the log (issue 32
// took them out).
const DefaultBaseline = "6d900e9"

const (
	versusRounds = 3
	openTasks    = 20
	bigTasks     = 10_000
)

// VersusResult is the side-by-side part of a run.
type VersusResult struct {
	Baseline string        `json:"baseline,omitempty"` // "" when none could be built
	Skipped  string        `json:"skipped,omitempty"`  // why the baseline is missing
	Rounds   []VersusRound `json:"rounds"`
	// Bytes per logged write: the stored size of a log row (every
	// column), averaged over the rows the 64-session phases wrote.
	BytesPerWrite     float64   `json:"bytesPerWrite"`
	BaseBytesPerWrite float64   `json:"baseBytesPerWrite,omitempty"`
	Big               BigResult `json:"big"`
	BaseBig           BigResult `json:"baseBig,omitzero"`
}

// VersusRound is one round: each figure measured once, in turn.
type VersusRound struct {
	Raw1     float64       `json:"raw1PerSec"` // raw insert, one row per commit, full sync
	Raw1P50  time.Duration `json:"raw1P50"`
	Noop64   float64       `json:"noop64PerSec"`
	Now64    float64       `json:"now64PerSec"`
	Base64   float64       `json:"base64PerSec,omitempty"`
	Now1P50  time.Duration `json:"now1P50"`
	Base1P50 time.Duration `json:"base1P50,omitempty"`
}

// BigResult is one session of bigTasks tasks, over the socket.
type BigResult struct {
	Tasks      int           `json:"tasks"`
	List       time.Duration `json:"taskList"`      // TaskList, median of five
	FirstCall  time.Duration `json:"firstCall"`     // a TaskGet after a restart: the session is loaded
	Compaction time.Duration `json:"compaction"`    // sessions/compact end to end, median of three
	ListBytes  int           `json:"taskListBytes"` // the TaskList result's size
	Restart    time.Duration `json:"restart"`       // from exec to serving
	// View is SELECT * FROM tasks WHERE session_id = ? on the 10,000-task
	// session, in the sqlite3 shell (or through the driver without one).
	View time.Duration `json:"tasksView"`
}

// binary is a tasksessiond executable the run starts as its own process.
type binary struct {
	name, path string
}

// versus runs the side-by-side rounds and the big session.
func (b *bencher) versus(ctx context.Context, r *Results) error {
	now, err := b.build(ctx, "now", "")
	if err != nil {
		return fmt.Errorf("build this tree: %w", err)
	}
	v := &r.Versus
	var base *binary
	if b.cfg.Baseline != "" {
		if base, err = b.build(ctx, "baseline", b.cfg.Baseline); err != nil {
			v.Skipped = err.Error()
			fmt.Fprintf(b.cfg.Log, "bench: no baseline: %v\n", err)
			base = nil
		} else {
			v.Baseline = b.cfg.Baseline
		}
	}
	var nowRows, baseRows rowBytes
	for range versusRounds {
		var round VersusRound
		raw, err := b.rawSingle(ctx)
		if err != nil {
			return err
		}
		round.Raw1, round.Raw1P50 = raw.PerSec, raw.Latency.P50
		if round.Noop64, round.Now64, round.Now1P50, err = b.mix(ctx, *now, &nowRows); err != nil {
			return fmt.Errorf("this tree: %w", err)
		}
		if base != nil {
			if _, round.Base64, round.Base1P50, err = b.mix(ctx, *base, &baseRows); err != nil {
				return fmt.Errorf("baseline %s: %w", b.cfg.Baseline, err)
			}
		}
		v.Rounds = append(v.Rounds, round)
	}
	v.BytesPerWrite, v.BaseBytesPerWrite = nowRows.mean(), baseRows.mean()
	if v.Big, err = b.big(ctx, *now); err != nil || base == nil {
		return err
	}
	v.BaseBig, err = b.big(ctx, *base)
	return err
}

// build compiles cmd/tasksessiond of this tree (rev "") or of a commit.
func (b *bencher) build(ctx context.Context, name, rev string) (*binary, error) {
	path, err := Build(ctx, b.cfg.Dir, name, rev)
	if err != nil {
		return nil, err
	}
	return &binary{name: name, path: path}, nil
}

// Build compiles the tasksessiond binary of this tree (rev "") or of a
// commit (from git) into dir, and returns its path.
func Build(ctx context.Context, dir, name, rev string) (string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", err
	}
	src := root
	if rev != "" {
		src = filepath.Join(dir, "src-"+name)
		if err := os.MkdirAll(src, 0o700); err != nil {
			return "", err
		}
		cmd := exec.CommandContext(ctx, "sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, rev, src)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git archive %s (a clone without that commit has no baseline): %v: %s", rev, err, strings.TrimSpace(string(out)))
		}
	}
	out := filepath.Join(dir, "tasksessiond-"+name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/tasksessiond")
	cmd.Dir = src
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v: %s", name, err, strings.TrimSpace(string(msg)))
	}
	return out, nil
}

func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run the bench from inside the tasksessiond module")
	}
	return filepath.Dir(mod), nil
}

// rawSingle is the raw loop: one log row per commit, full sync.
func (b *bencher) rawSingle(ctx context.Context) (Rate, error) {
	var r Results
	if err := b.rawOnce(ctx, db.SyncFull, []int{1}, &r); err != nil {
		return Rate{}, err
	}
	return r.Raw[0], nil
}

// process is a daemon running as its own process.
type process struct {
	cmd    *exec.Cmd
	socket string
	dbPath string
}

func (b *bencher) startProcess(ctx context.Context, bin binary, dbPath, sync string) (*process, error) {
	p := &process{socket: b.path(bin.name + ".sock"), dbPath: dbPath}
	p.cmd = exec.Command(bin.path, "serve", "--db", dbPath, "--socket", p.socket, "--sync", sync, "--log-level", "error")
	p.cmd.Env = append(os.Environ(), "TASKSESSIOND_AUTOSTART=0")
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin.name, err)
	}
	c, err := dialRetry(ctx, p.socket)
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("%s did not start serving: %w", bin.name, err)
	}
	c.Close()
	return p, nil
}

func (p *process) stop() error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		return fmt.Errorf("daemon did not stop in 30s: %w", <-done)
	}
}

// mix runs one daemon binary: the no-op ceiling at 64 connections, then
// the agent mix with 64 sessions and with one, and adds the rows it logged
// to rows.
func (b *bencher) mix(ctx context.Context, bin binary, rows *rowBytes) (noop, rate64 float64, p50 time.Duration, err error) {
	p, err := b.startProcess(ctx, bin, b.path(bin.name+".db"), "full")
	if err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		err = errors.Join(err, p.stop())
		if err == nil {
			err = rows.add(ctx, p.dbPath)
		}
	}()
	noop, _, err = b.drive(ctx, p.socket, storageSessions, func(c *client.Client, _, _ int) error {
		_, err := c.Status(ctx)
		return err
	})
	if err != nil {
		return 0, 0, 0, err
	}
	for _, n := range []int{storageSessions, 1} {
		ids, err := seeded(ctx, p.socket, n, openTasks)
		if err != nil {
			return 0, 0, 0, err
		}
		rate, lat, err := b.drive(ctx, p.socket, n, agentMix(ctx, ids))
		if err != nil {
			return 0, 0, 0, err
		}
		if n == 1 {
			p50 = lat.P50
		} else {
			rate64 = rate
		}
	}
	return noop, rate64, p50, nil
}

// seeded creates n sessions holding open pending tasks each.
func seeded(ctx context.Context, socket string, n, open int) ([]string, error) {
	c, err := client.Dial(ctx, socket)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	calls := make([]client.TranscriptCall, open)
	for i := range calls {
		calls[i] = client.TranscriptCall{Name: tools.TaskCreate, Arguments: mixCreate(i)}
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("mix-%d-%d", time.Now().UnixNano(), i)
		if _, err := c.ReplaySession(ctx, ids[i], calls); err != nil {
			return nil, fmt.Errorf("seed session: %w", err)
		}
	}
	return ids, nil
}

// agentMix is the calls an agent makes on a list of openTasks open tasks:
// create one, then complete the oldest open one, so the open list keeps
// its length.
func agentMix(ctx context.Context, ids []string) func(c *client.Client, w, i int) error {
	return func(c *client.Client, w, i int) error {
		p := wire.ToolCall{SessionID: ids[w], CallID: fmt.Sprintf("m-%d-%d", w, i)}
		if i%2 == 1 {
			p.Name, p.Arguments = tools.TaskUpdate, json.RawMessage(fmt.Appendf(nil, `{"taskid":%d,"status":"completed"}`, i/2+1))
		} else {
			p.Name, p.Arguments = tools.TaskCreate, mixCreate(openTasks+i/2)
		}
		return callTool(ctx, c, p)
	}
}

// fillBig gives session id bigTasks tasks, call by call as an agent would,
// completing every other one as it goes.
func fillBig(ctx context.Context, c *client.Client, id string) error {
	for i := range bigTasks {
		if err := callTool(ctx, c, wire.ToolCall{SessionID: id, Name: tools.TaskCreate, CallID: fmt.Sprint("c-", i), Arguments: mixCreate(i)}); err != nil {
			return err
		}
		if i%2 == 1 {
			if err := callTool(ctx, c, wire.ToolCall{SessionID: id, Name: tools.TaskUpdate, CallID: fmt.Sprint("u-", i),
				Arguments: json.RawMessage(fmt.Appendf(nil, `{"taskid":%d,"status":"completed"}`, i/2+1))}); err != nil {
				return err
			}
		}
	}
	return nil
}

// mixCreate is a TaskCreate of usual size: a subject of a few words and a
// description of a sentence or two.
func mixCreate(i int) json.RawMessage {
	return fmt.Appendf(nil, `{"subject":"Step %d: write the parser tests","description":"Cover the error paths of the config parser: missing keys, wrong types and a file that is not UTF-8; run them under -race."}`, i+1)
}

// rowBytes sums the stored size of log rows.
type rowBytes struct {
	rows  int
	bytes int64
}

func (r *rowBytes) mean() float64 {
	if r.rows == 0 {
		return 0
	}
	return float64(r.bytes) / float64(r.rows)
}

// add reads every row of the database's log and counts each column's
// stored size: text and blobs by their length, numbers as 8 bytes.
func (r *rowBytes) add(ctx context.Context, path string) error {
	sqlDB, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer sqlDB.Close()
	rows, err := sqlDB.QueryContext(ctx, `SELECT * FROM tool_calls`)
	if err != nil {
		return fmt.Errorf("read the log: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		r.rows++
		for _, v := range vals {
			switch v := v.(type) {
			case string:
				r.bytes += int64(len(v))
			case []byte:
				r.bytes += int64(len(v))
			case nil:
			default:
				r.bytes += 8
			}
		}
	}
	return rows.Err()
}

// big measures one session of bigTasks tasks over the socket: TaskList,
// the first call after a restart (the session is loaded), compaction.
func (b *bencher) big(ctx context.Context, bin binary) (res BigResult, err error) {
	res.Tasks = bigTasks
	dbPath := b.path(bin.name + "-big.db")
	// Built under normal sync, call by call as an agent would (half of
	// them completed, then), and measured after a restart under full.
	p, err := b.startProcess(ctx, bin, dbPath, "normal")
	if err != nil {
		return res, err
	}
	stopped := false
	defer func() {
		if !stopped {
			err = errors.Join(err, p.stop())
		}
	}()
	c, err := client.Dial(ctx, p.socket)
	if err != nil {
		return res, err
	}
	defer func() { c.Close() }()
	id := "big"
	if _, err := c.CreateSession(ctx, wire.CreateSession{SessionID: id}); err != nil {
		return res, err
	}
	if err := fillBig(ctx, c, id); err != nil {
		return res, err
	}
	// A restart: the next call loads the session.
	c.Close()
	if err := p.stop(); err != nil {
		return res, err
	}
	stopped = true
	t0 := time.Now()
	if p, err = b.startProcess(ctx, bin, dbPath, "full"); err != nil {
		return res, err
	}
	stopped = false
	res.Restart = time.Since(t0)
	if c, err = client.Dial(ctx, p.socket); err != nil {
		return res, err
	}
	t0 = time.Now()
	if err := callTool(ctx, c, wire.ToolCall{SessionID: id, Name: tools.TaskGet, Arguments: json.RawMessage(`{"taskid":1}`)}); err != nil {
		return res, err
	}
	res.FirstCall = time.Since(t0)
	var lists []time.Duration
	for range 5 {
		t0 := time.Now()
		out, err := c.CallTool(ctx, client.ToolCall{SessionID: id, Name: tools.TaskList})
		if err != nil {
			return res, err
		}
		lists = append(lists, time.Since(t0))
		res.ListBytes = len(out.Text())
	}
	var compactions []time.Duration
	for i := range 3 {
		t0 := time.Now()
		out, err := c.Compact(ctx, wire.Compact{SessionID: id})
		if err != nil {
			return res, fmt.Errorf("compaction %d: %w", i+1, err)
		}
		compactions = append(compactions, time.Since(t0))
		id = out.Session.ID
	}
	res.List, res.Compaction = median(lists), median(compactions)
	res.View, err = tasksView(ctx, dbPath, "big")
	return res, err
}

// tasksView times the tasks view of one session as a user reads it: in
// the sqlite3 shell when there is one, the median of five.
func tasksView(ctx context.Context, dbPath, id string) (time.Duration, error) {
	shell, _ := exec.LookPath("sqlite3")
	var took []time.Duration
	for range 5 {
		var t time.Duration
		var err error
		if shell != "" {
			t, err = shellTime(ctx, shell, dbPath, "SELECT * FROM tasks WHERE session_id = '"+id+"';")
		} else {
			t, err = driverTime(ctx, dbPath, id)
		}
		if err != nil {
			return 0, fmt.Errorf("tasks view: %w", err)
		}
		took = append(took, t)
	}
	return median(took), nil
}

// shellTime runs query in the sqlite3 shell and returns the time the
// shell's own timer gives it.
func shellTime(ctx context.Context, shell, dbPath, query string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, shell, "-readonly", dbPath)
	cmd.Stdin = strings.NewReader(".timer on\n" + query + "\n")
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("sqlite3: %w", err)
	}
	i := bytes.LastIndex(out, []byte("Run Time: real "))
	if i < 0 {
		return 0, errors.New("sqlite3 printed no time")
	}
	var secs float64
	if _, err := fmt.Sscanf(string(out[i:]), "Run Time: real %f", &secs); err != nil {
		return 0, fmt.Errorf("sqlite3's time: %w", err)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

func driverTime(ctx context.Context, dbPath, id string) (time.Duration, error) {
	d, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	t0 := time.Now()
	rows, err := d.QueryContext(ctx, `SELECT * FROM tasks WHERE session_id = ?`, id)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
	}
	rows.Close()
	return time.Since(t0), rows.Err()
}

// Spread is a figure's minimum, median and maximum over the rounds.
type Spread struct{ Min, Median, Max float64 }

func spread(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Spread{Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
}

// over returns f over the rounds, skipping rounds where it is 0 (no
// baseline).
func (v VersusResult) over(f func(VersusRound) float64) Spread {
	var xs []float64
	for _, r := range v.Rounds {
		if x := f(r); x != 0 && !math.IsInf(x, 0) && !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	return spread(xs)
}

// The side-by-side figures, each per round.
var (
	vsRaw    = func(r VersusRound) float64 { return r.Now64 / r.Raw1 }
	vsBase   = func(r VersusRound) float64 { return safeDiv(r.Now64, r.Base64) }
	vsNoop   = func(r VersusRound) float64 { return r.Now64 / r.Noop64 }
	baseRaw  = func(r VersusRound) float64 { return safeDiv(r.Base64, r.Raw1) }
	p50Over  = func(r VersusRound) float64 { return float64(r.Now1P50-r.Raw1P50) / float64(time.Microsecond) }
	baseOver = func(r VersusRound) float64 {
		if r.Base1P50 == 0 {
			return 0
		}
		return float64(r.Base1P50-r.Raw1P50) / float64(time.Microsecond)
	}
)

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func printVersus(w io.Writer, v VersusResult) {
	if len(v.Rounds) == 0 {
		return
	}
	base := v.Baseline
	if base == "" {
		base = "none (" + v.Skipped + ")"
	}
	fmt.Fprintf(w, "side by side: the binaries in their own processes, full sync, %d open tasks per session (create one, complete the oldest), %d rounds in turn; baseline %s\n",
		openTasks, len(v.Rounds), base)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\traw 1/commit per s\traw p50\tno-op 64 per s\tnow 64 per s\tbaseline 64 per s\tnow 1 p50\tbaseline 1 p50\t")
	for i, r := range v.Rounds {
		fmt.Fprintf(tw, "%d\t%.0f\t%s\t%.0f\t%.0f\t%.0f\t%s\t%s\t\n", i+1, r.Raw1, us(r.Raw1P50), r.Noop64, r.Now64, r.Base64, us(r.Now1P50), us(r.Base1P50))
	}
	tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "ratio over the rounds\tmin\tmedian\tmax\t")
	for _, row := range []struct {
		name string
		f    func(VersusRound) float64
		unit string
	}{
		{"64 sessions: now / raw 1/commit", vsRaw, "×"},
		{"64 sessions: baseline / raw 1/commit", baseRaw, "×"},
		{"64 sessions: now / baseline", vsBase, "×"},
		{"64 sessions: now / no-op", vsNoop, "×"},
		{"1 session p50: now − raw (µs)", p50Over, ""},
		{"1 session p50: baseline − raw (µs)", baseOver, ""},
	} {
		s := v.over(row.f)
		if s == (Spread{}) {
			continue
		}
		fmt.Fprintf(tw, "%s\t%.2f%s\t%.2f%s\t%.2f%s\t\n", row.name, s.Min, row.unit, s.Median, row.unit, s.Max, row.unit)
	}
	tw.Flush()
	fmt.Fprintf(w, "bytes per logged write: %.0f now, %.0f baseline\n", v.BytesPerWrite, v.BaseBytesPerWrite)
	for _, g := range []struct {
		name string
		BigResult
	}{{"now", v.Big}, {"baseline", v.BaseBig}} {
		if g.Tasks == 0 {
			continue
		}
		fmt.Fprintf(w, "%s, one session of %d tasks over the socket: TaskList %s (%d bytes of text), first call after a restart %s (serving %s after exec), compaction %s; its tasks view %s\n",
			g.name, g.Tasks, ms(g.List), g.ListBytes, ms(g.FirstCall), ms(g.Restart), ms(g.Compaction), ms(g.View))
	}
	fmt.Fprintln(w)
}

// versusTargets are issue 20's targets, from the medians of the rounds.
func versusTargets(v VersusResult, add func(name string, met bool, format string, a ...any)) {
	if len(v.Rounds) == 0 {
		return
	}
	s := v.over(vsRaw)
	add("64 sessions, full: ≥ 2× raw one row per commit", s.Median >= 2, "median %.2f× (%.2f–%.2f)", s.Median, s.Min, s.Max)
	s = v.over(p50Over)
	add("1 session, full: p50 ≤ raw single-commit p50 + 250µs", s.Median <= 250, "median +%.0fµs (%.0f–%.0f)", s.Median, s.Min, s.Max)
	add("≤ 1 KB per logged write", v.BytesPerWrite <= 1024, "%.0f bytes (baseline %.0f)", v.BytesPerWrite, v.BaseBytesPerWrite)
	g, b := v.Big, v.BaseBig
	add("10,000 tasks: first call after a restart < 150 ms", g.FirstCall < 150*time.Millisecond, "%s (baseline %s)", ms(g.FirstCall), ms(b.FirstCall))
	add("10,000 tasks: SELECT * FROM tasks WHERE session_id = ? < 100 ms", g.View < 100*time.Millisecond, "%s (baseline %s)", ms(g.View), ms(b.View))
	add("10,000 tasks: compaction over the socket < 100 ms", g.Compaction < 100*time.Millisecond, "%s (baseline %s)", ms(g.Compaction), ms(b.Compaction))
	add("10,000 tasks: TaskList < 20 ms", g.List < 20*time.Millisecond, "%s (baseline %s)", ms(g.List), ms(b.List))
}
