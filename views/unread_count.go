package views

import (
	"strconv"

	"github.com/osfoundry/osfoundry/store"
)

// unreadShown caps at "99+" where the store stops counting; static/app.js agrees.
func unreadShown(n int) string {
	if n >= store.MaxUnreadCounted {
		return strconv.Itoa(store.MaxUnreadCounted-1) + "+"
	}
	return strconv.Itoa(n)
}
