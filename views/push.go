package views

// The installable app's colours, as static/app.css's.
const (
	ThemeLight      = "#ffffff"
	ThemeDark       = "#1c2220"
	BackgroundLight = "#f7f7f5"
	BackgroundDark  = "#141816"
)

// DeviceName names a subscribed browser, like "Chrome on Android".
func DeviceName(userAgent string) string {
	name := browserOf(userAgent)
	if r := []rune(name); len(r) > 80 {
		name = string(r[:80])
	}
	return name
}
