// Package migrations holds the numbered SQL files that build the schema. They
// are embedded in the binary and applied by store.Migrate at start-up.
package migrations

import "embed"

// FS holds every NNN_name.sql file of this folder.
//
//go:embed *.sql
var FS embed.FS
