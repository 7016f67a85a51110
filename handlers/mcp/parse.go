package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"

	"github.com/osfoundry/osfoundry/store"
)

// rpcRequest is a POST to /mcp as parse decoded it, once, for every later
// link of the front: its messages, and the scope they need.
type rpcRequest struct {
	body     []byte
	messages []message // none when the body is not JSON-RPC the front can read; the SDK answers it
	batch    bool
	// scope is what the messages need of a token: "" when they may be
	// answered anonymously (no tools/call among them), store.ScopeWrite when
	// any call needs it.
	scope string
	// plain is the one message of a request plain enough for the front to
	// answer it itself (plainMessage), nil for any other.
	plain *message
	start time.Time // when the front began reading the request

	// tally is how its tool calls ended, for count (metrics.go).
	tally tally
}

// message is one JSON-RPC message of a body: what the front needs of it.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      map[string]any  `json:"_meta"`
		// The members of initialize's params.
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	} `json:"params"`

	// id is ID decoded; idErr says why it cannot be (it is absent, or of a
	// type JSON-RPC does not allow).
	id    jsonrpc.ID
	idErr error
	// exact: the body is this one message and its members are those of a
	// plain tools/call or initialize, each once, with no other (readExact);
	// version is then its jsonrpc member as sent, params its params (nil
	// when absent).
	exact   bool
	version []byte
	params  []byte
}

// requestKey carries the *rpcRequest parse decoded.
type requestKey struct{}

// requestFrom returns the request parse decoded, or nil (not a POST, or a
// context of no request).
func requestFrom(ctx context.Context) *rpcRequest {
	req, _ := ctx.Value(requestKey{}).(*rpcRequest)
	return req
}

// parse reads the body of a POST once (413 when it exceeds inbound.MaxBodyBytes),
// refuses JSON nested deeper than maxJSONDepth, and decodes its messages
// into the request's context for the links after it. Requests of other
// methods pass as they are, to the SDK.
func (h *Handler) parse(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		req := &rpcRequest{start: time.Now()}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit))
				return
			}
			writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "cannot read request body")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if jsonTooDeep(body, maxJSONDepth) {
			writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, fmt.Sprintf("request JSON is nested deeper than %d levels", maxJSONDepth))
			return
		}
		req.body = body
		req.messages, req.batch, err = decodeMessages(body)
		if err != nil {
			writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, err.Error())
			return
		}
		req.scope = h.scopeOf(req.messages)
		req.plain = h.plainMessage(r, req)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestKey{}, req)))
	})
}

// decodeMessages decodes a body: one message or a batch array, by the SDK's
// rules (sdkUnmarshal: member names match exactly, unknown members are
// ignored). A body in which an object has a member twice, or two members
// whose names differ only in case, is refused (err): decoders disagree on
// which of them counts, and the front must read what the SDK reads. A lone
// message with the members of a plain tools/call only is read in one pass
// (readExact). A body that is not valid JSON, or whose members have the
// wrong types, yields no messages: the SDK answers it.
func decodeMessages(body []byte) (msgs []message, batch bool, err error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	batch = len(trimmed) > 0 && trimmed[0] == '['
	if !json.Valid(body) {
		return nil, batch, nil
	}
	if a, b := repeatedMember(trimmed); a != "" {
		if a == b {
			return nil, batch, fmt.Errorf("request JSON has the member %q twice", truncateKey(a))
		}
		return nil, batch, fmt.Errorf("request JSON has the members %q and %q, whose names differ only in case", truncateKey(a), truncateKey(b))
	}
	if batch {
		if sdkUnmarshal(body, &msgs) != nil {
			return nil, true, nil
		}
	} else if m, ok := readExact(trimmed); ok {
		msgs = []message{m}
	} else {
		msgs = make([]message, 1)
		if sdkUnmarshal(body, &msgs[0]) != nil {
			return nil, false, nil
		}
	}
	for i := range msgs {
		msgs[i].id, msgs[i].idErr = decodeID(msgs[i].ID)
	}
	return msgs, batch, nil
}

// sdkUnmarshal decodes JSON as the SDK's JSON-RPC layer does: member names
// match struct fields exactly (not in any case, as encoding/json would).
func sdkUnmarshal(b []byte, v any) error {
	rest, err := segjson.Parse(b, v, segjson.DontMatchCaseInsensitiveStructFields)
	if err == nil && len(rest) > 0 {
		return errors.New("data after the JSON value")
	}
	return err
}

// scopeOf returns the scope the messages need: only tools/call needs a
// token, with the tool's scope (osfoundry:read for an unknown tool, which
// the SDK then refuses); write when any call needs write.
func (h *Handler) scopeOf(msgs []message) string {
	scope := ""
	for _, m := range msgs {
		if m.Method != "tools/call" {
			continue
		}
		s := store.ScopeRead
		if t, ok := h.registry[m.Params.Name]; ok {
			s = t.scope
		}
		if scope == "" || s == store.ScopeWrite {
			scope = s
		}
	}
	return scope
}

// isNotification reports whether a message is a notification (no id).
func (m *message) isNotification() bool { return len(m.ID) == 0 || string(m.ID) == "null" }

// newProtocol reports whether a message speaks protocol 2026-07-28 or
// later, whose results carry resultType.
func (m *message) newProtocol() bool {
	v, _ := m.Params.Meta[mcpsdk.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}

func decodeID(raw json.RawMessage) (jsonrpc.ID, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return jsonrpc.ID{}, err
	}
	return jsonrpc.MakeID(v)
}

// readExact reads doc, valid JSON starting with its first value, as one
// message whose members are among jsonrpc, id, method and params, each once,
// and whose params are among name and arguments (a tools/call's) or
// protocolVersion, capabilities and clientInfo (an initialize's), each once;
// keys, method, name and protocolVersion are written without escapes or
// characters beyond printable ASCII.
// Such a message decodes the same whichever decoder reads it; ok is false
// for any other, which decodeMessages leaves to sdkUnmarshal. The values
// are slices of doc.
func readExact(doc []byte) (m message, ok bool) {
	var seen, params uint8
	s := scanner{b: doc}
	ok = s.object(func(key, val []byte) bool {
		bit, keep := uint8(0), true
		switch string(key) {
		case `"jsonrpc"`:
			bit, m.version = 1, val
		case `"id"`:
			bit, m.ID = 2, val
		case `"method"`:
			bit = 4
			m.Method, keep = plainString(val)
		case `"params"`:
			bit, m.params = 8, val
			p := scanner{b: val}
			keep = p.object(func(key, val []byte) bool {
				var pbit uint8
				keep := true
				switch string(key) {
				case `"name"`:
					pbit = 1
					m.Params.Name, keep = plainString(val)
				case `"arguments"`:
					pbit, m.Params.Arguments = 2, val
				case `"protocolVersion"`:
					pbit = 4
					m.Params.ProtocolVersion, keep = plainString(val)
				case `"capabilities"`:
					pbit, m.Params.Capabilities = 8, val
				case `"clientInfo"`:
					pbit, m.Params.ClientInfo = 16, val
				default:
					return false
				}
				if params&pbit != 0 {
					return false
				}
				params |= pbit
				return keep
			}) && p.end()
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return keep
	}) && s.end()
	m.exact = ok
	return m, ok
}

// plainString returns the text of a JSON string written without escapes
// and in printable ASCII, whose raw bytes are its text.
func plainString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	inner := val[1 : len(val)-1]
	for _, c := range inner {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return "", false
		}
	}
	return string(inner), true
}

// scanner walks JSON already known to be valid.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

// end reports whether only whitespace is left.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// object calls fn with each member of the object at the scanner, its key and
// value raw (the key with its quotes), and reports whether the value there
// is an object and fn accepted every member.
func (s *scanner) object(fn func(key, val []byte) bool) bool {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	for {
		s.space()
		switch s.b[s.i] {
		case '}':
			s.i++
			return true
		case ',':
			s.i++
			s.space()
		}
		key := s.value()
		s.space()
		s.i++ // the colon
		s.space()
		if !fn(key, s.value()) {
			return false
		}
	}
}

// value returns the value at the scanner and moves past it.
func (s *scanner) value() []byte {
	start := s.i
	switch s.b[s.i] {
	case '"':
		s.skipString()
	case '{', '[':
		depth := 0
		for {
			switch s.b[s.i] {
			case '"':
				s.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				break
			}
		}
	default: // a number, true, false or null
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return s.b[start:s.i]
			}
			s.i++
		}
	}
	return s.b[start:s.i]
}

// skipString moves past the string at the scanner.
func (s *scanner) skipString() {
	for s.i++; s.b[s.i] != '"'; s.i++ {
		if s.b[s.i] == '\\' {
			s.i++
		}
	}
	s.i++
}

// repeatedMember returns the first member of an object in doc (valid JSON)
// whose name another member of that object already has, exactly or in
// another case (under Unicode case folding, as encoding/json matches names):
// a is the earlier name, b the later one; "" when every object's names are
// distinct. One pass, whatever the nesting; the names of a small object are
// compared in place, without allocating.
func repeatedMember(doc []byte) (a, b string) {
	// level is an open object (names) or array (not object).
	type level struct {
		object bool
		names  [][]byte          // the names so far, unescaped, while few
		folded map[string][]byte // by foldName, once many
	}
	var stack []level
	wantName := false
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '{':
			stack = append(stack, level{object: true})
			wantName = true
		case '[':
			stack = append(stack, level{})
		case '}', ']':
			stack = stack[:len(stack)-1]
			wantName = false
		case ',':
			wantName = len(stack) > 0 && stack[len(stack)-1].object
		case '"':
			start := i
			escaped := false
			for i++; doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					escaped = true
					i++
				}
			}
			if !wantName {
				continue
			}
			wantName = false
			name := doc[start+1 : i]
			if escaped {
				var s string
				json.Unmarshal(doc[start:i+1], &s)
				name = []byte(s)
			}
			top := &stack[len(stack)-1]
			if top.folded == nil {
				for _, prev := range top.names {
					if bytes.EqualFold(prev, name) {
						return string(prev), string(name)
					}
				}
				if len(top.names) < 16 {
					top.names = append(top.names, name)
					continue
				}
				top.folded = map[string][]byte{}
				for _, prev := range top.names {
					top.folded[foldName(string(prev))] = prev
				}
			}
			key := foldName(string(name))
			if prev, ok := top.folded[key]; ok {
				return string(prev), string(name)
			}
			top.folded[key] = name
		}
	}
	return "", ""
}

// foldName maps a name to one spelling shared by every name that equals it
// under Unicode simple case folding (as bytes.EqualFold compares): each
// character becomes the smallest of its folding orbit (K, k and the Kelvin
// sign all become K).
func foldName(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s)
	}
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// truncateKey shortens a member name quoted in an error.
func truncateKey(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
