package agent

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

type callback struct {
	code string
	err  error
}

// callbackHandler checks state and iss (RFC 9207) and hands the code, or the
// refusal, to done.
func callbackHandler(state, issuer string, requireIss bool, done chan<- callback) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var cb callback
		switch {
		case q.Get("state") != state:
			http.Error(w, "This sign-in link is stale; run osfoundry agent login again.", http.StatusBadRequest)
			return
		case !q.Has("iss") && requireIss:
			cb.err = fmt.Errorf("the answer carries no iss, which %s always adds: it may not come from that server", issuer)
		case q.Has("iss") && strings.TrimRight(q.Get("iss"), "/") != strings.TrimRight(issuer, "/"):
			cb.err = fmt.Errorf("the answer came from %q, not %q", q.Get("iss"), issuer)
		case q.Get("error") == "access_denied":
			cb.err = errors.New("the connection was denied on the consent page")
		case q.Get("error") != "":
			cb.err = fmt.Errorf("authorization failed: %s: %s", q.Get("error"), q.Get("error_description"))
		case q.Get("code") == "":
			cb.err = errors.New("the redirect carried no authorization code")
		default:
			cb.code = q.Get("code")
		}
		msg := "osFoundry is connected. You can close this tab and return to the terminal."
		if cb.err != nil {
			msg = "osFoundry was not connected: " + cb.err.Error()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>osFoundry</title><p>%s</p>", html.EscapeString(msg))
		select {
		case done <- cb:
		default:
		}
	})
	return mux
}

// openBrowser opens http and https URLs only: the system's opener would hand
// any other scheme (file: among them) to whatever program claims it.
func openBrowser(u string) error {
	if p, err := url.Parse(u); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || printable(u) != u {
		return fmt.Errorf("not opening %q in a browser: only http and https URLs are", u)
	}
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return errors.New("no graphical session")
		}
		cmd = exec.Command("xdg-open", u)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
