package store

import (
	"strconv"
	"strings"
)

const ownerSlugPrefix = "owner-"

const maxOwnerSlugDigits = 18

// OwnerSlug is an owner's sender slug, owner-<id>.
func OwnerSlug(ownerID int64) string { return ownerSlugPrefix + strconv.FormatInt(ownerID, 10) }

// ParseOwnerSlug returns the owner id of an OwnerSlug, and false for any
// other text.
func ParseOwnerSlug(slug string) (int64, bool) {
	digits, ok := strings.CutPrefix(slug, ownerSlugPrefix)
	if !ok || digits == "" || len(digits) > maxOwnerSlugDigits || digits[0] == '0' || digits[0] == '+' {
		return 0, false
	}
	id, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}
