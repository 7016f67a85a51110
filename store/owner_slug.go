package store

import (
	"strconv"
	"strings"
)

// ownerSlugPrefix starts every owner's sender slug: the one definition the
// store's statements are written with too (forOwners; migration 031's
// index predicate spells it as it was then).
const ownerSlugPrefix = "owner-"

// OwnerSlug is an owner's address as a mail sender.
func OwnerSlug(ownerID int64) string { return ownerSlugPrefix + strconv.FormatInt(ownerID, 10) }

// ParseOwnerSlug returns the owner id of an OwnerSlug, and false for any
// other text.
func ParseOwnerSlug(slug string) (int64, bool) {
	digits, ok := strings.CutPrefix(slug, ownerSlugPrefix)
	if !ok || digits == "" || digits[0] == '0' || digits[0] == '+' {
		return 0, false
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}
