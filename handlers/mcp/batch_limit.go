package mcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MaxBatch bounds a JSON-RPC batch: the SDK runs its messages at once, so a
// batch would otherwise multiply whatever one request may do.
const MaxBatch = 10

func limitBatch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if req := requestFrom(r.Context()); req != nil && req.batch && len(req.messages) > MaxBatch {
			writeRPC(w, http.StatusBadRequest, false, requestError(jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("a batch holds at most %d messages, this one %d: send the rest in further requests", MaxBatch, len(req.messages))))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requestWait returns the longest wait of a request's ask_owner calls, and
// whether a lone call asked for progress notifications.
func requestWait(req *rpcRequest) (time.Duration, bool) {
	if req == nil {
		return 0, false
	}
	longest, progress := 0, false
	for i := range req.messages {
		m := &req.messages[i]
		if m.Method != "tools/call" || m.Params.Name != "ask_owner" {
			continue
		}
		var args struct {
			WaitSeconds int `json:"wait_seconds"`
		}
		if json.Unmarshal(m.Params.Arguments, &args) != nil || args.WaitSeconds <= longest {
			continue
		}
		longest = min(args.WaitSeconds, MaxWaitSeconds)
		progress = !req.batch && m.Params.Meta["progressToken"] != nil
	}
	return time.Duration(longest) * time.Second, progress
}
