//go:build unix

package agent

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFileQuick takes the exclusive lock of path, waiting at most a second:
// the spool's holders keep it for a read and a write.
func lockFileQuick(path string) (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return lockFile(ctx, path)
}

// holdShared takes path's lock shared and keeps it until release: a bridge
// holds its account's bridge lock so for its life.
func holdShared(path string) (release func(), err error) {
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// lockHeld reports whether someone holds path's lock (shared or not).
func lockHeld(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// processAlive reports whether a process of this id runs (a bridge that was
// killed leaves its id in the spool).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
