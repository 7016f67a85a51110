package views

// The installable app's colours, those of static/app.css: the top bar
// (theme) and the page (background), light and dark.
const (
	ThemeLight      = "#ffffff"
	ThemeDark       = "#1c2220"
	BackgroundLight = "#f7f7f5"
	BackgroundDark  = "#141816"
)

// DeviceName is the name a subscribed browser gets until its owner renames
// it: its browser and system, like "Chrome on Android".
func DeviceName(userAgent string) string {
	name := browserOf(userAgent)
	if r := []rune(name); len(r) > 80 {
		name = string(r[:80])
	}
	return name
}
