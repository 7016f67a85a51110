//go:build !unix

package agent

import (
	"context"
	"errors"
)

var errNoLocks = errors.New("osfoundry agent needs file locks, available on unix systems only")

func lockFile(context.Context, string) (func(), error) { return nil, errNoLocks }

func tryLockFile(string) (func(), bool, error) { return nil, false, errNoLocks }
