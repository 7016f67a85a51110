// Package repo names a repository the way the collision radar compares them (Normalize), for the
// server and `osfoundry agent hook` alike.
package repo

import "strings"

// Normalize turns the ways people and tools write a repository into one owner/name, lowercase,
// without host, scheme, user, port or ".git"; ignoring the host may warn once too often, which is
// cheaper than missing a collision.
func Normalize(raw string) string {
	r := strings.ToLower(strings.TrimSpace(raw))
	if r == "" {
		return ""
	}
	if i := strings.Index(r, "://"); i >= 0 {
		r = r[i+3:]
		j := strings.Index(r, "/")
		if j < 0 {
			return "" // a host alone names no repository
		}
		r = r[j+1:] // drop user@host:port
	} else if i := strings.Index(r, ":"); i >= 0 && !strings.ContainsAny(r[:i], `/\`) {
		r = r[i+1:] // scp-like user@host:path
	}
	if i := strings.IndexAny(r, "?#"); i >= 0 {
		r = r[:i]
	}
	parts := strings.FieldsFunc(r, func(c rune) bool { return c == '/' || c == '\\' })
	for len(parts) > 0 {
		last := strings.TrimSuffix(parts[len(parts)-1], ".git")
		if last != "" {
			parts[len(parts)-1] = last
			break
		}
		parts = parts[:len(parts)-1]
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return parts[len(parts)-2] + "/" + parts[len(parts)-1]
}
