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

// folders are where the agent side keeps its files.
type folders struct {
	// Config holds credentials, one file per (server, checkout), folder 0700.
	Config string
	// State holds the hook's log and its throttle marks.
	State string
}

// defaultDirs returns <user config>/osfoundry and <user state>/osfoundry.
// The state folder is $XDG_STATE_HOME (or ~/.local/state) where XDG applies,
// and the user cache folder elsewhere (macOS, Windows).
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

// normalizeServer turns what a user types for --server into the server's
// base URL: scheme and host, any base path, no trailing slash and no /mcp.
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

// account names one agent identity: a server and a checkout. Claude Code's
// MCP connection and the hooks of that checkout share its credentials, so
// they act as one connection.
type account struct {
	dirs     folders
	server   string // normalized base URL
	checkout string // absolute folder
}

// key is a stable file name for the account.
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
