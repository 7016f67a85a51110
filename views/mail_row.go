package views

import "github.com/osfoundry/osfoundry/store"

// NewMailRow is note n's row as an owner sees it, with the one unread rule:
// a note is unread when it is newer than the owner's read mark (lastRead;
// 0 for a note the stream sends as it is posted, newer than any mark) and
// not the owner's own. live marks a row that joins a page already shown
// (the stream, a poll, a post's answer).
func NewMailRow(n store.Note, own bool, lastRead int64, live bool) MailRow {
	return MailRow{Note: n, Unread: n.ID > lastRead && !own, Live: live}
}
