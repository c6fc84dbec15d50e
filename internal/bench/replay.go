package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/tasksessiond/tasksessiond/internal/db"
	"github.com/tasksessiond/tasksessiond/internal/replay"
	"github.com/tasksessiond/tasksessiond/internal/session"
	"github.com/tasksessiond/tasksessiond/wire"
)

// transcript is n calls: creates, then updates cycling over them.
func transcript(n, tasks int) []wire.TranscriptCall {
	calls := make([]wire.TranscriptCall, n)
	for i := range calls {
		if i < tasks {
			calls[i] = wire.TranscriptCall{Name: "TaskCreate", CallID: fmt.Sprintf("toolu_%024d", i), Arguments: json.RawMessage(rowArgs)}
			continue
		}
		status := []string{"inprogress", "pending", "completed"}[i%3]
		calls[i] = wire.TranscriptCall{Name: "TaskUpdate", CallID: fmt.Sprintf("toolu_%024d", i), Arguments: json.RawMessage(fmt.Sprintf(`{"taskid":%d,"status":%q}`, i%tasks+1, status))}
	}
	return calls
}

// replay compares rebuilding a session from its log with a raw scan of
// the same rows.
func (b *bencher) replay(ctx context.Context, r *Results) error {
	path := b.path("replay.db")
	d, err := db.Open(ctx, path, db.Options{Sync: db.SyncNormal})
	if err != nil {
		return err
	}
	defer d.Close()
	rows := b.sz.replayRows
	if _, err := session.NewManager(d, nil).Replay(ctx, wire.ReplaySession{SessionID: "big", Calls: transcript(rows, rows/10)}); err != nil {
		return err
	}
	raw, err := sql.Open("sqlite", db.WriterDSN(path, db.Options{Sync: db.SyncNormal}))
	if err != nil {
		return err
	}
	defer raw.Close()
	scan := func() error {
		rs, err := raw.QueryContext(ctx, db.ScanCallsSQL, "big")
		if err != nil {
			return err
		}
		defer rs.Close()
		var name string
		var args, result sql.RawBytes
		var callID sql.NullString
		var seq int64
		var isErr, forced bool
		var taskid sql.NullInt64
		var status, subject, description sql.NullString
		var checksum sql.NullInt64
		for rs.Next() {
			if err := rs.Scan(&seq, &callID, &name, &args, &isErr, &result, &forced, &taskid, &status, &subject, &description, &checksum); err != nil {
				return err
			}
		}
		return rs.Err()
	}
	scanTook, err := best(3, scan)
	if err != nil {
		return err
	}
	// The whole log replayed, as loading a session does it.
	replayTook, err := best(3, func() error {
		_, err := replay.Session(ctx, d, "big", replay.Options{})
		return err
	})
	if err != nil {
		return err
	}
	r.Replay = ReplayResult{Rows: rows, PerSec: float64(rows) / replayTook.Seconds(), ScanPerSec: float64(rows) / scanTook.Seconds()}
	r.Replay.Ratio = r.Replay.PerSec / r.Replay.ScanPerSec
	return nil
}
