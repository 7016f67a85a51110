package mcp

import (
	"fmt"
	"sync"
)

// WaitLimits bound the ask_owner calls holding their request open on one
// replica, as each holds a connection and two goroutines; past a limit a
// call answers at once, its question open.
type WaitLimits struct {
	PerConnection int // per agent's connection (token), whatever requests they come in
	PerReplica    int
}

// DefaultWaitLimits keep the file descriptors the waits hold well under a
// process's usual 1,024 to 65,536.
var DefaultWaitLimits = WaitLimits{PerConnection: 8, PerReplica: 2000}

func (l WaitLimits) orDefaults() WaitLimits {
	if l.PerConnection <= 0 {
		l.PerConnection = DefaultWaitLimits.PerConnection
	}
	if l.PerReplica <= 0 {
		l.PerReplica = DefaultWaitLimits.PerReplica
	}
	return l
}

type waitSlots struct {
	limits  WaitLimits
	mu      sync.Mutex
	total   int
	byConn  map[int64]int
	refused int64 // since start
}

func newWaitSlots(l WaitLimits) *waitSlots {
	return &waitSlots{limits: l.orDefaults(), byConn: map[int64]int{}}
}

// take holds a wait for the connection ("") or says which limit is reached.
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

func (s *waitSlots) release(connectionID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.byConn[connectionID]--; s.byConn[connectionID] <= 0 {
		delete(s.byConn, connectionID)
	}
}

// WaitsNotHeld counts the waits refused past WaitLimits since start.
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
