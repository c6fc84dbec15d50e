package tasksessiond

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
)

// A session's log is a chain: each row carries a checksum of what it
// logged and of the row before it, and the session's head (its last seq
// and checksum) is written beside the log in the same transaction. A
// byte flipped, a row edited, deleted, moved or copied, by whoever, then
// breaks the chain where it happened, and the session is refused by name
// rather than served as another list (git's object ids, PostgreSQL's page
// checksums). An edit that recomputes every checksum is not caught: the
// chain detects damage, it does not authenticate.

// LogHead is a session's last logged row as recorded beside its log. Every
// session has one from its creation: seq 0 and its chain's start
// (ChainStart) until its first row is logged. A session without one is
// damage, never an empty log: the head is the only record of where a log
// ended, so its rows and head deleted together would otherwise leave
// nothing saying the session ever had calls.
type LogHead struct {
	Seq      int64
	Checksum int64
	// Missing says no head is recorded (Seq and Checksum are then 0).
	Missing bool
}

// Summer computes row checksums, reusing its hash: not for concurrent use.
type Summer struct {
	h   hash.Hash
	buf [binary.MaxVarintLen64]byte
	sum [sha256.Size]byte
}

// Sum is the checksum of c chained to prev (the row before's, 0 for seq
// 1): SHA-256 of what the row logged that replay or a retry reads (the
// session, seq, callId, tool, arguments, is_error, result, forced), each
// field length-prefixed, its first 8 bytes as a signed integer, never 0
// (0 is a row without one). The change columns, derived from the
// arguments and checked against them, and created_at are not covered.
func (s *Summer) Sum(prev int64, c *Call) int64 {
	if s.h == nil {
		s.h = sha256.New()
	}
	h := s.h
	h.Reset()
	binary.BigEndian.PutUint64(s.buf[:8], uint64(prev))
	h.Write(s.buf[:8])
	s.bytes([]byte(c.SessionID))
	binary.BigEndian.PutUint64(s.buf[:8], uint64(c.Seq))
	h.Write(s.buf[:8])
	s.bytes([]byte(c.CallID))
	s.bytes([]byte(c.Name))
	s.bytes(c.Arguments)
	s.bytes(c.Result)
	var flags [1]byte
	if c.IsError {
		flags[0] |= 1
	}
	if c.Forced {
		flags[0] |= 2
	}
	h.Write(flags[:])
	v := int64(binary.BigEndian.Uint64(h.Sum(s.sum[:0])))
	if v == 0 {
		v = 1
	}
	return v
}

func (s *Summer) bytes(b []byte) {
	n := binary.PutUvarint(s.buf[:], uint64(len(b)))
	s.h.Write(s.buf[:n])
	s.h.Write(b)
}

// SumSnapshot is the checksum a successor's log starts from: its first
// row chains to its snapshot (the tasks it started from and its next
// taskid), so that an edit of the snapshot breaks the chain too.
func (s *Summer) SumSnapshot(snap *Snapshot) int64 {
	if s.h == nil {
		s.h = sha256.New()
	}
	h := s.h
	h.Reset()
	h.Write([]byte("snapshot"))
	binary.BigEndian.PutUint64(s.buf[:8], uint64(snap.NextTaskid))
	h.Write(s.buf[:8])
	for _, t := range snap.Tasks {
		binary.BigEndian.PutUint64(s.buf[:8], uint64(t.Taskid))
		h.Write(s.buf[:8])
		s.bytes([]byte(t.Status))
		s.bytes([]byte(t.Subject))
		s.bytes([]byte(t.Description))
	}
	v := int64(binary.BigEndian.Uint64(h.Sum(s.sum[:0])))
	if v == 0 {
		v = 1
	}
	return v
}

// ChainStart is the checksum a session's first row chains to: 0, or its
// snapshot's (SumSnapshot) for a session made by compaction.
func ChainStart(snap *Snapshot) int64 {
	if snap == nil {
		return 0
	}
	var s Summer
	return s.SumSnapshot(snap)
}

// Checksum is Sum with a Summer of its own.
func Checksum(prev int64, c *Call) int64 {
	var s Summer
	return s.Sum(prev, c)
}

// BrokenLogError is a session whose log fails its check: a row missing,
// edited or out of place. The session is refused, for reads and writes,
// until fsck has been run; other sessions go on.
type BrokenLogError struct {
	SessionID string
	Seq       int64  // where the chain breaks
	What      string // what was found there, for a person
}

func (e *BrokenLogError) Error() string {
	return fmt.Sprintf("session %s: %s (checksum chain broken at seq %d): run tasksessiond fsck", e.SessionID, e.What, e.Seq)
}

// Is makes a BrokenLogError an ErrDamaged.
func (e *BrokenLogError) Is(target error) bool { return target == ErrDamaged }

// ChainCheck verifies a session's log row by row, in the order read, and
// at its end against the head. Start is what its first row chains to
// (ChainStart).
type ChainCheck struct {
	SessionID string
	Head      LogHead
	Start     int64
	summer    Summer
	seq, sum  int64 // the last row checked
	started   bool
	err       *BrokenLogError
}

// Row checks the next row; once one has failed, every later call returns
// that failure.
func (v *ChainCheck) Row(c *Call) error {
	if v.err != nil {
		return v.err
	}
	if !v.started {
		v.sum, v.started = v.Start, true
	}
	want := v.seq + 1
	switch {
	case c.Seq > want:
		what := fmt.Sprintf("row %d is missing from its log", want)
		if c.Seq > want+1 {
			what = fmt.Sprintf("rows %d to %d are missing from its log", want, c.Seq-1)
		}
		return v.fail(c.Seq, what)
	case c.Seq < want:
		return v.fail(c.Seq, fmt.Sprintf("row %d appears twice in its log", c.Seq))
	case c.Checksum == 0:
		return v.fail(c.Seq, fmt.Sprintf("row %d has no checksum", c.Seq))
	}
	if got := v.summer.Sum(v.sum, c); got != c.Checksum {
		what := fmt.Sprintf("row %d does not match its checksum (edited, copied from elsewhere, or a byte flipped)", c.Seq)
		if c.Seq == 1 && v.Start != 0 {
			what = "row 1 does not match its checksum, which covers the snapshot it started from (the row or the snapshot edited, or a byte flipped)"
		}
		return v.fail(c.Seq, what)
	}
	v.seq, v.sum = c.Seq, c.Checksum
	return nil
}

// End checks that the rows read end where the head says.
func (v *ChainCheck) End() error {
	if v.err != nil {
		return v.err
	}
	if !v.started {
		v.sum, v.started = v.Start, true
	}
	switch {
	case v.Head.Missing && v.seq == 0:
		return v.fail(1, "its head (the log_heads row every session has from its creation) is missing, and so is every row of its log: deleted together, or lost")
	case v.Head.Missing:
		return v.fail(v.seq+1, fmt.Sprintf("its head (the log_heads row every session has from its creation) is missing: its rows 1 to %d check, but nothing records that its log ended there", v.seq))
	case v.seq == 0 && v.Head.Seq == 0 && v.Start != 0:
		return v.fail(1, "its log is empty: a session made by compaction logs its first row with its snapshot")
	case v.seq < v.Head.Seq:
		what := fmt.Sprintf("row %d is missing from the end of its log", v.Head.Seq)
		if v.Head.Seq > v.seq+1 {
			what = fmt.Sprintf("rows %d to %d are missing from the end of its log", v.seq+1, v.Head.Seq)
		}
		return v.fail(v.seq+1, what)
	case v.seq > v.Head.Seq:
		return v.fail(v.Head.Seq+1, fmt.Sprintf("its log has rows past its recorded head (seq %d)", v.Head.Seq))
	case v.sum != v.Head.Checksum:
		return v.fail(v.seq, fmt.Sprintf("its last row %d is not the one its head recorded", v.seq))
	}
	return nil
}

// Last is the last row checked (seq 0 and Start before any): what a head
// consistent with the rows read would record.
func (v *ChainCheck) Last() LogHead {
	if !v.started {
		return LogHead{Checksum: v.Start}
	}
	return LogHead{Seq: v.seq, Checksum: v.sum}
}

func (v *ChainCheck) fail(seq int64, what string) error {
	v.err = &BrokenLogError{SessionID: v.SessionID, Seq: seq, What: what}
	return v.err
}
