package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/metrics"
	"github.com/osfoundry/osfoundry/store"
)

// The usual request of an agent, one tools/call in one POST, is answered
// here rather than by the SDK, whose stateless handler sets up a session per
// request and decodes the body several times with a 32 KB buffer each (about
// 0.3 MB per call, BenchmarkSDKTrivialTool). The answer is the SDK's, byte
// for byte: the same tool runs (tool.run), its result is encoded by the
// SDK's own JSON-RPC encoder, and the headers are those the SDK sets; a
// differential test (TestDirectAnswersAsTheSDK) runs both over every tool,
// every refusal and every error. Anything else, or anything unusual about
// the request (a batch, a notification, another method, an unknown tool, a
// protocol version that is not plainly one of the older ones, _meta or any
// other extra member, an odd id or header), goes to the SDK.

// directVersions are the protocol versions a request may name in its
// Mcp-Protocol-Version header (or none) to be answered directly: those the
// SDK accepts that predate 2026-07-28, whose results carry no resultType and
// no server _meta.
var directVersions = map[string]bool{"": true, "2024-11-05": true, "2025-03-26": true, "2025-06-18": true, "2025-11-25": true}

// directCall is a tools/call the wrapper may answer itself.
type directCall struct {
	tool *tool
	name string
	id   jsonrpc.ID
	args json.RawMessage
}

// direct returns the request as a directCall when the SDK would handle it as
// a plain call of a registered tool, or false (the SDK answers it).
func (h *Handler) direct(r *http.Request, body []byte) (directCall, bool) {
	hd := r.Header
	if ct, _, err := mime.ParseMediaType(hd.Get("Content-Type")); err != nil || ct != "application/json" {
		return directCall{}, false
	}
	if json, stream := accepts(hd.Values("Accept")); !json || !stream {
		return directCall{}, false
	}
	if len(hd.Values("Last-Event-ID")) > 0 || len(hd.Values("Mcp-Protocol-Version")) > 1 || !directVersions[hd.Get("Mcp-Protocol-Version")] {
		return directCall{}, false
	}
	var (
		dc                  directCall
		rpc, method, params bool
		name, args          bool
	)
	ok := members(body, func(key string, raw json.RawMessage) bool {
		switch {
		case key == "jsonrpc" && !rpc:
			rpc = string(raw) == `"2.0"`
			return rpc
		case key == "id" && !dc.id.IsValid():
			var err error
			dc.id, err = plainID(raw)
			return err == nil
		case key == "method" && !method:
			method = string(raw) == `"tools/call"`
			return method
		case key == "params" && !params:
			params = true
			return members(raw, func(key string, raw json.RawMessage) bool {
				switch {
				case key == "name" && !name:
					name = json.Unmarshal(raw, &dc.name) == nil
					return name
				case key == "arguments" && !args:
					args = true
					dc.args = raw
					return len(raw) > 0 && raw[0] == '{'
				}
				return false
			})
		}
		return false
	})
	if !ok || !rpc || !method || !name || !dc.id.IsValid() {
		return directCall{}, false
	}
	dc.tool, ok = h.registry[dc.name]
	return dc, ok
}

// members calls fn with each member of the JSON object doc, its key decoded
// and its value raw, and reports whether doc is one object (nothing after it)
// and fn accepted every member. Keys match exactly, as the SDK matches them.
func members(doc []byte, fn func(key string, raw json.RawMessage) bool) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		t, err := dec.Token()
		key, isKey := t.(string)
		if err != nil || !isKey {
			return false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil || !fn(key, raw) {
			return false
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return false
	}
	_, err := dec.Token()
	return errors.Is(err, io.EOF)
}

// plainID reads a request id that the SDK keeps as it is: a string, or an
// integer of at most 15 digits (it holds numbers as float64).
func plainID(raw json.RawMessage) (jsonrpc.ID, error) {
	errID := errors.New("not a plain id")
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return jsonrpc.ID{}, err
		}
		return jsonrpc.MakeID(s)
	case len(raw) == 0 || len(raw) > 16:
		return jsonrpc.ID{}, errID
	}
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
		return jsonrpc.ID{}, errID
	}
	for _, b := range digits {
		if b < '0' || b > '9' {
			return jsonrpc.ID{}, errID
		}
	}
	return decodeID(raw)
}

// accepts reads Accept as the SDK does: whether it admits JSON and an event
// stream (a request must admit both).
func accepts(values []string) (jsonOK, streamOK bool) {
	for _, value := range values {
		for _, raw := range strings.Split(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// answerDirectly runs the call as the verified caller and writes what the
// SDK would: its JSON-RPC response to the call (a tool result, or an error),
// with the SDK's headers. It counts the call as observeTools does.
func (h *Handler) answerDirectly(w http.ResponseWriter, ctx context.Context, ti *store.TokenInfo, dc directCall) {
	start := time.Now()
	res, err := dc.tool.run(ctx, &caller{*ti}, dc.args)
	h.observeResult(dc.name, start, res, err)
	h.writeDirect(w, dc, res, err)
}

// observeResult counts a direct call by its outcome, as observeTools counts
// the SDK's.
func (h *Handler) observeResult(name string, start time.Time, res *mcpsdk.CallToolResult, err error) {
	outcome := metrics.OK
	if err != nil {
		outcome = metrics.Failed
	} else if res.IsError {
		outcome = metrics.IsError
	}
	h.tools.Observe(name, outcome, time.Since(start))
}

// writeDirect encodes a tool's result or error as the SDK's JSON-RPC
// connection does (its encoder, HTML left unescaped at the top, a Content of
// [] rather than null) and writes it with the headers of the SDK's JSON
// response.
func (h *Handler) writeDirect(w http.ResponseWriter, dc directCall, res *mcpsdk.CallToolResult, err error) {
	resp := &jsonrpc.Response{ID: dc.id}
	var msg []byte
	if err != nil {
		resp.Error = err
	} else {
		if res.Content == nil {
			res.Content = []mcpsdk.Content{}
		}
		raw, merr := marshalUnescaped(res)
		if merr != nil {
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: merr.Error()}
		} else if id, ierr := marshalUnescaped(dc.id.Raw()); ierr == nil {
			// The envelope the SDK's encoder writes around a result, without
			// its second pass over the result (already compact JSON, which it
			// would only re-validate): the usual answer of a mail page is
			// tens of kilobytes.
			msg = make([]byte, 0, len(raw)+len(id)+32)
			msg = append(append(append(append(msg, `{"jsonrpc":"2.0","id":`...), id...), `,"result":`...), raw...)
			msg = append(msg, '}')
		} else {
			resp.Result = raw
		}
	}
	if msg == nil {
		msg, err = jsonrpc.EncodeMessage(resp)
	}
	if err != nil {
		h.log.Error("mcp: encode response", "tool", dc.name, "err", err)
		writeRPCError(w, http.StatusInternalServerError, jsonrpc.CodeInternalError, msgInternalErr)
		return
	}
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Content-Type", "application/json")
	w.Write(msg)
}

// marshalUnescaped is json.Marshal without HTML escaping, as the SDK's
// JSON-RPC layer marshals a result.
func marshalUnescaped(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
