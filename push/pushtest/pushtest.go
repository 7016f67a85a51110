// Package pushtest is a push service for tests (RFC 8030), local and
// strict: it accepts a push only with a valid VAPID token (RFC 8292) for
// its origin, signed by the application server key the browser subscribed
// with, and decrypts every message with the subscription's keys (RFC
// 8291), so that a test reads exactly what a phone would show.
package pushtest

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/push"
)

var b64 = base64.RawURLEncoding

// Service is the push service. Its zero value is not usable; use Start.
type Service struct {
	URL string
	t   testing.TB
	srv *httptest.Server
	// key is the application server key (base64url) pushes must be signed with.
	key string

	mu      sync.Mutex
	devices map[string]*Device
	next    int
}

// Device is one browser's subscription at the service: what it gives the
// server (Endpoint, P256dh, Auth, base64url) and what it keeps.
type Device struct {
	Endpoint string
	P256dh   string
	Auth     string
	priv     *ecdh.PrivateKey
	auth     []byte
	// answers are the statuses the next pushes get, then 201.
	answers  []int
	messages []Message
	refused  int
}

// Message is one push the service accepted, decrypted.
type Message struct {
	Payload push.Payload
	// Raw is the decrypted message as it came.
	Raw []byte
	// TTL, Urgency and Topic are the push's headers.
	TTL, Urgency, Topic string
}

// Start runs a push service for pushes signed with appServerKey (the
// server's VAPID public key, base64url); it stops with the test.
func Start(t testing.TB, appServerKey string) *Service {
	s := &Service{t: t, key: appServerKey, devices: map[string]*Device{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	return s
}

// AddrPort is the service's address, for outbound.Options.Allow.
func (s *Service) AddrPort() netip.AddrPort {
	u, _ := url.Parse(s.URL)
	return netip.MustParseAddrPort(u.Host)
}

// Subscribe makes a new subscription, as a browser's PushManager does.
func (s *Service) Subscribe() *Device {
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		s.t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth) //nolint:errcheck
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	d := &Device{Endpoint: s.URL + "/push/" + strconv.Itoa(s.next), P256dh: b64.EncodeToString(priv.PublicKey().Bytes()),
		Auth: b64.EncodeToString(auth), priv: priv, auth: auth}
	s.devices["/push/"+strconv.Itoa(s.next)] = d
	return d
}

// Answer makes the device's next pushes get these statuses, in order,
// before the service accepts again (201).
func (s *Service) Answer(d *Device, statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.answers = append(d.answers, statuses...)
}

// Accept drops the statuses Answer queued for the device: the next push is
// accepted.
func (s *Service) Accept(d *Device) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.answers = nil
}

// Messages are the pushes the device got, in order.
func (s *Service) Messages(d *Device) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), d.messages...)
}

// Refused counts the device's pushes answered other than 201.
func (s *Service) Refused(d *Device) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return d.refused
}

// WaitMessages waits until the device got n pushes and returns them.
func (s *Service) WaitMessages(t testing.TB, d *Device, n int, within time.Duration) []Message {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if m := s.Messages(d); len(m) >= n {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("pushtest: %d pushes to %s, want %d", len(s.Messages(d)), d.Endpoint, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	d := s.devices[r.URL.Path]
	s.mu.Unlock()
	if d == nil || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if err := s.checkVAPID(r.Header.Get("Authorization")); err != nil {
		s.t.Errorf("pushtest: push to %s refused: %v", r.URL.Path, err)
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	if r.Header.Get("Content-Encoding") != "aes128gcm" {
		s.t.Errorf("pushtest: Content-Encoding %q, want aes128gcm", r.Header.Get("Content-Encoding"))
		http.Error(w, "aes128gcm only", http.StatusUnsupportedMediaType)
		return
	}
	if r.Header.Get("TTL") == "" {
		s.t.Errorf("pushtest: a push without TTL")
		http.Error(w, "TTL is required", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4097))
	if err != nil || len(body) > 4096 {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
		return
	}
	plain, err := push.Decrypt(d.priv, d.auth, body)
	if err != nil {
		s.t.Errorf("pushtest: push to %s: %v", r.URL.Path, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(d.answers) > 0:
		status := d.answers[0]
		d.answers = d.answers[1:]
		if status >= 300 {
			d.refused++
			if status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
			}
			http.Error(w, http.StatusText(status), status)
			return
		}
	}
	m := Message{Raw: plain, TTL: r.Header.Get("TTL"), Urgency: r.Header.Get("Urgency"), Topic: r.Header.Get("Topic")}
	if err := json.Unmarshal(plain, &m.Payload); err != nil {
		s.t.Errorf("pushtest: the message is not a payload: %v: %s", err, plain)
	}
	d.messages = append(d.messages, m)
	w.WriteHeader(http.StatusCreated)
}

// checkVAPID checks an Authorization header as RFC 8292 asks: "vapid t=<JWT>,
// k=<key>", k the key the browser subscribed with, the JWT ES256-signed by
// it, for this service's origin, expiring within 24 hours, with a contact.
func (s *Service) checkVAPID(h string) error {
	rest, ok := strings.CutPrefix(h, "vapid ")
	if !ok {
		return fmt.Errorf("authorization %q is not vapid", h)
	}
	params := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		params[k] = v
	}
	if params["k"] != s.key {
		return fmt.Errorf("k=%q is not the application server key %q", params["k"], s.key)
	}
	pubRaw, err := b64.DecodeString(params["k"])
	if err != nil {
		return fmt.Errorf("k: %v", err)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pubRaw)
	if err != nil {
		return fmt.Errorf("k: %v", err)
	}
	parts := strings.Split(params["t"], ".")
	if len(parts) != 3 {
		return fmt.Errorf("t is not a JWT")
	}
	var header struct{ Alg, Typ string }
	var claims struct {
		Aud string
		Exp int64
		Sub string
	}
	if err := decodePart(parts[0], &header); err != nil || header.Alg != "ES256" {
		return fmt.Errorf("JWT header %+v (%v), want alg ES256", header, err)
	}
	if err := decodePart(parts[1], &claims); err != nil {
		return fmt.Errorf("JWT claims: %v", err)
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return fmt.Errorf("JWT signature is not 64 bytes of base64url")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return fmt.Errorf("JWT signature does not verify with k")
	}
	now := time.Now().Unix()
	switch {
	case claims.Aud != s.URL:
		return fmt.Errorf("aud %q, want %q", claims.Aud, s.URL)
	case claims.Exp <= now:
		return fmt.Errorf("exp %d is past", claims.Exp)
	case claims.Exp > now+24*3600:
		return fmt.Errorf("exp %d is more than 24 hours away", claims.Exp)
	case !strings.HasPrefix(claims.Sub, "mailto:") && !strings.HasPrefix(claims.Sub, "https://"):
		return fmt.Errorf("sub %q is neither a mailto: nor an https: contact", claims.Sub)
	}
	return nil
}

func decodePart(p string, v any) error {
	b, err := b64.DecodeString(p)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
