package store

// readsCommitAsync is a condition that is always true and, on the way, turns off synchronous_commit
// for the transaction it runs in (set_config's is_local).
const readsCommitAsync = `set_config('synchronous_commit', 'off', true) = 'off'`
