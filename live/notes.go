package live

import (
	"errors"
	"sync"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// noteQueue holds the sessions with new notes and the notes whose receipts
// changed, by session, for the notes worker.
type noteQueue struct {
	mu       sync.Mutex
	wake     chan struct{}
	sessions map[int64]struct{}
	receipts map[int64]map[int64]struct{}
}

func newNoteQueue() *noteQueue {
	return &noteQueue{wake: make(chan struct{}, 1), sessions: map[int64]struct{}{}, receipts: map[int64]map[int64]struct{}{}}
}

func (q *noteQueue) noteArrived(sessionID int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sessions[sessionID] = struct{}{}
	wake(q.wake)
}

func (q *noteQueue) receiptChanged(sessionID, noteID int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.receipts[sessionID] == nil {
		q.receipts[sessionID] = map[int64]struct{}{}
	}
	q.receipts[sessionID][noteID] = struct{}{}
	wake(q.wake)
}

func (q *noteQueue) take() (notes map[int64]struct{}, receipts map[int64]map[int64]struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	notes, receipts = q.sessions, q.receipts
	q.sessions, q.receipts = map[int64]struct{}{}, map[int64]map[int64]struct{}{}
	return notes, receipts
}

func (q *noteQueue) clear() {
	q.mu.Lock()
	defer q.mu.Unlock()
	clear(q.sessions)
	clear(q.receipts)
}

func (b *Broker) sendNotes() {
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-b.notes.wake:
		}
		notes, receipts := b.notes.take()
		for sid := range notes {
			b.sendSessionNotes(sid)
		}
		for sid, ids := range receipts {
			for nid := range ids {
				b.sendReceipt(sid, nid)
			}
		}
	}
}

// sendSessionNotes loads once the notes after the newest its streams had:
// notifications may arrive out of order, but a session's notes commit in id
// order, so those are exactly the new ones.
func (b *Broker) sendSessionNotes(sessionID int64) {
	b.mu.Lock()
	t := b.sessions[sessionID]
	if t == nil {
		b.mu.Unlock()
		return
	}
	ws, after := t.workspaceID, t.last
	b.mu.Unlock()
	notes, err := b.src.SessionMailAfter(b.ctx, ws, sessionID, after)
	if err != nil || len(notes) > MaxReplay {
		if err != nil && b.ctx.Err() == nil {
			b.log.Warn("live: loading new notes failed; closing the session's streams", "session_id", sessionID, "err", err)
		}
		b.dropSession(sessionID, closeBehind)
		return
	}
	now := time.Now()
	for i := len(notes) - 1; i >= 0; i-- {
		n := notes[i]
		other, err := b.noteEvent(now, sessionID, n, false)
		if err != nil {
			b.log.Error("live: render note", "note_id", n.ID, "err", err)
			b.dropSession(sessionID, closeBehind)
			return
		}
		own := other
		if n.SenderOwnerID != nil {
			if own, err = b.noteEvent(now, sessionID, n, true); err != nil {
				b.log.Error("live: render note", "note_id", n.ID, "err", err)
				b.dropSession(sessionID, closeBehind)
				return
			}
		}
		b.mu.Lock()
		if t := b.sessions[sessionID]; t != nil && n.ID > t.last {
			t.last = n.ID
			for st := range t.streams {
				ev := other
				if n.SentBy(st.ownerID) {
					ev = own
				}
				b.send(st, Event{NoteID: n.ID, Data: ev})
			}
		}
		b.mu.Unlock()
	}
}

func (b *Broker) noteEvent(now time.Time, sessionID int64, n store.Note, own bool) ([]byte, error) {
	html, err := b.render.Note(now, sessionID, n, own)
	if err != nil {
		return nil, err
	}
	return Frame("note", n.ID, html), nil
}

func (b *Broker) sendReceipt(sessionID, noteID int64) {
	b.mu.Lock()
	t := b.sessions[sessionID]
	if t == nil {
		b.mu.Unlock()
		return
	}
	ws := t.workspaceID
	b.mu.Unlock()
	receipts, err := b.src.NoteReceipts(b.ctx, ws, sessionID, []int64{noteID})
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err != nil {
		b.log.Warn("live: load receipts", "note_id", noteID, "err", err)
		return
	}
	html, err := b.render.Receipts(time.Now(), noteID, receipts)
	if err != nil {
		b.log.Error("live: render receipts", "note_id", noteID, "err", err)
		return
	}
	ev := Frame("receipt", 0, html)
	b.mu.Lock()
	defer b.mu.Unlock()
	if t := b.sessions[sessionID]; t != nil {
		for st := range t.streams {
			b.send(st, Event{Data: ev})
		}
	}
}
