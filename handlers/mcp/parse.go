package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"

	"github.com/osfoundry/osfoundry/store"
)

// parse reads and decodes the body of a POST once, into the request's
// context for the links after it.
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

// decodeMessages decodes a body by the SDK's rules. It refuses a member
// named twice, also in another case, as decoders disagree on which counts
// and the front must read what the SDK reads; a body it cannot read yields
// no messages, and the SDK answers it.
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

// sdkUnmarshal matches member names exactly, as the SDK does and encoding/json does not.
func sdkUnmarshal(b []byte, v any) error {
	rest, err := segjson.Parse(b, v, segjson.DontMatchCaseInsensitiveStructFields)
	if err == nil && len(rest) > 0 {
		return errors.New("data after the JSON value")
	}
	return err
}

// scopeOf returns the scope the messages' calls need (read for an unknown
// tool, which the SDK then refuses).
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

func decodeID(raw json.RawMessage) (jsonrpc.ID, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return jsonrpc.ID{}, err
	}
	return jsonrpc.MakeID(v)
}
