package main

import (
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store/storetest"
)

var tokenPattern = regexp.MustCompile(`osf_at_[A-Za-z0-9_-]+`)

// TestTokenCreateBindsToTheServedBaseURL: token create, run beside a server
// and given no base URL, binds the token to the base URL that server recorded
// at start and prints it; the server accepts the token. --base-url overrides,
// and a token bound elsewhere is refused. A --project the workspace does not
// have is refused, naming the projects it has.
func TestTokenCreateBindsToTheServedBaseURL(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	w := newWorld(t, dsn, "http://unused.example", 0)
	addr := freePort(t)
	_, port, _ := net.SplitHostPort(addr)
	base := "http://localhost:" + port // differs from the listen address 127.0.0.1:port
	r := startReplica(t, dsn, base, "--addr", addr)
	r.waitReady()

	create := func(extra ...string) (out, token string) {
		t.Helper()
		cmd := exec.Command(binary(t), append([]string{"token", "create", "--email", w.owner.Email, "--log-level", "error"}, extra...)...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "OSFOUNDRY_BASE_URL=")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("token create %v: %v\n%s", extra, err, b)
		}
		return string(b), tokenPattern.FindString(string(b))
	}

	out, token := create()
	if !strings.Contains(out, "created for "+base+"/mcp") || token == "" {
		t.Fatalf("token create does not name the resource %s/mcp:\n%s", base, out)
	}
	if rep, err := callTool(r.URL, token, "list_agents", map[string]any{}); err != nil || rep.status != 200 || rep.isError {
		t.Fatalf("the server refuses the token bound to its recorded base URL: %+v %v", rep, err)
	}

	out, token = create("--base-url", "http://other.example:9")
	if !strings.Contains(out, "created for http://other.example:9/mcp") {
		t.Fatalf("--base-url not used:\n%s", out)
	}
	if rep, err := callTool(r.URL, token, "list_agents", map[string]any{}); err != nil || rep.status != 401 {
		t.Fatalf("a token bound to another address: %+v %v", rep, err)
	}

	// A project name the workspace does not have is refused, naming those it has.
	cmd := exec.Command(binary(t), "token", "create", "--email", w.owner.Email, "--log-level", "error", "--project", "My project")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "OSFOUNDRY_BASE_URL=")
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), `token create --project: no project named "My project" in this workspace; its projects are "P"`) {
		t.Fatalf("unknown project: %v\n%s", err, b)
	}
}
