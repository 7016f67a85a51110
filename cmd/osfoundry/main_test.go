package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// testServerArg, as the first argument of this test binary, makes it the
// server instead of the tests: `<test binary> osfoundry-test-server serve …`
// is `osfoundry serve …` with testServerConfig. Tests start it as a process
// of its own (startTestReplica) when they need what no flag of the osfoundry
// binary sets, and a process they can kill.
const testServerArg = "osfoundry-test-server"

// testServerConfig is the configuration for tests only that a test server
// runs with: the webhook and mail senders' waits shortened, and a minute
// of the question delays lasting a second.
func testServerConfig(c *config) {
	c.test.fastWebhooks, c.test.fastEmail, c.test.fastPush = true, true, true
	c.test.questionMinute = time.Second
}

// TestMain runs the tests, then stops the private cluster and removes the
// binary they built; or it is the server started by startTestReplica.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == testServerArg {
		if err := run(os.Args[2:], testServerConfig); err != nil {
			fmt.Fprintln(os.Stderr, "osfoundry:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	storetest.Shutdown()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

func TestOwnerAndTokenCommands(t *testing.T) {
	dsn := storetest.NewDatabase(t)
	t.Setenv("DATABASE_URL", dsn)
	t.Setenv("OSFOUNDRY_LOG_LEVEL", "error")

	// The password comes from standard input when it is not a terminal.
	r, w, _ := os.Pipe()
	w.WriteString("a long enough password\n")
	w.Close()
	oldStdin := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = oldStdin }()
	if err := run([]string{"owner", "create", "--email", "Op@Example.com", "--name", "Operator"}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o, err := st.Authenticate(context.Background(), "op@example.com", "a long enough password")
	if err != nil {
		t.Fatalf("created owner cannot sign in: %v", err)
	}
	if _, err := st.CreateProject(context.Background(), o.WorkspaceID, "Site"); err != nil {
		t.Fatal(err)
	}

	if err := run([]string{"owner", "create", "--email", "x@example.com"}); err == nil || !strings.Contains(err.Error(), "--name") {
		t.Fatalf("missing --name: %v", err)
	}
	// No server has started on this database and no --base-url is given:
	// there is no address to bind the token to.
	t.Setenv("OSFOUNDRY_BASE_URL", "")
	if err := run([]string{"token", "create", "--email", "op@example.com"}); err == nil || !strings.Contains(err.Error(), "no base URL known") {
		t.Fatalf("token create without a base URL: %v", err)
	}
	if err := run([]string{"token", "create", "--email", "op@example.com", "--scope", "read", "--project", "Site", "--base-url", "http://localhost:9999"}); err != nil {
		t.Fatal(err)
	}
	// A project named twice is seated once, not refused.
	if err := run([]string{"token", "create", "--email", "op@example.com", "--project", "Site", "--project", "Site", "--base-url", "http://localhost:9999"}); err != nil {
		t.Fatalf("repeated --project: %v", err)
	}
	if err := st.RecordBaseURL(context.Background(), "http://localhost:9998"); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"token", "create", "--email", "op@example.com", "--scope", "admin"}); err == nil || !strings.Contains(err.Error(), "scope") {
		t.Fatalf("bad scope: %v", err)
	}
	if err := run([]string{"token", "create", "--email", "op@example.com", "--project", "Nope"}); err == nil || !strings.Contains(err.Error(), "Nope") {
		t.Fatalf("unknown project: %v", err)
	}
	if err := run([]string{"frobnicate"}); err == nil {
		t.Fatal("unknown command accepted")
	}
	if err := run([]string{"--help"}); err != nil {
		t.Fatalf("--help: %v", err)
	}
}
