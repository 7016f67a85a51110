package push_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"testing"

	"github.com/osfoundry/osfoundry/push"
	"github.com/osfoundry/osfoundry/store"
)

// A question's message, as big as the limits let it be: the title, the
// line and three options at their longest.
func longestPayload() []byte {
	long := func(n int) string {
		b := make([]rune, n)
		for i := range b {
			b[i] = 'é'
		}
		return string(b)
	}
	p := push.Compose(&store.OutgoingPush{Kind: store.PushQuestion, NoteID: 1 << 40, SessionID: 1 << 40, SenderName: long(80),
		SessionTitle: long(200), Body: long(2000), Options: []string{long(80), long(80), long(80), long(80)}})
	b, _ := json.Marshal(p)
	return b
}

// The longest payload fits a push service's 4096 bytes, and decrypts.
func TestLongestPayloadFits(t *testing.T) {
	t.Parallel()
	priv, _ := ecdh.P256().GenerateKey(rand.Reader)
	auth := make([]byte, 16)
	rand.Read(auth) //nolint:errcheck
	plain := longestPayload()
	msg, err := push.Encrypt(priv.PublicKey().Bytes(), auth, plain)
	if err != nil {
		t.Fatal(err)
	}
	if len(msg) > 4096 {
		t.Fatalf("the longest push is %d bytes, over 4096", len(msg))
	}
	back, err := push.Decrypt(priv, auth, msg)
	if err != nil || string(back) != string(plain) {
		t.Fatalf("decrypt: %v", err)
	}
	t.Logf("longest payload %d bytes, encrypted %d", len(plain), len(msg))
}

func BenchmarkEncrypt(b *testing.B) {
	priv, _ := ecdh.P256().GenerateKey(rand.Reader)
	auth := make([]byte, 16)
	plain := longestPayload()
	for b.Loop() {
		if _, err := push.Encrypt(priv.PublicKey().Bytes(), auth, plain); err != nil {
			b.Fatal(err)
		}
	}
}
