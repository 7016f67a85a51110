package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// handshakeTimeout bounds the wait for a message that is not a tool call,
// well within the clients' connect timeouts (Codex 10 s, Claude Code 30 s):
// a client with no valid initialize drops the server, and its user never
// reads the tool error that says how to sign in again.
const handshakeTimeout = 4 * time.Second

// keptHandshakeTimeout is the wait when the server's last answer is kept:
// Codex leaves out the tools of a server still connecting at its first turn.
const keptHandshakeTimeout = time.Second

func (b *bridge) hasKept(method string) bool {
	kind := map[string]string{"initialize": "initialize", "tools/list": "tools"}[method]
	if kind == "" || b.acct.dirs.State == "" {
		return false
	}
	_, err := os.Stat(b.handshakePath(kind))
	return err == nil
}

// knownProtocolVersions are the revisions the bridge itself can initialize.
var knownProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

type handshakeParams struct {
	ProtocolVersion string `json:"protocolVersion"`
}

// localAnswer answers a request the server did not: initialize and
// tools/list with the last answers kept (or the least that is valid),
// anything else with an error.
func (b *bridge) localAnswer(m incoming, msg []byte, why error) []byte {
	switch m.Method {
	case "initialize":
		var p struct {
			Params handshakeParams `json:"params"`
		}
		json.Unmarshal(msg, &p)
		return resultResponse(m.ID, b.localInitialize(p.Params.ProtocolVersion, why))
	case "tools/list":
		if cached := b.readHandshake("tools"); cached != nil {
			return resultResponse(m.ID, cached)
		}
		return resultResponse(m.ID, json.RawMessage(`{"tools":[]}`))
	case "ping":
		return resultResponse(m.ID, json.RawMessage(`{}`))
	}
	return errorResponse(m.ID, why.Error())
}

// localInitialize is the server's last initialize result, its instructions
// opening with why the tools cannot work now.
func (b *bridge) localInitialize(asked string, why error) json.RawMessage {
	res := map[string]any{
		"capabilities": map[string]any{"tools": map[string]any{}},
		"serverInfo":   map[string]any{"name": "osfoundry", "version": "unknown"},
	}
	if cached := b.readHandshake("initialize"); cached != nil {
		var prev map[string]json.RawMessage
		if json.Unmarshal(cached, &prev) == nil {
			for _, k := range []string{"capabilities", "serverInfo", "instructions"} {
				if v, ok := prev[k]; ok {
					res[k] = v
				}
			}
		}
	}
	version := knownProtocolVersions[1] // the newest revision with an initialize
	if slices.Contains(knownProtocolVersions, asked) {
		version = asked
	}
	res["protocolVersion"] = version
	note := "osFoundry cannot be reached from this checkout right now: " + b.wayBack(why)
	if prev, ok := res["instructions"].(json.RawMessage); ok {
		var s string
		if json.Unmarshal(prev, &s) == nil && s != "" {
			note += "\n\n" + s
		}
	}
	res["instructions"] = note
	out, _ := json.Marshal(res)
	return out
}

// wayBack says what went wrong and the command that brings the checkout back.
func (b *bridge) wayBack(why error) string {
	var revoked *revokedError
	var notConnected *notConnectedError
	if errors.As(why, &revoked) || errors.As(why, &notConnected) {
		return why.Error()
	}
	return fmt.Sprintf("%v. Try again once the server answers; if it moved, or this checkout's sign-in is gone, run `osfoundry agent login --server %s`.",
		why, b.acct.server)
}

// handshakePath is per server: it gives every checkout the same answer.
func (b *bridge) handshakePath(kind string) string {
	sum := sha256.Sum256([]byte(b.acct.server))
	return filepath.Join(b.acct.dirs.State, "handshake", hex.EncodeToString(sum[:12])+"."+kind+".json")
}

func (b *bridge) keepHandshake(method string, answer []byte) {
	kind := map[string]string{"initialize": "initialize", "tools/list": "tools"}[method]
	if kind == "" || b.acct.dirs.State == "" {
		return
	}
	var r rpcMessage
	if json.Unmarshal(answer, &r) != nil || r.Error != nil || len(r.Result) == 0 || r.Result[0] != '{' {
		return
	}
	path := b.handshakePath(kind)
	err := ensureDir(filepath.Dir(path))
	if err == nil {
		err = writeFileAtomic(path, r.Result, 0o600)
	}
	if err != nil {
		fmt.Fprintf(b.log, "osfoundry agent mcp: keep the server's %s answer: %v\n", kind, err)
	}
}

func (b *bridge) readHandshake(kind string) json.RawMessage {
	if b.acct.dirs.State == "" {
		return nil
	}
	raw, err := os.ReadFile(b.handshakePath(kind))
	if err != nil || !json.Valid(raw) {
		return nil
	}
	return raw
}

func resultResponse(id json.RawMessage, result json.RawMessage) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	return b
}

func (b *bridge) downErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.down
}

func (b *bridge) setDown(err error) {
	b.mu.Lock()
	b.down = err
	b.mu.Unlock()
}

// serverAnswers pings the server, so that a tool call after an unanswered
// handshake fails at once instead of waiting for a server that hangs.
func (b *bridge) serverAnswers(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	rep, err := postMCP(ctx, b.http, b.acct.server, b.acct.server+"/mcp", "", "", []byte(`{"jsonrpc":"2.0","id":"osfoundry-ping","method":"ping"}`), nil)
	if err != nil {
		return err
	}
	if len(rep.msgs) == 0 {
		return fmt.Errorf("the osFoundry server answered HTTP %d without a result", rep.status)
	}
	return nil
}
