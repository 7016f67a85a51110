package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// credentials are what login leaves for one account, saved 0600 and rewritten
// on every refresh, because the server rotates refresh tokens.
type credentials struct {
	Server             string    `json:"server"`
	Checkout           string    `json:"checkout"`
	Resource           string    `json:"resource"` // the MCP endpoint, <server>/mcp
	Issuer             string    `json:"issuer"`
	TokenEndpoint      string    `json:"token_endpoint"`
	RevocationEndpoint string    `json:"revocation_endpoint,omitempty"`
	ClientID           string    `json:"client_id"`
	AccessToken        string    `json:"access_token"`
	ExpiresAt          time.Time `json:"expires_at"`
	RefreshToken       string    `json:"refresh_token"`
	Scope              string    `json:"scope"`
	SenderSlug         string    `json:"sender_slug,omitempty"` // its address in Team mail
	CreatedAt          time.Time `json:"created_at"`
}

// refreshSkew is how long before its expiry an access token is replaced.
const refreshSkew = 60 * time.Second

func (c *credentials) fresh(now time.Time) bool {
	return c.AccessToken != "" && now.Add(refreshSkew).Before(c.ExpiresAt)
}

type notConnectedError struct{ Server, Checkout string }

func (e *notConnectedError) Error() string {
	return fmt.Sprintf("%s is not connected to %s: run `osfoundry agent login --server %s` in it", e.Checkout, e.Server, e.Server)
}

func (a account) load() (*credentials, error) {
	b, err := os.ReadFile(a.credentialsPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, &notConnectedError{Server: a.server, Checkout: a.checkout}
	}
	if err != nil {
		return nil, fmt.Errorf("read credentials: %w", err)
	}
	var c credentials
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("read credentials %s: %w", a.credentialsPath(), err)
	}
	return &c, nil
}

// save writes atomically, so a crash never loses a rotated refresh token.
func (a account) save(c *credentials) error {
	for _, dir := range []string{a.dirs.Config, filepath.Dir(a.credentialsPath())} {
		if err := ensureDir(dir); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(a.credentialsPath(), append(b, '\n'), 0o600)
}

func (a account) remove() error {
	err := os.Remove(a.credentialsPath())
	os.Remove(a.lockPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// ensureDir narrows an existing folder to 0700 too.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return os.Chmod(dir, 0o700)
}

func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func listAccounts(dirs folders, checkout string) []*credentials {
	entries, _ := os.ReadDir(filepath.Join(dirs.Config, "agents"))
	var out []*credentials
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dirs.Config, "agents", e.Name()))
		if err != nil {
			continue
		}
		var c credentials
		if json.Unmarshal(b, &c) == nil && c.Checkout == checkout {
			out = append(out, &c)
		}
	}
	return out
}
