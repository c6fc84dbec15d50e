package mcpbridge

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerAll is a transport whose connection reports the end of its input
// only once every request read before it has been answered. The SDK
// cancels the requests still in flight when a read fails, so a client
// that writes its requests and closes its end (`head -3 requests.jsonl |
// tasksessiond mcp`) would otherwise get the first answer alone, and the
// calls after it never made.
type answerAll struct{ mcp.Transport }

func (t answerAll) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, pending: map[jsonrpc.ID]bool{}, answered: make(chan struct{}, 1)}, nil
}

type drainConn struct {
	mcp.Connection

	mu       sync.Mutex
	pending  map[jsonrpc.ID]bool // requests read and not yet answered
	answered chan struct{}       // a request was answered
}

func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.drain(ctx)
		return nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		c.pending[req.ID] = true
		c.mu.Unlock()
	}
	return msg, nil
}

func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		// Answered, or never to be: a failed write ends the connection.
		c.mu.Lock()
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return err
}

// drainWait bounds how long the end of input waits for answers: a tool
// call is bounded by callTimeout, and a request the SDK never answered
// must not keep the bridge from exiting.
const drainWait = callTimeout + 5*time.Second

// drain waits until every request read has been answered, or ctx ends.
func (c *drainConn) drain(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, drainWait)
	defer cancel()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
		case <-ctx.Done():
			return
		}
	}
}
