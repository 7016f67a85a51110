package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/push"
)

// The Web Push key pair is generated once into the data folder (0600) and
// kept; a configured key wins; a key that is not one stops the start,
// naming the flag.
func TestVAPIDKeys(t *testing.T) {
	t.Parallel()
	cfg := config{dataDir: t.TempDir()}
	first, err := vapidKeys(cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := vapidKeys(cfg)
	if err != nil || again.PublicKey() != first.PublicKey() {
		t.Fatalf("second start: %v, same key %v", err, err == nil && again.PublicKey() == first.PublicKey())
	}
	if fi, err := os.Stat(filepath.Join(cfg.dataDir, "vapid.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("vapid.key: %v %v", fi, err)
	}
	given, _ := push.GenerateKeys()
	cfg.vapidPrivateKey = given.PrivateKey()
	if k, err := vapidKeys(cfg); err != nil || k.PublicKey() != given.PublicKey() {
		t.Errorf("configured key not used: %v", err)
	}
	cfg.vapidPrivateKey = "not a key"
	if _, err := vapidKeys(cfg); err == nil || !strings.Contains(err.Error(), "--vapid-private-key") {
		t.Errorf("bad key: %v", err)
	}
	if s := push.Subject("https://foundry.example.com"); s != "https://foundry.example.com" {
		t.Errorf("subject %q", s)
	}
	if s := push.Subject("http://localhost:8080"); s != "mailto:osfoundry@localhost" {
		t.Errorf("subject %q", s)
	}
}
