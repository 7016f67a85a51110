// Package views holds the web app's templ components: layout, pages, fragments.
package views

import (
	"context"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// Page is what components need of the request; they read it with PageFrom.
type Page struct {
	Title string
	// CSRF is the token every form and htmx request sends back.
	CSRF string
	// Owner is the signed-in owner, or nil.
	Owner *store.Owner
	// Nav marks the current top-level section ("projects", "connections").
	Nav string
	// Now is the render time, so relative times agree within a page.
	Now time.Time
	// Unread is the tab title's count; static/app.js keeps it current.
	Unread int
	// UnreadScope is what the title counts without a stream (see UnreadStream).
	UnreadScope string
	// Query is the search box's text.
	Query string
}

// OwnerID is the signed-in owner's id, 0 when signed out.
func (p *Page) OwnerID() int64 {
	if p.Owner == nil {
		return 0
	}
	return p.Owner.ID
}

// Role is the signed-in person's role, "" when signed out.
func (p *Page) Role() string {
	if p.Owner == nil {
		return ""
	}
	return string(p.Owner.Role)
}

// CanWrite offers writing to members and admins, and in fragments for everyone,
// where the body's data-role hides it from viewers.
func (p *Page) CanWrite() bool { return p.Owner == nil || p.Owner.Role.May(store.RoleMember) }

// IsAdmin reports whether the signed-in person is an admin.
func (p *Page) IsAdmin() bool { return p.Owner != nil && p.Owner.Role.May(store.RoleAdmin) }

type pageKey struct{}

// WithPage returns ctx carrying p.
func WithPage(ctx context.Context, p *Page) context.Context {
	return context.WithValue(ctx, pageKey{}, p)
}

// PageFrom returns the Page of ctx, or an empty one.
func PageFrom(ctx context.Context) *Page {
	if p, ok := ctx.Value(pageKey{}).(*Page); ok && p != nil {
		return p
	}
	return &Page{Now: time.Now()}
}
