package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/tasksessiond/tasksessiond/internal/jsonrpc"
	"github.com/tasksessiond/tasksessiond/internal/tools"
)

// conn is one client connection. Its requests are served in the order they
// arrive, so a host that pipelines calls for a session gets them applied in
// the order sent; clients wanting parallelism open more connections.
type conn struct {
	srv *Server
	nc  *net.UnixConn

	wmu     sync.Mutex // guards w and watches: responses and notifications interleave
	w       *bufio.Writer
	watches []func() // cancels of this connection's sessions/watch subscriptions

	ctx    context.Context
	cancel context.CancelFunc
}

func newConn(s *Server, nc *net.UnixConn) *conn {
	c := &conn{srv: s, nc: nc, w: bufio.NewWriterSize(nc, 64<<10)}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	return c
}

func (c *conn) stopReading() { c.nc.SetReadDeadline(time.Now()) }

func (c *conn) refuse(e *jsonrpc.Error) {
	c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	c.write(jsonrpc.ErrorResponse(nil, e))
	c.flush()
	c.nc.Close()
}

func (c *conn) serve() {
	defer c.nc.Close()
	defer c.cancel()
	defer c.endWatches()
	r := jsonrpc.NewReader(c.nc, c.srv.cfg.MaxLine)
	for {
		line, err := r.Next()
		switch {
		case errors.Is(err, jsonrpc.ErrLineTooLong):
			c.write(jsonrpc.ErrorResponse(nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: %v; nothing was done (keep descriptions under %d KiB)", err, tools.MaxDescriptionBytes>>10)))
			c.flush()
			continue
		case err != nil:
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) && !c.srv.closing.Load() {
				c.srv.log.Debug("connection read failed", slog.Any("err", err))
			}
			c.flush()
			return
		}
		c.handleLine(line)
		if c.srv.closing.Load() {
			// Shutting down: the request in hand is answered; pipelined ones
			// not yet started are not applied.
			c.flush()
			return
		}
		if !r.Buffered() {
			if err := c.flush(); err != nil {
				return
			}
		}
	}
}

func (c *conn) handleLine(line []byte) {
	reqs, errs, batch, perr := jsonrpc.Parse(line)
	if perr != nil {
		c.write(jsonrpc.ErrorResponse(nil, perr))
		return
	}
	resps := errs
	for i := range reqs {
		if resp, ok := c.handle(&reqs[i]); ok {
			resps = append(resps, resp)
		}
	}
	switch {
	case len(resps) == 0:
	case batch:
		c.write(resps)
	default:
		c.write(resps[0])
	}
}

// handle serves one request; ok is false for a notification.
func (c *conn) handle(req *jsonrpc.Request) (resp jsonrpc.Response, ok bool) {
	result, err := c.call(req)
	if req.IsNotification() {
		return jsonrpc.Response{}, false
	}
	if err != nil {
		e, internal := wireError(err)
		if internal {
			c.srv.log.Error("request failed", slog.String("method", req.Method), slog.Any("err", err))
		}
		return jsonrpc.ErrorResponse(req.ID, e), true
	}
	raw, isRaw := result.(json.RawMessage)
	if !isRaw {
		if raw, err = json.Marshal(result); err != nil {
			return jsonrpc.ErrorResponse(req.ID, jsonrpc.Errorf(jsonrpc.CodeInternal, "encode result: %v", err)), true
		}
	}
	return jsonrpc.Response{JSONRPC: "2.0", ID: req.ID, Result: raw}, true
}

func (c *conn) call(req *jsonrpc.Request) (result any, err error) {
	h, ok := c.srv.handlers[req.Method]
	if !ok {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "unknown method %q; the methods are %s", req.Method, strings.Join(c.srv.Methods(), ", "))
	}
	defer func() {
		if p := recover(); p != nil {
			c.srv.log.Error("panic serving request", slog.String("method", req.Method), slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			err = jsonrpc.Errorf(jsonrpc.CodeInternal, "internal error serving %s", req.Method)
		}
	}()
	return h(c.ctx, c, req.Params)
}

func (c *conn) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"encode response failed"}}`, jsonrpc.CodeInternal)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.Write(b)
	c.w.WriteByte('\n')
}

// writeTimeout bounds how long a client that stops reading can hold a
// connection's goroutine.
const writeTimeout = 30 * time.Second

func (c *conn) flush() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.w.Buffered() == 0 {
		return nil
	}
	c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	return c.w.Flush()
}
