package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLine bounds one message. The largest legitimate request, a task
// description at its limit escaped as JSON, is well under it.
const DefaultMaxLine = 1 << 20

// ErrLineTooLong is returned by Reader.Next for a line over the limit; the
// rest of that line has been skipped, so the next call reads the next line.
var ErrLineTooLong = errors.New("line too long")

// Reader reads newline-delimited messages with a size limit.
type Reader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewReader returns a Reader of lines up to max bytes (DefaultMaxLine if max <= 0).
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxLine
	}
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next non-blank line, without its newline. The slice is
// valid until the next call. A final line without a newline is returned too.
func (r *Reader) Next() ([]byte, error) {
	for {
		r.buf = r.buf[:0]
		tooLong := false
		for {
			chunk, err := r.r.ReadSlice('\n')
			if !tooLong {
				n := len(r.buf) + len(chunk)
				if bytes.HasSuffix(chunk, []byte("\n")) {
					n-- // the newline does not count
				}
				if n > r.max {
					tooLong = true
					r.buf = r.buf[:0]
				} else {
					r.buf = append(r.buf, chunk...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && (err != io.EOF || len(r.buf) == 0 && !tooLong) {
				return nil, err
			}
			break
		}
		if tooLong {
			return nil, fmt.Errorf("%w: the limit is %d bytes", ErrLineTooLong, r.max)
		}
		line := bytes.TrimSpace(r.buf)
		if len(line) > 0 {
			return line, nil
		}
		if len(r.buf) == 0 {
			return nil, io.EOF
		}
	}
}

// Wait blocks until the start of a message is available: it skips the
// blank space between messages and returns once a byte of the next one can
// be read. A server arms its per-message deadline after Wait, so that a
// connection idle between messages is not timed out, and one stalled
// half-way through a message is.
func (r *Reader) Wait() error {
	for {
		b, err := r.r.Peek(1)
		if err != nil {
			return err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			r.r.Discard(1)
		default:
			return nil
		}
	}
}

// LineBuffered reports whether a whole line is buffered already, so that
// Next will not wait for the peer.
func (r *Reader) LineBuffered() bool {
	b, _ := r.r.Peek(r.r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}
