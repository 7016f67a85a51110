package store

// The store's own expressions for what a note row means, exported for a
// loader that writes rows set-based (store/testfactory): each is the one
// the store's statements are built with, so a fixture cannot drift from them.

// notePosted is whether the notes row note gets a note_posted event:
// analysis notes are owner-only and agents read events.
func notePosted(note string) string { return note + `.message_type <> 'analysis'` }

// notePostedPayload is the payload of the notes row note's note_posted event.
func notePostedPayload(note string) string {
	return `jsonb_build_object('note_id', ` + note + `.id, 'sender_slug', ` + note + `.sender_slug, 'message_type', ` + note + `.message_type)`
}

// NotePostedSQL is the condition under which the notes row aliased note
// gets a note_posted event, and PayloadSQL that event's payload.
func NotePostedSQL(note string) (condition, payload string) {
	return notePosted(note), notePostedPayload(note)
}

// ReadableBySQL is which notes (aliased n) the connection conn, sender slug
// slug, may read (readableBy); ReceiptForSQL which of them get a receipt
// when read (receiptFor). Both take SQL expressions.
func ReadableBySQL(conn, slug string) string { return readableBy(conn, slug) }

// ReceiptForSQL: see ReadableBySQL.
func ReceiptForSQL(conn string) string { return receiptFor(conn) }
