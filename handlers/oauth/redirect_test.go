package oauth

import (
	"net/url"
	"strings"
	"testing"
)

func TestMatchRedirectURI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		registered, requested string
		want                  bool
	}{
		{"https://app.example.com/cb", "https://app.example.com/cb", true},
		{"https://app.example.com/cb", "https://app.example.com:8443/cb", false},
		{"https://app.example.com:8443/cb", "https://app.example.com/cb", false},
		{"https://app.example.com/cb", "https://app.example.com/cb/", false},
		{"https://app.example.com/cb", "https://APP.example.com/cb", false},
		{"https://app.example.com/cb", "https://app.example.com/cb?x=1", false},
		{"http://localhost/callback", "http://localhost:53682/callback", true},
		{"http://localhost:3000/callback", "http://localhost:53682/callback", true},
		{"http://127.0.0.1/callback", "http://127.0.0.1:1/callback", true},
		{"http://[::1]/callback", "http://[::1]:8080/callback", true},
		{"http://localhost/callback", "http://127.0.0.1:8080/callback", false},
		{"http://localhost/callback", "http://localhost:8080/other", false},
		{"http://localhost/callback", "http://localhost:8080/callback?x=1", false},
		{"http://localhost/callback", "http://localhost:99999/callback", false},
		{"http://localhost/callback", "http://localhost:80a/callback", false},
		{"http://localhost/callback", "http://user@localhost:8080/callback", false},
		{"http://localhost/callback", "http://localhost.evil.example:8080/callback", false},
		{"http://localhost/callback", "https://localhost:8080/callback", false},
		{"https://localhost/callback", "https://localhost:8080/callback", false},
		{"cursor://anysphere.cursor-retrieval/oauth/cb", "cursor://anysphere.cursor-retrieval/oauth/cb", true},
		{"cursor://anysphere.cursor-retrieval/oauth/cb", "cursor://anysphere.cursor-retrieval:1/oauth/cb", false},
		{"http://127.0.0.1/cb", "", false},
	} {
		if got := MatchRedirectURI([]string{tc.registered}, tc.requested); got != tc.want {
			t.Errorf("MatchRedirectURI(%q, %q) = %v, want %v", tc.registered, tc.requested, got, tc.want)
		}
	}
}

// FuzzMatchRedirectURI checks the matcher's safety: a match is either exact
// or an http loopback URI that differs from the registered one only by port.
func FuzzMatchRedirectURI(f *testing.F) {
	for _, s := range [][2]string{
		{"http://localhost/callback", "http://localhost:53682/callback"},
		{"http://127.0.0.1/cb", "http://127.0.0.1:1/cb"},
		{"http://[::1]/cb", "http://[::1]:8080/cb"},
		{"https://app.example.com/cb", "https://app.example.com:8443/cb"},
		{"cursor://x/cb", "cursor://x/cb"},
		{"http://localhost/cb", "http://localhost@evil.example/cb"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, registered, requested string) {
		if !MatchRedirectURI([]string{registered}, requested) || registered == requested {
			return
		}
		a, err1 := url.Parse(registered)
		b, err2 := url.Parse(requested)
		if err1 != nil || err2 != nil {
			t.Fatalf("matched unparsable URIs %q %q", registered, requested)
		}
		if b.Scheme != "http" || !isLoopbackLiteral(b.Hostname()) || b.Hostname() != a.Hostname() {
			t.Fatalf("non-loopback or cross-host match: %q %q", registered, requested)
		}
		if b.User != nil || strings.Contains(requested, "#") {
			t.Fatalf("matched with userinfo or fragment: %q", requested)
		}
		if a.EscapedPath() != b.EscapedPath() || a.RawQuery != b.RawQuery {
			t.Fatalf("path or query differ: %q %q", registered, requested)
		}
	})
}

func TestValidateRedirectURI(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{
		"https://app.example.com/cb", "http://localhost/cb", "http://127.0.0.1:8080/cb", "http://[::1]/cb",
		"cursor://anysphere.cursor-retrieval/oauth/cb", "com.example.app:/oauth2redirect", "vscode://publisher.ext/cb",
	} {
		if err := ValidateRedirectURI(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"", "/relative", "http://example.com/cb", "https://app.example.com/cb#frag", "javascript:alert(1)",
		"data:text/html,x", "file:///etc/passwd", "https:///nohost", "https://user:pw@app.example.com/cb",
		"https://app.example.com/a b", "http://localhost.evil.example/cb",
	} {
		if err := ValidateRedirectURI(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCheckDocumentURL(t *testing.T) {
	t.Parallel()
	public := New(Options{BaseURL: "https://foundry.example.com"})
	local := New(Options{BaseURL: "http://127.0.0.1:8080"})
	private := New(Options{BaseURL: "http://127.0.0.1:8080", AllowPrivateTargets: true})
	for _, tc := range []struct {
		s    *Server
		url  string
		want bool
	}{
		{public, "https://claude.ai/oauth/claude-code-client-metadata", true},
		{public, "http://claude.ai/oauth/metadata", false},
		{public, "http://127.0.0.1:9000/client.json", false},
		{local, "http://127.0.0.1:9000/client.json", false},
		{private, "http://127.0.0.1:9000/client.json", true},
		{private, "http://localhost:9000/client.json", true},
		{private, "http://10.0.0.1/client.json", false},
		{private, "http://example.com/client.json", false},
		{public, "https://claude.ai/", false},
		{public, "https://claude.ai", false},
		{public, "https://user@claude.ai/c.json", false},
		{public, "https://claude.ai/c.json#x", false},
		{public, "https://claude.ai/a/../c.json", false},
	} {
		_, err := tc.s.checkDocumentURL(tc.url)
		if (err == nil) != tc.want {
			t.Errorf("checkDocumentURL(%q) on %s: err %v, want ok=%v", tc.url, tc.s.base, err, tc.want)
		}
	}
}

func TestSuccessorIsDeterministicAndKeyed(t *testing.T) {
	t.Parallel()
	a1, r1 := successor([]byte("k1"))("osf_rt_x")
	a2, r2 := successor([]byte("k1"))("osf_rt_x")
	a3, r3 := successor([]byte("k2"))("osf_rt_x")
	a4, _ := successor([]byte("k1"))("osf_rt_y")
	if a1 != a2 || r1 != r2 || a1 == a3 || r1 == r3 || a1 == a4 || a1 == r1 {
		t.Fatal("successor derivation is not deterministic per key and token")
	}
	if !strings.HasPrefix(a1, "osf_at_") || !strings.HasPrefix(r1, "osf_rt_") {
		t.Fatal("successor tokens lack their prefixes")
	}
}

func TestVerifyPKCE(t *testing.T) {
	t.Parallel()
	// RFC 7636 appendix B.
	if !VerifyPKCE("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM") {
		t.Fatal("RFC 7636 example refused")
	}
	if VerifyPKCE("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXj", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM") {
		t.Fatal("wrong verifier accepted")
	}
	if VerifyPKCE("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM") {
		t.Fatal("plain verifier accepted")
	}
}
