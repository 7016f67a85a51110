package handlers

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// osfoundryCommand is how the session page tells an agent to run osfoundry: the
// name when PATH finds this binary under it, else this binary's path.
var osfoundryCommand = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return "osfoundry"
	}
	if on, err := exec.LookPath("osfoundry"); err == nil && sameFile(on, exe) {
		return "osfoundry"
	}
	if filepath.Base(exe) != "osfoundry" {
		// A test binary, or a renamed one: the name is the best advice.
		return "osfoundry"
	}
	return exe
})

func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}
