package store

import "strconv"

// unreadCounted selects one row (count, newest) of the notes of the session
// unreadBy the owner that also meet the condition also on notes n: how many
// there are, up to MaxUnreadCounted (the owner's pages show that many as
// "99+"), and the newest of them (0 when none). It reads the newest
// entries of notes_unread_idx above the owner's mark, index-only (the index
// carries the columns unreadBy and forOwners test), and stops at the cap: an
// owner who never opened a session of tens of thousands of notes costs
// MaxUnreadCounted index entries there, not its backlog.
func unreadCounted(owner, session, also string) string {
	return `SELECT count(*)::int AS count, coalesce(max(c.id), 0) AS newest FROM (
		SELECT n.id FROM notes n WHERE ` + unreadBy(owner, session) + ` AND ` + also + `
		ORDER BY n.session_id DESC, n.id DESC LIMIT ` + strconv.Itoa(MaxUnreadCounted) + `) c`
}

// unreadCount is the owner's capped unread count of the session, as a
// scalar SQL expression (unreadCounted's count).
func unreadCount(owner, session string) string {
	return `(SELECT u.count FROM (` + unreadCounted(owner, session, "true") + `) u)`
}
