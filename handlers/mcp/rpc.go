package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeRPC writes every answer the front gives itself: msgs as one message,
// or as an array for a batch. The length is sent so that a long answer goes
// out in one piece rather than chunked.
func writeRPC(w http.ResponseWriter, status int, batch bool, msgs ...json.RawMessage) {
	var body []byte
	switch {
	case batch:
		body, _ = json.Marshal(msgs)
	case len(msgs) == 1:
		body = msgs[0]
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	if body != nil {
		hd.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	w.Write(body)
}

// writeRPCError is the front's one error writer, for a request no tool ran
// for and no id can answer.
func writeRPCError(w http.ResponseWriter, status int, code int64, message string) {
	writeRPC(w, status, false, requestError(code, message))
}

// rpcResponse encodes the response to id as the SDK does, writing the
// envelope around a compact result rather than re-validating it (a mail
// page is tens of kilobytes).
func rpcResponse(id jsonrpc.ID, result json.RawMessage, err error) (json.RawMessage, error) {
	if err == nil {
		if rawID, ierr := marshalUnescaped(id.Raw()); ierr == nil {
			msg := make([]byte, 0, len(result)+len(rawID)+32)
			msg = append(append(append(append(msg, `{"jsonrpc":"2.0","id":`...), rawID...), `,"result":`...), result...)
			return append(msg, '}'), nil
		}
	}
	return jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: result, Error: err})
}

func requestError(code int64, message string) json.RawMessage {
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		Error   wireError `json:"error"`
		ID      any       `json:"id"`
		JSONRPC string    `json:"jsonrpc"`
	}{wireError{code, message}, nil, "2.0"})
	return b
}

func resultForEach(msgs []message, result *mcpsdk.CallToolResult) []json.RawMessage {
	var out []json.RawMessage // a batch of notifications only is answered with null
	for i := range msgs {
		m := &msgs[i]
		if m.isNotification() || m.idErr != nil {
			continue
		}
		res := &versionedResult{CallToolResult: *result}
		if m.newProtocol() {
			res.ResultType = "complete"
		}
		raw, err := json.Marshal(res)
		if err != nil {
			continue
		}
		msg, err := rpcResponse(m.id, raw, nil)
		if err != nil {
			continue
		}
		out = append(out, msg)
	}
	return out
}

func isErrorResult(text string, meta mcpsdk.Meta) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}, Meta: meta}
}

// versionedResult carries the resultType protocol 2026-07-28 expects on every result.
type versionedResult struct {
	mcpsdk.CallToolResult
	ResultType string
}

func (r *versionedResult) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(&r.CallToolResult)
	if err != nil || r.ResultType == "" {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["resultType"], _ = json.Marshal(r.ResultType)
	return json.Marshal(m)
}

// marshaled is JSON as json.Marshal wrote it, which encodeResult copies as
// it is; the SDK's encoder copies the same bytes.
type marshaled []byte

func (m marshaled) MarshalJSON() ([]byte, error) { return m, nil }

// encodeResult encodes the usual tool result as marshalUnescaped would, in
// one pass around the bytes the tool already encoded; TestEncodeResultAsTheSDK
// compares both.
func encodeResult(res *mcpsdk.CallToolResult) (json.RawMessage, error) {
	structured, ok := res.StructuredContent.(marshaled)
	if (res.StructuredContent != nil && !ok) || res.Meta != nil || res.InputRequests != nil {
		return marshalUnescaped(res)
	}
	size := len(structured) + 64
	for _, c := range res.Content {
		t, ok := c.(*mcpsdk.TextContent)
		if !ok || t.Meta != nil || t.Annotations != nil {
			return marshalUnescaped(res)
		}
		size += len(t.Text) + len(t.Text)/4 + 32
	}
	b := make([]byte, 0, size)
	b = append(b, `{"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		q, err := json.Marshal(c.(*mcpsdk.TextContent).Text)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, `{"type":"text","text":`...), q...), '}')
	}
	b = append(b, ']')
	if structured != nil {
		b = append(append(b, `,"structuredContent":`...), structured...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), nil
}

// marshalUnescaped marshals as the SDK's JSON-RPC layer does, HTML unescaped.
func marshalUnescaped(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
