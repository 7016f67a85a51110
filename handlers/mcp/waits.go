package mcp

import (
	"fmt"
	"sync"
)

// WaitLimits bound the ask_owner calls that hold their request open for an
// answer (wait_seconds) on one replica: each holds a connection, two
// goroutines and a look at its question every few seconds. Past a limit a
// call answers at once, open, and says its wait was not held.
type WaitLimits struct {
	// PerConnection bounds the waits of one agent's connection (its token),
	// whichever requests or batches they come in.
	PerConnection int
	// PerReplica bounds the waits of every connection together.
	PerReplica int
}

// DefaultWaitLimits: 8 waits per connection, 2,000 per replica (each holds a
// file descriptor; a process usually may open 1,024 to 65,536).
var DefaultWaitLimits = WaitLimits{PerConnection: 8, PerReplica: 2000}

// orDefaults fills the zero fields with DefaultWaitLimits'.
func (l WaitLimits) orDefaults() WaitLimits {
	if l.PerConnection <= 0 {
		l.PerConnection = DefaultWaitLimits.PerConnection
	}
	if l.PerReplica <= 0 {
		l.PerReplica = DefaultWaitLimits.PerReplica
	}
	return l
}

// waitSlots counts the waits held on this replica, per connection and in
// all, against WaitLimits.
type waitSlots struct {
	limits WaitLimits
	mu     sync.Mutex
	total  int
	byConn map[int64]int
	// refused counts the waits not held since start.
	refused int64
}

func newWaitSlots(l WaitLimits) *waitSlots {
	return &waitSlots{limits: l.orDefaults(), byConn: map[int64]int{}}
}

// take holds a wait for the connection, or says which limit is reached
// ("" when the wait is held; release it when done).
func (s *waitSlots) take(connectionID int64) (refused string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.byConn[connectionID] >= s.limits.PerConnection:
		s.refused++
		return fmt.Sprintf("this connection already holds %d waiting calls, the most it may", s.limits.PerConnection)
	case s.total >= s.limits.PerReplica:
		s.refused++
		return "the server holds as many waiting calls as it may"
	}
	s.byConn[connectionID]++
	s.total++
	return ""
}

// release gives back a wait take held.
func (s *waitSlots) release(connectionID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.byConn[connectionID]--; s.byConn[connectionID] <= 0 {
		delete(s.byConn, connectionID)
	}
}

// WaitsNotHeld counts the ask_owner calls that asked to wait and were
// answered at once, past a limit of WaitLimits, since the handler started.
func (h *Handler) WaitsNotHeld() int64 {
	s := h.waitSlots
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// waitNotHeld is the sentence of an ask_owner result whose wait was refused.
func waitNotHeld(why string) string {
	return "The wait was not held (" + why + "): the question is asked and open, and nothing is decided. " +
		"Do not ask again; the answer will come as unread mail (read_session_mail), or call ask_owner with the same idempotency_key to look."
}
