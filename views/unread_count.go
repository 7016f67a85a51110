package views

import (
	"strconv"

	"github.com/osfoundry/osfoundry/store"
)

// unreadShown is how an unread count reads: the number, or "99+" once it
// reaches the cap where the store stops counting (store.MaxUnreadCounted).
// static/app.js words the live counts the same way.
func unreadShown(n int) string {
	if n >= store.MaxUnreadCounted {
		return strconv.Itoa(store.MaxUnreadCounted-1) + "+"
	}
	return strconv.Itoa(n)
}
