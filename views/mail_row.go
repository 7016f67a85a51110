package views

import "github.com/osfoundry/osfoundry/store"

// NewMailRow holds the one unread rule: newer than the owner's read mark
// (lastRead; 0 for a note streamed as posted) and not the owner's own.
func NewMailRow(n store.Note, own bool, lastRead int64, live bool) MailRow {
	return MailRow{Note: n, Unread: n.ID > lastRead && !own, Live: live}
}
