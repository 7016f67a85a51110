//go:build !unix

package agent

func lockFileQuick(string) (func(), error) { return nil, errNoLocks }

func holdShared(string) (func(), error) { return nil, errNoLocks }

func lockHeld(string) bool { return false }

func processAlive(int) bool { return true }
