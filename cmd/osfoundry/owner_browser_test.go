package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// ownerBrowser is the world's owner at a browser on base: a
// cookie-carrying client that never follows redirects by itself.
type ownerBrowser struct {
	t    *testing.T
	base string
	w    *world
	c    *http.Client
}

func newOwnerBrowser(t *testing.T, base string, w *world) *ownerBrowser {
	jar, _ := cookiejar.New(nil)
	return &ownerBrowser{t: t, base: base, w: w, c: &http.Client{
		Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// signIn signs the owner in on the login page; the test stops if it fails.
func (o *ownerBrowser) signIn() {
	o.t.Helper()
	res, err := o.submitLogin("/login")
	if err != nil {
		o.t.Fatal(err)
	}
	if res.StatusCode != http.StatusSeeOther {
		o.t.Fatalf("sign-in on %s answered %d", o.base, res.StatusCode)
	}
}

// submitLogin fills in and sends the login form found at path (which may
// carry where to go next).
func (o *ownerBrowser) submitLogin(path string) (*http.Response, error) {
	_, login, err := o.page(path)
	if err != nil {
		return nil, err
	}
	form := inputs(login, "form", false)
	form.Set("email", o.w.owner.Email)
	form.Set("password", ownerPassword)
	return o.post("/login", form)
}

// page fetches a path or URL and parses the HTML.
func (o *ownerBrowser) page(u string) (*http.Response, *goquery.Document, error) {
	res, err := o.c.Get(o.abs(u))
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	doc, err := goquery.NewDocumentFromReader(res.Body)
	return res, doc, err
}

func (o *ownerBrowser) post(u string, form url.Values) (*http.Response, error) {
	res, err := o.c.PostForm(o.abs(u), form)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res, nil
}

func (o *ownerBrowser) abs(u string) string {
	if strings.HasPrefix(u, "/") {
		return o.base + u
	}
	return u
}

// inputs collects the named inputs of the forms matched by sel (hidden ones,
// the radio buttons the page checked, and checkboxes when checkboxes is set:
// ticked or not, as an owner ticking every box would send them).
func inputs(doc *goquery.Document, sel string, checkboxes bool) url.Values {
	v := url.Values{}
	doc.Find(sel + ` input`).Each(func(_ int, s *goquery.Selection) {
		typ, _ := s.Attr("type")
		name, _ := s.Attr("name")
		value, _ := s.Attr("value")
		_, checked := s.Attr("checked")
		if name != "" && (typ == "hidden" || checkboxes && typ == "checkbox" || typ == "radio" && checked) {
			v.Add(name, value)
		}
	})
	return v
}

// approve follows an authorization URL: signs in when asked, approves every
// scope and project on the consent page, and returns the redirect back to the client.
func (o *ownerBrowser) approve(authURL string) (*url.URL, error) {
	res, doc, err := o.page(authURL)
	if err != nil {
		return nil, err
	}
	if loc := res.Header.Get("Location"); res.StatusCode == http.StatusSeeOther && strings.HasPrefix(loc, "/login") {
		signedIn, err := o.submitLogin(loc)
		if err != nil {
			return nil, err
		}
		next := signedIn.Header.Get("Location")
		if signedIn.StatusCode != http.StatusSeeOther || !strings.HasPrefix(next, "/authorize") {
			return nil, fmt.Errorf("sign-in answered %d → %q", signedIn.StatusCode, next)
		}
		if res, doc, err = o.page(next); err != nil {
			return nil, err
		}
	}
	consent := `form[data-testid="consent-form"]`
	if res.StatusCode != http.StatusOK || doc.Find(consent).Length() == 0 {
		return nil, fmt.Errorf("expected the consent page, got %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	form := inputs(doc, consent, true)
	form.Set("decision", "approve")
	res, err = o.post("/authorize", form)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusSeeOther && res.StatusCode != http.StatusFound {
		return nil, fmt.Errorf("consent answered %d", res.StatusCode)
	}
	return url.Parse(res.Header.Get("Location"))
}

// connectionID is the id of the newest live connection of a client on the Connections page.
func (o *ownerBrowser) connectionID(clientName string) (string, url.Values, error) {
	_, doc, err := o.page("/connections")
	if err != nil {
		return "", nil, err
	}
	newest := 0
	doc.Find(`tr[data-testid="connection"]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := strconv.Atoi(s.AttrOr("data-connection-id", ""))
		if strings.Contains(s.Text(), clientName) && id > newest {
			newest = id
		}
	})
	if newest == 0 {
		return "", nil, fmt.Errorf("no connection of %s listed", clientName)
	}
	csrf := url.Values{"_csrf": {doc.Find(`input[name="_csrf"]`).First().AttrOr("value", "")}}
	return strconv.Itoa(newest), csrf, nil
}

// invite invites the client's connection to a session as a contributor, through the session page's form.
func (o *ownerBrowser) invite(sessionID int64, clientName string) error {
	id, form, err := o.connectionID(clientName)
	if err != nil {
		return err
	}
	form.Set("connection_id", id)
	form.Set("role", "contributor")
	res, err := o.post(fmt.Sprintf("/sessions/%d/invitations", sessionID), form)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("invite answered %d", res.StatusCode)
	}
	return nil
}

// note posts the owner's note to the whole session, as the session page's composer does.
func (o *ownerBrowser) note(sessionID int64, subject, body string) error {
	_, doc, err := o.page(fmt.Sprintf("/sessions/%d", sessionID))
	if err != nil {
		return err
	}
	form := url.Values{"_csrf": {doc.Find(`input[name="_csrf"]`).First().AttrOr("value", "")}}
	form.Set("type", "note")
	form.Set("subject", subject)
	form.Set("body", body)
	res, err := o.post(fmt.Sprintf("/sessions/%d/mail", sessionID), form)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("owner's note answered %d", res.StatusCode)
	}
	return nil
}

// revoke revokes the client's newest connection, confirming on the revoke page.
func (o *ownerBrowser) revoke(clientName string) error {
	id, _, err := o.connectionID(clientName)
	if err != nil {
		return err
	}
	_, confirm, err := o.page("/connections/" + id + "/revoke")
	if err != nil {
		return err
	}
	res, err := o.post("/connections/"+id+"/revoke", inputs(confirm, "form", false))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("revoke answered %d", res.StatusCode)
	}
	return nil
}
