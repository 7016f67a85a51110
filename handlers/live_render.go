package handlers

import (
	"time"

	"github.com/osfoundry/osfoundry/handlers/web"
	"github.com/osfoundry/osfoundry/live"
	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/views"
)

// liveRender renders the live streams' events as the pages render them.
var liveRender = live.Render{
	Note: func(now time.Time, sessionID int64, n store.Note, own bool) ([]byte, error) {
		return web.Fragment(now, views.MailRows(sessionID, []views.MailRow{views.NewMailRow(n, own, 0, true)}))
	},
	Receipts: func(now time.Time, noteID int64, receipts []store.Receipt) ([]byte, error) {
		return web.Fragment(now, views.NoteReceipts(noteID, true, views.ReadBy(receipts)))
	},
	Presence: func(now time.Time, sessionID int64, p store.Project, agents []store.SeatedAgent) live.Sidebar {
		v := presenceOf(now, sessionID, p, agents)
		return live.Sidebar{Version: v.Version, HTML: func() ([]byte, error) { return web.Fragment(now, views.PresenceSidebar(v)) }}
	},
}
