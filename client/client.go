// Package client is a Go client for the tasksessiond daemon: a typed method
// for every wire method, over one Unix-socket connection.
//
// A Client is safe for concurrent use. Calls on one connection are served by
// the daemon in the order they are sent; open several clients for parallelism.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/tasksessiond/tasksessiond/wire"
)

// Error is a JSON-RPC error from the daemon, as a client decodes it (its
// Data still bytes: wire.SealedData or wire.LeasedData by the code).
// Compare codes with errors.Is against the Err* values, or read Code.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// SuccessorID returns the successor of a sealed session from the error's data.
func (e *Error) SuccessorID() string {
	var d wire.SealedData
	json.Unmarshal(e.Data, &d)
	return d.SuccessorID
}

// Errors to compare with errors.Is.
var (
	ErrParse              = &Error{Code: wire.CodeParseError}
	ErrInvalidRequest     = &Error{Code: wire.CodeInvalidRequest}
	ErrMethodNotFound     = &Error{Code: wire.CodeMethodNotFound}
	ErrInvalidParams      = &Error{Code: wire.CodeInvalidParams}
	ErrInternal           = &Error{Code: wire.CodeInternal}
	ErrSessionNotFound    = &Error{Code: wire.CodeSessionNotFound}
	ErrSessionSealed      = &Error{Code: wire.CodeSessionSealed}
	ErrCallIDConflict     = &Error{Code: wire.CodeCallIDConflict}
	ErrStorageUnavailable = &Error{Code: wire.CodeStorageUnavailable}
	ErrSessionExists      = &Error{Code: wire.CodeSessionExists}
)

// ErrClosed is returned by calls on a closed or broken connection.
var ErrClosed = errors.New("tasksessiond: connection closed")

// Notification is a message the daemon sends without being asked.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Client is a connection to the daemon.
type Client struct {
	nc net.Conn

	wmu sync.Mutex // serialises writes

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan response
	err     error // set when the connection broke
	notify  func(Notification)
	done    chan struct{}
}

type response struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
	// line is a response whose id was read from its start (the daemon
	// writes the id first): the caller decodes it once, into its result.
	line []byte
}

// quickID reads the id of a response the daemon wrote, from its first
// bytes: {"jsonrpc":"2.0","id":N,"result": or ,"error":. Anything else is
// decoded whole.
func quickID(line []byte) (int64, bool) {
	if !bytes.HasPrefix(line, []byte(wire.ResponseHead)) {
		return 0, false
	}
	rest := line[len(wire.ResponseHead):]
	end := bytes.IndexByte(rest, ',')
	if end <= 0 || end > 19 {
		return 0, false
	}
	id, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil {
		return 0, false
	}
	rest = rest[end+1:]
	if !bytes.HasPrefix(rest, []byte(`"result":`)) && !bytes.HasPrefix(rest, []byte(`"error":`)) {
		return 0, false
	}
	return id, true
}

// Dial connects to the daemon's socket. It first checks that the socket is
// this user's daemon's, as the daemon checks its clients: the socket's
// directory must be this user's and no one else's to write to, and the process
// listening must run as this user (SO_PEERCRED on Linux, LOCAL_PEERCRED on
// macOS and FreeBSD). Anything else is refused with ErrUntrusted before a
// byte is sent: what such a listener answered would reach the model.
func Dial(ctx context.Context, socket string) (*Client, error) {
	if err := checkDir(socket); err != nil {
		return nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, fmt.Errorf("connect to tasksessiond at %s: %w (is the daemon running? start it with `tasksessiond serve`)", socket, err)
	}
	if err := checkPeer(socket, nc); err != nil {
		nc.Close()
		return nil, err
	}
	c := &Client{nc: nc, pending: make(map[int64]chan response), done: make(chan struct{})}
	go c.read()
	return c, nil
}

// Done is closed when the connection has ended (closed, broken, or ended
// by the daemon); Err then says why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, or nil while it is open.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// OnNotification sets the function called (on the reading goroutine) for
// each notification, e.g. after sessions/watch.
func (c *Client) OnNotification(f func(Notification)) {
	c.mu.Lock()
	c.notify = f
	c.mu.Unlock()
}

// Close closes the connection; pending calls fail with ErrClosed.
func (c *Client) Close() error {
	err := c.nc.Close()
	<-c.done
	return err
}

func (c *Client) read() {
	defer close(c.done)
	sc := bufio.NewScanner(c.nc)
	sc.Buffer(make([]byte, 64<<10), 1<<30) // a whole list of long tasks is one line
	for sc.Scan() {
		if id, ok := quickID(sc.Bytes()); ok {
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- response{line: bytes.Clone(sc.Bytes())}
			}
			continue
		}
		var r response
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			// Not a message of the protocol: what follows cannot be
			// trusted to pair with the calls, so the connection ends.
			c.fail(fmt.Errorf("%w: the daemon sent a line that is not JSON-RPC: %v", ErrClosed, err))
			c.nc.Close()
			return
		}
		if r.ID == nil || string(r.ID) == "null" {
			c.mu.Lock()
			f := c.notify
			c.mu.Unlock()
			if r.Method != "" && f != nil {
				f(Notification{Method: r.Method, Params: r.Params})
			}
			if r.Error != nil && r.Method == "" {
				// An error the daemon could not tie to a request (e.g. the
				// connection limit): it fails every pending call.
				c.fail(fmt.Errorf("%w: %w", ErrClosed, r.Error))
				c.nc.Close()
				return
			}
			continue
		}
		id, err := strconv.ParseInt(string(r.ID), 10, 64)
		if err != nil {
			c.fail(fmt.Errorf("%w: the daemon answered an id this client never sent: %s", ErrClosed, r.ID))
			c.nc.Close()
			return
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	err := sc.Err()
	if err == nil {
		err = ErrClosed
	} else {
		err = fmt.Errorf("%w: %v", ErrClosed, err)
	}
	c.fail(err)
}

func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	for id, ch := range c.pending {
		delete(c.pending, id)
		close(ch)
	}
}

// Call sends a request and decodes its result into result (if not nil).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if params == nil {
		params = struct{}{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s: encode params: %w", method, err)
	}
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()

	// The envelope is written around the encoded params, not encoded
	// again with them (json.Marshal would scan and copy them twice).
	name, _ := json.Marshal(method)
	msg := make([]byte, 0, len(p)+len(name)+64)
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = strconv.AppendInt(msg, id, 10)
	msg = append(msg, `,"method":`...)
	msg = append(msg, name...)
	msg = append(msg, `,"params":`...)
	msg = append(msg, p...)
	msg = append(msg, "}\n"...)
	c.wmu.Lock()
	_, err = c.nc.Write(msg)
	c.wmu.Unlock()
	if err != nil {
		c.forget(id)
		return fmt.Errorf("%s: %w: %v", method, ErrClosed, err)
	}

	select {
	case r, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.err
			c.mu.Unlock()
			return fmt.Errorf("%s: %w", method, err)
		}
		if r.line != nil {
			if err := decodeResponse(r.line, result); err != nil {
				return fmt.Errorf("%s: %w", method, err)
			}
			return nil
		}
		if r.Error != nil {
			return r.Error
		}
		if raw, ok := result.(*json.RawMessage); ok {
			// Already checked and copied out of the line by read.
			*raw = r.Result
		} else if result != nil {
			if err := json.Unmarshal(r.Result, result); err != nil {
				return fmt.Errorf("%s: decode result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		return ctx.Err()
	}
}

// decodeResponse decodes a response line in one pass, into result itself,
// and returns its error if it carries one. It uses encoding/json/v2's
// decoder: a compaction's reply (the whole list, a newline escaped in
// every task) decodes about three times faster than with encoding/json
// (BenchmarkDecodeResponse).
func decodeResponse(line []byte, result any) error {
	var discard json.RawMessage
	env := struct {
		Result any    `json:"result"`
		Error  *Error `json:"error"`
	}{Result: result}
	if result == nil {
		env.Result = &discard
	}
	if err := jsonv2.Unmarshal(line, &env); err != nil {
		return fmt.Errorf("decode result: %w", err)
	}
	if env.Error != nil {
		return env.Error
	}
	return nil
}

func (c *Client) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}
