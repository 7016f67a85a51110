package store

import "sync"

// QuestionWaits lets ask_owner calls that wait for an answer hear, on any replica, that their
// question closed.
type QuestionWaits struct {
	mu     sync.Mutex
	byID   map[int64]map[*QuestionWait]struct{}
	ending chan struct{}
	once   sync.Once
}

// QuestionWait is one call waiting on a question.
type QuestionWait struct {
	C  chan struct{}
	id int64
	w  *QuestionWaits
}

// NewQuestionWaits returns the waits l wakes (l may not run yet, or never:
// then waits wake only when their callers look by themselves).
func (s *Store) NewQuestionWaits(l *Listener) *QuestionWaits {
	w := newWaits(l)
	Listen(l, QuestionTopic, func(r NoteRef) { w.wake(r.NoteID) })
	return w
}

// NewApprovalWaits returns the waits of hooks waiting for a decision, which
// ApprovalTopic wakes as QuestionTopic wakes the questions'.
func (s *Store) NewApprovalWaits(l *Listener) *QuestionWaits {
	w := newWaits(l)
	Listen(l, ApprovalTopic, w.wake)
	return w
}

func newWaits(l *Listener) *QuestionWaits {
	w := &QuestionWaits{byID: map[int64]map[*QuestionWait]struct{}{}, ending: make(chan struct{})}
	l.Watch(func(connected bool) {
		if connected {
			w.wakeAll()
		}
	})
	return w
}

// Watch starts a wait on question id; Stop it when done.
func (w *QuestionWaits) Watch(id int64) *QuestionWait {
	qw := &QuestionWait{C: make(chan struct{}, 1), id: id, w: w}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byID[id] == nil {
		w.byID[id] = map[*QuestionWait]struct{}{}
	}
	w.byID[id][qw] = struct{}{}
	return qw
}

// Stop ends the wait.
func (qw *QuestionWait) Stop() {
	w := qw.w
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byID[qw.id], qw)
	if len(w.byID[qw.id]) == 0 {
		delete(w.byID, qw.id)
	}
}

// Waiting counts the calls waiting now.
func (w *QuestionWaits) Waiting() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, m := range w.byID {
		n += len(m)
	}
	return n
}

// Ending is closed once End was called: the server is stopping, and waits
// answer with what they know.
func (w *QuestionWaits) Ending() <-chan struct{} { return w.ending }

// End tells every wait, now and later, to stop waiting.
func (w *QuestionWaits) End() { w.once.Do(func() { close(w.ending) }) }

func (w *QuestionWaits) wake(id int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for qw := range w.byID[id] {
		qw.poke()
	}
}

func (w *QuestionWaits) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.byID {
		for qw := range m {
			qw.poke()
		}
	}
}

func (qw *QuestionWait) poke() {
	select {
	case qw.C <- struct{}{}:
	default:
	}
}
