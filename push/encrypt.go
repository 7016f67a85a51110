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

// recordSize puts the whole message in one record (push services take 4096 bytes).
const recordSize = 4096

// MaxPlaintext is one record less its delimiter, AEAD tag and 86-byte header.
const MaxPlaintext = recordSize - 86 - 16 - 1

// Encrypt encrypts plaintext to a subscription's keys as RFC 8291 says, in one
// aes128gcm record (RFC 8188) without padding.
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

// Decrypt reverses Encrypt as a browser does, for the tests' push service.
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

// contentKeys derives RFC 8291 §3.4's key and nonce.
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
