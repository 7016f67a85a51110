package store

// readsCommitAsync is a condition that is always true and, on the way, turns
// off synchronous_commit for the transaction it runs in (set_config's
// is_local): written into the one statement of a transaction whose only
// writes are read receipts or read marks (read_session_mail, an owner's
// read marks), so that its commit does not wait for the WAL to reach the
// disk. A crash of PostgreSQL may then lose the receipts and marks of the
// last few hundred milliseconds (wal_writer_delay, three times at most),
// never a note, a status or an answer: those commit synchronously, and a
// synchronous commit flushes every earlier commit's WAL with its own. It
// must never go into a statement that writes anything else.
const readsCommitAsync = `set_config('synchronous_commit', 'off', true) = 'off'`
