package mcp

import (
	"net/http"
	"sync/atomic"
	"time"
)

// SetProgressEvery makes h's waiting calls look and report progress every d.
func SetProgressEvery(h *Handler, d time.Duration) { h.progressEvery = d }

// SDKOnly makes h hand every request to the SDK, as before it answered any
// itself: the reference of the differential test.
func SDKOnly(h *Handler) { h.sdkOnly = true }

// CountSDK counts the requests h hands to the SDK from now on.
func CountSDK(h *Handler) *atomic.Int64 {
	n := &atomic.Int64{}
	for _, next := range []*http.Handler{&h.sdk, &h.authed} {
		inner := *next
		*next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			inner.ServeHTTP(w, r)
		})
	}
	return n
}

// PlainTool reports whether the front answers a plain call of the tool
// itself (plainTools).
func PlainTool(name string) bool { return plainTools[name] }

// SetWaitLimits gives h's waiting calls the limits l from now on.
func SetWaitLimits(h *Handler, l WaitLimits) { h.waitSlots = newWaitSlots(l) }
