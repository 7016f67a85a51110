package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// bridgeRequestTimeout outlasts the longest call: ask_owner may wait 600 s.
const bridgeRequestTimeout = 11 * time.Minute

// metaProtocolVersion carries the version in each request of protocol
// 2026-07-28; the HTTP header must repeat it.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// bridge serves MCP over stdio and forwards each message to /mcp with the
// credentials the hooks use, so Claude Code and the hooks are one connection
// and a session outlives its access token without the client doing OAuth.
type bridge struct {
	acct account
	http *http.Client
	log  io.Writer

	mu      sync.Mutex
	client  *client // nil until credentials exist
	version string  // protocol version the server answered initialize with
	// down is why the server did not answer the handshake: the rest of it is
	// then answered at once.
	down error

	outMu sync.Mutex
	out   io.Writer

	relay relayState // the relay's (relay.go)
}

// bridgeGrace lets the messages in flight finish after a signal: Claude Code
// sends SIGINT, SIGTERM and SIGKILL about half a second apart.
const bridgeGrace = 60 * time.Millisecond

// runBridge runs `osfoundry agent mcp` until stdin closes or ctx ends; then
// the messages in flight have bridgeGrace to finish.
func runBridge(ctx context.Context, dirs folders, server, checkout string, stdin io.Reader, stdout, stderr io.Writer) error {
	b := &bridge{acct: account{dirs: dirs, server: server, checkout: checkout}, http: newHTTPClient(), log: stderr, out: stdout}
	if _, err := b.loadClient(); err != nil {
		fmt.Fprintf(stderr, "osfoundry agent mcp: %v\n", err)
	}
	defer b.startRelay(ctx)()
	// The messages' own context outlives the signal by the grace.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	lines := make(chan []byte)
	go func() { // a read of stdin cannot be interrupted: on a signal it is left behind
		defer close(lines)
		r := bufio.NewReaderSize(stdin, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if msg := bytes.TrimSpace(line); len(msg) > 0 {
				select {
				case lines <- msg:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	var wg sync.WaitGroup
	inFlight := func() <-chan struct{} {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		return done
	}
	for {
		select {
		case msg, ok := <-lines:
			if !ok {
				<-inFlight()
				return nil
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.forward(work, msg)
			}()
		case <-ctx.Done():
			done := inFlight()
			select {
			case <-done:
			case <-time.After(bridgeGrace):
				cancelWork() // the rest are answered with an error
				<-done
			}
			return nil
		}
	}
}

// loadClient reads the credentials once they exist, so a login after Claude
// Code started is picked up.
func (b *bridge) loadClient() (*client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.client != nil {
		return b.client, nil
	}
	c, err := newClient(b.acct)
	if err != nil {
		return nil, err
	}
	b.client = c
	return c, nil
}

type incoming struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta map[string]any `json:"_meta"`
	} `json:"params"`
}

// forward sends one message and writes back the answer. A request the server
// does not answer in time (or with a refused token) is answered by the bridge
// itself, so the client always completes its handshake and each tool call
// says what went wrong.
func (b *bridge) forward(ctx context.Context, msg []byte) {
	var m incoming
	json.Unmarshal(msg, &m)
	isRequest := m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null"
	if m.Method == "" && len(m.ID) > 0 {
		return // an answer to a server request: a stateless server sends none
	}
	if m.Method == "notifications/initialized" {
		defer b.channelReady() // the client takes notifications from now on
	}
	isCall := m.Method == "tools/call"
	limit := handshakeTimeout
	switch {
	case isCall:
		limit = bridgeRequestTimeout
	case b.hasKept(m.Method):
		limit = keptHandshakeTimeout
	}
	work := ctx
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	version, _ := m.Params.Meta[metaProtocolVersion].(string)
	if version == "" {
		b.mu.Lock()
		version = b.version
		b.mu.Unlock()
	}
	if down := b.downErr(); down != nil {
		switch {
		case !isCall:
			// Within the client's connect timeout, not one timeout per message.
			if isRequest {
				b.write(b.localAnswer(m, msg, down))
			}
			return
		case b.serverAnswers(ctx) != nil:
			b.write(refusalResult(m.ID, b.wayBack(down)))
			return
		}
		b.setDown(nil)
	}

	// A token goes with every message when there is one; only tools/call
	// needs it, so a token problem is reported only if the server refuses.
	c, authErr := b.loadClient()
	endpoint := b.acct.server + "/mcp"
	tok := ""
	if c != nil {
		endpoint = c.resource()
		tok, authErr = c.token(ctx, "")
	}
	// Notifications before the answer (a waiting call's progress) go on at once.
	early := func(m json.RawMessage) { b.write(m) }
	rep, err := postMCP(ctx, b.http, b.acct.server, endpoint, tok, version, msg, early)
	if err == nil && rep.status == http.StatusUnauthorized && c != nil && tok != "" {
		var tok2 string
		if tok2, authErr = c.token(ctx, tok); authErr == nil {
			rep, err = postMCP(ctx, b.http, b.acct.server, endpoint, tok2, version, msg, early)
		}
	}
	if err == nil && rep.status == http.StatusUnauthorized && !isCall && tok != "" {
		// Only tool calls need a token: the rest is asked again without one.
		rep, err = postMCP(ctx, b.http, b.acct.server, endpoint, "", version, msg, early)
	}
	if err != nil && !isCall && work.Err() == nil {
		b.setDown(b.unanswered(err, limit))
	}
	switch {
	case err != nil && work.Err() != nil:
		// The bridge is stopping: what is left gets an error.
		fmt.Fprintf(b.log, "osfoundry agent mcp: %s: %v\n", m.Method, err)
		if isRequest {
			b.write(errorResponse(m.ID, err.Error()))
		}
		return
	case err != nil:
		err = b.unanswered(err, limit)
		fmt.Fprintf(b.log, "osfoundry agent mcp: %s: %v\n", m.Method, err)
		switch {
		case isCall:
			b.write(refusalResult(m.ID, b.wayBack(err)))
		case isRequest:
			b.write(b.localAnswer(m, msg, err))
		}
		return
	case rep.status == http.StatusUnauthorized && isRequest:
		if authErr == nil {
			authErr = &revokedError{Server: b.acct.server}
		}
		b.write(refusalResult(m.ID, authErr.Error()))
		return
	}
	answered := false
	for _, out := range rep.msgs {
		if isRequest && isAnswerTo(out, m.ID) {
			if m.Method == "initialize" {
				b.learnVersion(out)
				out = declareChannel(out)
			}
			if hasResult(out) {
				b.keepHandshake(m.Method, out)
			} else if m.Method == "initialize" || m.Method == "tools/list" {
				// An error where a result must be (the server failed):
				// the client still needs a valid handshake.
				out = b.localAnswer(m, msg, fmt.Errorf("the osFoundry server at %s answered %s with an error", b.acct.server, m.Method))
			}
			answered = true
		}
		b.write(out)
	}
	if !answered && isRequest {
		why := fmt.Errorf("the osFoundry server at %s answered HTTP %d without a result", b.acct.server, rep.status)
		if isCall {
			b.write(refusalResult(m.ID, b.wayBack(why)))
		} else {
			b.write(b.localAnswer(m, msg, why))
		}
	}
}

func (b *bridge) unanswered(err error, limit time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the osFoundry server at %s did not answer within %s", b.acct.server, limit)
	}
	return err
}

func isAnswerTo(msg json.RawMessage, id json.RawMessage) bool {
	var r rpcMessage
	return json.Unmarshal(msg, &r) == nil && string(bytes.TrimSpace(r.ID)) == string(bytes.TrimSpace(id)) && (r.Result != nil || r.Error != nil)
}

func hasResult(msg json.RawMessage) bool {
	var r rpcMessage
	return json.Unmarshal(msg, &r) == nil && len(r.Result) > 0 && string(r.Result) != "null"
}

// learnVersion keeps the initialize result's protocol version for the
// MCP-Protocol-Version header.
func (b *bridge) learnVersion(msg []byte) {
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &r) == nil && r.Result.ProtocolVersion != "" {
		b.mu.Lock()
		b.version = r.Result.ProtocolVersion
		b.mu.Unlock()
	}
}

func (b *bridge) write(msg []byte) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		return
	}
	buf.WriteByte('\n')
	b.outMu.Lock()
	defer b.outMu.Unlock()
	if _, err := b.out.Write(buf.Bytes()); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		fmt.Fprintf(b.log, "osfoundry agent mcp: write: %v\n", err)
	}
}

func errorResponse(id json.RawMessage, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": -32603, "message": msg}})
	return b
}

// refusalResult is a tool result telling the person what to do.
func refusalResult(id json.RawMessage, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"result": map[string]any{"isError": true, "content": []map[string]string{{"type": "text", "text": msg}}}})
	return b
}
