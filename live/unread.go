package live

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
)

// unreadCounts is the data of the unread event: the owner's unread notes in
// all, per project and per session (those with any), ids as keys; and of
// them, those in the owner's inbox and the newest of those, which the inbox
// page fetches when it has not got it.
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
	u := unreadCounts{Projects: map[string]int{}, Sessions: map[string]int{}}
	for _, r := range rows {
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

// refreshUnread recounts an owner's unread notes and sends the counts to
// each of their streams that had other counts last.
func (b *Broker) refreshUnread(owner int64) {
	b.mu.Lock()
	ws, ok := b.ownerWorkspace(owner)
	b.mu.Unlock()
	if !ok {
		return
	}
	ev, err := b.UnreadEvent(b.ctx, ws, owner)
	if err != nil {
		if b.ctx.Err() == nil {
			b.log.Warn("live: count unread", "owner_id", owner, "err", err)
		}
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for st := range b.byOwner[owner] {
		if !bytes.Equal(st.unread, ev) {
			st.unread = ev
			b.send(st, Event{Data: ev})
		}
	}
}

// ownerWorkspace is the workspace of an owner's open streams, and false
// when they have none. b.mu is held.
func (b *Broker) ownerWorkspace(owner int64) (int64, bool) {
	for st := range b.byOwner[owner] {
		return st.workspaceID, true
	}
	return 0, false
}

// FirstUnread queues a new stream's first unread event (UnreadEvent),
// unless a recount since it subscribed already queued it one (as new or
// newer).
func (b *Broker) FirstUnread(st *Stream, ev []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st.unread == nil {
		st.unread = ev
		b.send(st, Event{Data: ev})
	}
}
