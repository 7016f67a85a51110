package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeAgentLinesRunAsWritten: the README's `osfoundry agent` lines
// run in the agent's checkout, not in this repository, where bin/osfoundry
// is no command; the README has `make install` put osfoundry on the PATH
// first. Done as written (with a PREFIX of the test's own), each line
// finds the command (run with --help, which needs no server).
func TestReadmeAgentLinesRunAsWritten(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var block string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(m[1], "osfoundry agent login") {
			block = m[1]
		}
	}
	var agentLines []string
	installed := false
	for _, l := range strings.Split(block, "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		cmd = strings.TrimSpace(cmd)
		switch {
		case cmd == "make install":
			installed = true
		case strings.HasPrefix(cmd, "osfoundry agent "):
			if !installed {
				t.Fatalf("README runs %q before anything puts osfoundry on the PATH", cmd)
			}
			agentLines = append(agentLines, cmd)
		}
	}
	if len(agentLines) < 2 {
		t.Fatalf("README's agent block has %d osfoundry agent lines:\n%s", len(agentLines), block)
	}

	prefix := t.TempDir()
	install := exec.Command("make", "-s", "install", "PREFIX="+prefix)
	install.Dir = "../.."
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	checkout := t.TempDir()
	for _, line := range agentLines {
		sh := exec.Command("sh", "-c", line+" --help")
		sh.Dir = checkout
		sh.Env = append(os.Environ(), "PATH="+filepath.Join(prefix, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := sh.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "osfoundry agent login --server URL") {
			t.Errorf("%s: %v\n%s", line, err, out)
		}
	}
}
