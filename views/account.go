package views

import (
	"strings"

	"github.com/osfoundry/osfoundry/store"
)

// AccountData is everything the account page shows.
type AccountData struct {
	Owner *store.Owner
	// SignIns are the owner's sign-ins, latest first; Current is this browser's.
	SignIns []store.SignIn
	Current int64
	// Password is the password change form (values are never shown again).
	Password Form
	// Profile is the name and email form, as sent when refused.
	Profile Form
	// Notice says what the last action did ("" for none).
	Notice string
	// EmailSettings is what the owner wants emailed; EmailOn says SMTP is configured.
	EmailSettings store.EmailSettings
	EmailOn       bool
	// Push is what is pushed, to Devices; VAPIDKey is what a browser subscribes with.
	Push     store.PushSettings
	Devices  []store.PushSubscription
	VAPIDKey string
}

// others reports whether the owner has sign-ins besides this browser's.
func (d AccountData) others() bool {
	for _, si := range d.SignIns {
		if si.ID != d.Current {
			return true
		}
	}
	return false
}

// browserOf roughly names a user agent ("Firefox on Linux").
func browserOf(ua string) string {
	if ua == "" {
		return "Unknown browser"
	}
	browser := ""
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"Chrome/", "Chrome"}, {"Chromium/", "Chromium"},
		{"Safari/", "Safari"}, {"curl/", "curl"},
	} {
		if strings.Contains(ua, b.token) {
			browser = b.name
			break
		}
	}
	system := ""
	for _, o := range []struct{ token, name string }{
		{"iPhone", "iOS"}, {"iPad", "iPadOS"}, {"Android", "Android"}, {"Windows", "Windows"},
		{"Mac OS X", "macOS"}, {"CrOS", "ChromeOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			system = o.name
			break
		}
	}
	switch {
	case browser != "" && system != "":
		return browser + " on " + system
	case browser != "":
		return browser
	case system != "":
		return "A browser on " + system
	}
	if r := []rune(ua); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return ua
}
