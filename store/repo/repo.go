// Package repo names a repository the way the collision radar compares
// them: the server when it stores a status, and `osfoundry agent hook` when
// it reports the checkout's repository, call the same Normalize.
package repo

import "strings"

// Normalize turns the ways people and tools write a repository into one
// name: owner/name, lowercase, without the host, the scheme, a user, a
// port or ".git". https://github.com/Acme/Shop.git, git@github.com:acme/shop,
// github.com/acme/shop and acme/shop are all "acme/shop"; a name with one
// segment ("widgets") stays one. Two repositories with the same owner and
// name on different hosts compare equal: the radar then warns once too
// often, which is cheaper than missing a collision. Blank input gives "".
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
