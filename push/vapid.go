// Package push sends Web Push (RFC 8030) from the store's push outbox, signed
// with VAPID (RFC 8292) and encrypted as aes128gcm (RFC 8291).
package push

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// b64 is Web Push's encoding: base64url without padding.
var b64 = base64.RawURLEncoding

// Keys is the server's VAPID key pair, the same on every replica.
type Keys struct {
	private *ecdsa.PrivateKey
	public  []byte
}

// GenerateKeys makes a new key pair.
func GenerateKeys() (*Keys, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return keysOf(k)
}

// ParsePrivateKey reads PrivateKey's output (padding allowed).
func ParsePrivateKey(s string) (*Keys, error) {
	raw, err := b64.DecodeString(trimPadding(s))
	if err != nil {
		return nil, errors.New("not base64url")
	}
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), raw)
	if err != nil {
		return nil, errors.New("not a P-256 private key (32 bytes, base64url)")
	}
	return keysOf(k)
}

func keysOf(k *ecdsa.PrivateKey) (*Keys, error) {
	pub, err := k.PublicKey.Bytes()
	if err != nil {
		return nil, err
	}
	return &Keys{private: k, public: pub}, nil
}

func trimPadding(s string) string {
	for len(s) > 0 && s[len(s)-1] == '=' {
		s = s[:len(s)-1]
	}
	return s
}

// PrivateKey is the private half, base64url, as ParsePrivateKey reads it.
func (k *Keys) PrivateKey() string {
	raw, _ := k.private.Bytes()
	return b64.EncodeToString(raw)
}

// PublicKey is the applicationServerKey browsers subscribe with.
func (k *Keys) PublicKey() string { return b64.EncodeToString(k.public) }

// TokenLifetime is a VAPID token's life; RFC 8292 allows at most 24 hours.
const TokenLifetime = 12 * time.Hour

// authorization is a VAPID JWT for endpoint's origin, with the public key.
func (k *Keys) authorization(endpoint, subject string, now time.Time) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("endpoint %q is not a URL", endpoint)
	}
	header := b64.EncodeToString([]byte(`{"typ":"JWT","alg":"ES256"}`))
	claims, err := json.Marshal(map[string]any{"aud": u.Scheme + "://" + u.Host, "exp": now.Add(TokenLifetime).Unix(), "sub": subject})
	if err != nil {
		return "", err
	}
	signed := header + "." + b64.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, k.private, sum[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return "vapid t=" + signed + "." + b64.EncodeToString(sig) + ", k=" + k.PublicKey(), nil
}

// Subject is the VAPID contact: the https site, else a mailto: at its host,
// which push services accept from servers without a public site.
func Subject(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err == nil && u.Scheme == "https" && u.Host != "" {
		return "https://" + u.Host
	}
	host := "localhost"
	if err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return "mailto:osfoundry@" + host
}
