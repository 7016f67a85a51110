package live

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/osfoundry/osfoundry/store"
)

// ownerStreams are every stream by owner, and the owner's unread counts as
// last counted, kept so that new notes recount only their sessions.
type ownerStreams struct {
	streams streamSets
	counts  map[int64]map[int64]store.SessionUnread
}

func newOwnerStreams() ownerStreams {
	return ownerStreams{streams: streamSets{}, counts: map[int64]map[int64]store.SessionUnread{}}
}

func (o ownerStreams) add(st *Stream) map[*Stream]struct{} { return o.streams.add(st.ownerID, st) }

func (o ownerStreams) remove(st *Stream) {
	o.streams.remove(st.ownerID, st)
	if o.streams[st.ownerID] == nil {
		delete(o.counts, st.ownerID)
	}
}

func (o ownerStreams) workspace(owner int64) (int64, bool) {
	for st := range o.streams[owner] {
		return st.workspaceID, true
	}
	return 0, false
}

// unreadCounts is the data of the unread event; the inbox page fetches
// InboxNewest when it has not got it.
type unreadCounts struct {
	Total       int            `json:"total"`
	Projects    map[string]int `json:"projects"`
	Sessions    map[string]int `json:"sessions"`
	Inbox       int            `json:"inbox"`
	InboxNewest int64          `json:"inbox_newest"`
}

// UnreadEvent loads the owner's unread counts as the unread event.
func (b *Broker) UnreadEvent(ctx context.Context, workspaceID, ownerID int64) ([]byte, error) {
	rows, err := b.src.UnreadMail(ctx, workspaceID, ownerID)
	if err != nil {
		return nil, err
	}
	return unreadFrame(bySession(rows))
}

func bySession(rows []store.SessionUnread) map[int64]store.SessionUnread {
	m := make(map[int64]store.SessionUnread, len(rows))
	for _, r := range rows {
		m[r.SessionID] = r
	}
	return m
}

// unreadFrame frames the unread event; the same counts make the same bytes.
func unreadFrame(counts map[int64]store.SessionUnread) ([]byte, error) {
	u := unreadCounts{Projects: map[string]int{}, Sessions: map[string]int{}}
	for _, r := range counts {
		u.Total += r.Unread
		u.Projects[strconv.FormatInt(r.ProjectID, 10)] += r.Unread
		u.Sessions[strconv.FormatInt(r.SessionID, 10)] = r.Unread
		u.Inbox += r.Inbox
		u.InboxNewest = max(u.InboxNewest, r.InboxNewest)
	}
	data, err := json.Marshal(u)
	if err != nil {
		return nil, err
	}
	return Frame("unread", 0, data), nil
}

// refreshUnread recounts an owner's whole workspace: their read marks moved,
// or their counts were never taken.
func (b *Broker) refreshUnread(owner int64) {
	b.mu.Lock()
	ws, ok := b.owners.workspace(owner)
	b.mu.Unlock()
	if !ok {
		return
	}
	rows, err := b.src.UnreadMail(b.ctx, ws, owner)
	if err != nil {
		if b.ctx.Err() == nil {
			b.log.Warn("live: count unread", "owner_id", owner, "err", err)
		}
		return
	}
	counts := bySession(rows)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.owners.streams[owner] == nil {
		return
	}
	b.owners.counts[owner] = counts
	b.sendUnread(owner, counts)
}

// recountUnread recounts, for the owners watching one workspace, only the
// sessions where notes arrived, in one statement.
func (b *Broker) recountUnread(owners, sessions []int64) {
	var known, unknown []int64
	b.mu.Lock()
	for _, o := range owners {
		if b.owners.counts[o] != nil {
			known = append(known, o)
		} else {
			unknown = append(unknown, o)
		}
	}
	b.mu.Unlock()
	for _, o := range unknown {
		b.refreshUnread(o)
	}
	if len(known) == 0 {
		return
	}
	rows, err := b.src.UnreadMailIn(b.ctx, known, sessions)
	if err != nil {
		if b.ctx.Err() == nil {
			b.log.Warn("live: recount unread", "owners", len(known), "err", err)
		}
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, o := range known {
		if m := b.owners.counts[o]; m != nil {
			for _, sid := range sessions {
				delete(m, sid)
			}
		}
	}
	for _, r := range rows {
		if m := b.owners.counts[r.OwnerID]; m != nil {
			m[r.SessionID] = r.SessionUnread
		}
	}
	for _, o := range known {
		if m := b.owners.counts[o]; m != nil {
			b.sendUnread(o, m)
		}
	}
}

// sendUnread sends an owner's counts to the streams that had other counts last.
func (b *Broker) sendUnread(owner int64, counts map[int64]store.SessionUnread) {
	ev, err := unreadFrame(counts)
	if err != nil {
		b.log.Warn("live: frame unread", "owner_id", owner, "err", err)
		return
	}
	for st := range b.owners.streams[owner] {
		if !bytes.Equal(st.unread, ev) {
			st.unread = ev
			b.send(st, Event{Data: ev})
		}
	}
}

// FirstUnread queues a new stream's first unread event, unless a recount
// since it subscribed already queued a newer one.
func (b *Broker) FirstUnread(st *Stream, ev []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st.unread == nil {
		st.unread = ev
		b.send(st, Event{Data: ev})
	}
}
