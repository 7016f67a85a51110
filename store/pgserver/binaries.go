package pgserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// searchGlob is where Debian's postgresql packages put their binaries.
var searchGlob = "/usr/lib/postgresql/*/bin"

// FindBinDir returns the folder holding initdb and postgres: $OSFOUNDRY_PG_BIN,
// the newest /usr/lib/postgresql/*/bin, or the folder of initdb on PATH.
func FindBinDir() (string, error) {
	var looked []string
	if d := os.Getenv("OSFOUNDRY_PG_BIN"); d != "" {
		if hasBinaries(d) {
			return d, nil
		}
		looked = append(looked, d+" (OSFOUNDRY_PG_BIN)")
	}
	matches, _ := filepath.Glob(searchGlob)
	sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
	for _, d := range matches {
		if hasBinaries(d) {
			return d, nil
		}
	}
	looked = append(looked, searchGlob)
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if hasBinaries(d) {
			return d, nil
		}
	}
	looked = append(looked, "initdb on $PATH")
	return "", fmt.Errorf("no PostgreSQL server binaries (initdb, postgres) found; looked in %s. "+
		"Install them with `apt-get install postgresql`, point OSFOUNDRY_PG_BIN at their folder, "+
		"or set DATABASE_URL to use an existing PostgreSQL server", strings.Join(looked, ", "))
}

func versionOf(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

func hasBinaries(dir string) bool {
	for _, b := range []string{"initdb", "postgres"} {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}
