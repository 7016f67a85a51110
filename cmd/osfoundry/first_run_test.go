package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store/storetest"
)

var setupCodeLog = regexp.MustCompile(`setup code: ([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})`)

// setupCodeOf waits for the replica to log its setup code and checks the
// file that holds it (only its owner may read it).
func setupCodeOf(t *testing.T, r *replica) string {
	t.Helper()
	r.waitLog("setup code: ")
	m := setupCodeLog.FindStringSubmatch(r.logs.String())
	if m == nil {
		t.Fatalf("no setup code in the log:\n%s", r.logs.String())
	}
	path := filepath.Join(r.dataDir, "setup-code")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if strings.TrimSpace(string(b)) != m[1] {
		t.Fatalf("%s holds %q, the log says %q", path, b, m[1])
	}
	return m[1]
}

// TestFirstOwnerNeedsTheSetupCode: while no owner exists, each replica logs
// a setup code and writes it to <data-dir>/setup-code; /setup refuses a
// wrong one and a foreign Host, takes any replica's code, and once the
// first owner exists every replica removes its file.
func TestFirstOwnerNeedsTheSetupCode(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	a := startReplica(t, dsn, "")
	b := startReplica(t, dsn, "")
	a.waitReady()
	b.waitReady()
	setupCodeOf(t, a)
	codeB := setupCodeOf(t, b)

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	rebound, _ := http.NewRequest(http.MethodGet, a.URL+"/setup", nil)
	rebound.Host = "rebind.attacker.example" + a.URL[strings.LastIndexByte(a.URL, ':'):]
	if res, err := c.Do(rebound); err != nil || res.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("GET /setup under a rebound name: %v %v, want 421", err, res)
	}
	res, err := c.Get(a.URL + "/setup")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := goquery.NewDocumentFromReader(res.Body)
	res.Body.Close()
	if doc.Find(`label[for="setup_code"]`).Text() != "Setup code" {
		t.Fatal(`no field labelled "Setup code" on /setup`)
	}
	form := inputs(doc, "form", false)
	form.Set("email", "first@example.com")
	form.Set("display_name", "First")
	form.Set("password", ownerPassword)
	post := func(code string) (int, string) {
		t.Helper()
		f := url.Values{}
		for k, v := range form {
			f[k] = v
		}
		f.Set("setup_code", code)
		res, err := c.PostForm(a.URL+"/setup", f)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	if status, body := post("AAAA-BBBB-CCCC"); status != http.StatusUnprocessableEntity || !strings.Contains(body, "not the setup code") {
		t.Fatalf("a wrong code: %d", status)
	}
	// B's code works on A: the codes live in the shared database.
	if status, _ := post(strings.ToLower(codeB)); status != http.StatusSeeOther {
		t.Fatalf("B's code on A: %d, want the first owner created", status)
	}
	for _, r := range []*replica{a, b} {
		awaitCond(t, 10*time.Second, "the setup code file removed on "+r.URL, func() bool {
			_, err := os.Stat(filepath.Join(r.dataDir, "setup-code"))
			return os.IsNotExist(err)
		})
	}
	if n := countRows(t, dsn, `SELECT count(*) FROM setup_codes`); n != 0 {
		t.Fatalf("%d setup codes left once the first owner exists", n)
	}
	// A replica that starts now offers no code.
	late := startReplica(t, dsn, "")
	late.waitReady()
	late.waitLog("osfoundry is ready")
	if strings.Contains(late.logs.String(), "setup code:") {
		t.Fatal("a replica started after the first owner offered a setup code")
	}
	if _, err := os.Stat(filepath.Join(late.dataDir, "setup-code")); !os.IsNotExist(err) {
		t.Fatalf("setup-code file on a replica started after the first owner: %v", err)
	}
}
