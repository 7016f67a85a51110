// Package push sends Web Push messages (RFC 8030) to owners' browsers:
// signed with VAPID (RFC 8292), encrypted as aes128gcm (RFC 8291), from the
// push outbox of the store, which any replica's Sender delivers.
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

// b64 is the encoding of every key and token of Web Push: base64url
// without padding.
var b64 = base64.RawURLEncoding

// Keys is the server's VAPID key pair (RFC 8292), the same on every
// replica: browsers subscribe with its public half, and each push carries
// a token signed with its private half.
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

// ParsePrivateKey reads a private key as PrivateKey writes it: the 32-byte
// P-256 scalar, base64url (padding allowed).
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

// PublicKey is the public half, the uncompressed point base64url: the
// applicationServerKey browsers subscribe with.
func (k *Keys) PublicKey() string { return b64.EncodeToString(k.public) }

// TokenLifetime is how long a VAPID token is valid; RFC 8292 allows at most
// 24 hours.
const TokenLifetime = 12 * time.Hour

// authorization is the Authorization header of a push to endpoint: a JWT
// for the endpoint's origin (aud), expiring TokenLifetime from now (exp),
// naming the sender's contact (sub), with the public key (k).
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

// Subject is the VAPID contact of a server at baseURL (RFC 8292 §2.1): the
// site itself when it is https, else a mailto: address at its host, which
// push services accept from servers without a public site.
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
