package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

type folders struct {
	Config string // credentials, one file per (server, checkout)
	State  string // the hook's log, throttle marks, the spool
}

// defaultDirs puts the state in $XDG_STATE_HOME where XDG applies, else in
// the user cache folder.
func defaultDirs() (folders, error) {
	cfg, err := os.UserConfigDir()
	if err != nil {
		return folders{}, fmt.Errorf("find the user config folder: %w", err)
	}
	state, err := userStateDir()
	if err != nil {
		return folders{}, fmt.Errorf("find the user state folder: %w", err)
	}
	return folders{Config: filepath.Join(cfg, "osfoundry"), State: filepath.Join(state, "osfoundry")}, nil
}

func userStateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	switch runtime.GOOS {
	case "darwin", "windows", "ios", "plan9":
		return os.UserCacheDir()
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state"), nil
}

// normalizeServer drops a trailing slash and /mcp from --server.
func normalizeServer(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", errors.New("--server is required, e.g. --server https://foundry.example.com")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--server %q: give the server's address, e.g. https://foundry.example.com", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("--server %q: no credentials, query or fragment in the address", raw)
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, "/mcp")
	return u.Scheme + "://" + strings.ToLower(u.Host) + p, nil
}

// account is one agent identity, a server and a checkout, whose MCP bridge
// and hooks share the credentials.
type account struct {
	dirs     folders
	server   string // normalized base URL
	checkout string // absolute folder
}

func (a account) key() string {
	sum := sha256.Sum256([]byte(a.server + "\n" + a.checkout))
	return hex.EncodeToString(sum[:12])
}

func (a account) credentialsPath() string {
	return filepath.Join(a.dirs.Config, "agents", a.key()+".json")
}

func (a account) lockPath() string {
	return filepath.Join(a.dirs.Config, "agents", a.key()+".lock")
}

func (a account) throttlePath() string {
	return filepath.Join(a.dirs.State, "throttle", a.key())
}
