package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/osfoundry/osfoundry/push"
)

// sessionKeys returns the cookie signing and encryption keys: configured, or
// generated once into the data folder.
func sessionKeys(cfg config) ([]byte, []byte, error) {
	raw := cfg.sessionKey
	if raw == "" {
		path := filepath.Join(cfg.dataDir, "session.key")
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			raw = strings.TrimSpace(string(b))
		case errors.Is(err, os.ErrNotExist):
			k := make([]byte, 96)
			if _, err := rand.Read(k); err != nil {
				return nil, nil, err
			}
			raw = hex.EncodeToString(k)
			if err := os.MkdirAll(cfg.dataDir, 0o711); err != nil {
				return nil, nil, err
			}
			if err := os.WriteFile(path, []byte(raw+"\n"), 0o600); err != nil {
				return nil, nil, fmt.Errorf("write cookie key: %w", err)
			}
		default:
			return nil, nil, fmt.Errorf("read cookie key: %w", err)
		}
	}
	k, err := hex.DecodeString(raw)
	if err != nil || len(k) < 64 {
		return nil, nil, errors.New("session key must be at least 64 bytes, hex-encoded (128+ hex characters)")
	}
	hash := k[:64]
	var block []byte
	if len(k) >= 96 {
		block = k[64:96]
	}
	return hash, block, nil
}

// vapidKeys returns the Web Push key pair: configured (the same on every
// replica, since browsers subscribed with it), or generated once into vapid.key.
func vapidKeys(cfg config) (*push.Keys, error) {
	if cfg.vapidPrivateKey != "" {
		k, err := push.ParsePrivateKey(cfg.vapidPrivateKey)
		if err != nil {
			return nil, fmt.Errorf("--vapid-private-key: %w", err)
		}
		return k, nil
	}
	path := filepath.Join(cfg.dataDir, "vapid.key")
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		k, err := push.ParsePrivateKey(strings.TrimSpace(string(b)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return k, nil
	case errors.Is(err, os.ErrNotExist):
		k, err := push.GenerateKeys()
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(cfg.dataDir, 0o711); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(k.PrivateKey()+"\n"), 0o600); err != nil {
			return nil, fmt.Errorf("write the Web Push key: %w", err)
		}
		return k, nil
	default:
		return nil, fmt.Errorf("read the Web Push key: %w", err)
	}
}
