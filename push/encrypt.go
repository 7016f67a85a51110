package push

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
)

// recordSize is the rs of the aes128gcm header: one record holds the whole
// message (push services take at most 4096 bytes).
const recordSize = 4096

// MaxPlaintext bounds a message: a single record, with its delimiter and
// the AEAD tag, after the 86-byte header.
const MaxPlaintext = recordSize - 86 - 16 - 1

// Encrypt encrypts plaintext to a browser's subscription keys as RFC 8291
// says: an ephemeral P-256 key agreed with the browser's p256dh key, mixed
// with its auth secret, then aes128gcm (RFC 8188) in one record, without
// padding.
func Encrypt(p256dh, auth, plaintext []byte) ([]byte, error) {
	if len(plaintext) > MaxPlaintext {
		return nil, errors.New("push: message too long")
	}
	ua, err := ecdh.P256().NewPublicKey(p256dh)
	if err != nil {
		return nil, errors.New("push: the subscription's p256dh key is not a P-256 point")
	}
	as, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	secret, err := as.ECDH(ua)
	if err != nil {
		return nil, err
	}
	asPublic := as.PublicKey().Bytes()
	gcm, nonce, err := contentKeys(secret, auth, salt, p256dh, asPublic)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 21+len(asPublic)+len(plaintext)+17)
	out = append(out, salt...)
	out = binary.BigEndian.AppendUint32(out, recordSize)
	out = append(out, byte(len(asPublic)))
	out = append(out, asPublic...)
	record := append(append([]byte{}, plaintext...), 2) // 2: the last record, no padding
	return gcm.Seal(out, nonce, record, nil), nil
}

// Decrypt reverses Encrypt with the browser's private key and auth secret,
// as a browser does: for the tests' push service.
func Decrypt(priv *ecdh.PrivateKey, auth, body []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("push: message shorter than its header")
	}
	salt, idLen := body[:16], int(body[20])
	if len(body) < 21+idLen {
		return nil, errors.New("push: message shorter than its header")
	}
	as, err := ecdh.P256().NewPublicKey(body[21 : 21+idLen])
	if err != nil {
		return nil, errors.New("push: the sender's key is not a P-256 point")
	}
	secret, err := priv.ECDH(as)
	if err != nil {
		return nil, err
	}
	gcm, nonce, err := contentKeys(secret, auth, salt, priv.PublicKey().Bytes(), as.Bytes())
	if err != nil {
		return nil, err
	}
	record, err := gcm.Open(nil, nonce, body[21+idLen:], nil)
	if err != nil {
		return nil, errors.New("push: the message does not decrypt")
	}
	// Strip the padding back to the delimiter, which must say "last record".
	i := len(record) - 1
	for i >= 0 && record[i] == 0 {
		i--
	}
	if i < 0 || record[i] != 2 {
		return nil, errors.New("push: the record has no last-record delimiter")
	}
	return record[:i], nil
}

// contentKeys derives the content encryption key and nonce of RFC 8291
// §3.4 from the agreed secret, the auth secret and the salt; the info names
// the browser's public key first and the sender's second.
func contentKeys(secret, auth, salt, uaPublic, asPublic []byte) (cipher.AEAD, []byte, error) {
	ikm, err := hkdf.Key(sha256.New, secret, auth, "WebPush: info\x00"+string(uaPublic)+string(asPublic), 32)
	if err != nil {
		return nil, nil, err
	}
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, nil, err
	}
	nonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, nil, err
	}
	gcm, err := cipher.NewGCM(block)
	return gcm, nonce, err
}
