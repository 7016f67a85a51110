package pgserver

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// runAs returns who postgres runs as and the data folder it uses: as root,
// the "postgres" user, with a fallback folder when it cannot reach dir;
// otherwise the current user (a nil credential, uid and gid -1) and dir.
func runAs(dir string, log *slog.Logger) (cred *syscall.Credential, uid, gid int, _ string, err error) {
	if os.Geteuid() != 0 {
		return nil, -1, -1, dir, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, -1, -1, "", fmt.Errorf("pgserver: running as root, PostgreSQL must run as the 'postgres' user, which does not exist: %w (install the postgresql package, or run as another user, or set DATABASE_URL)", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if blocked := firstUntraversable(filepath.Dir(dir), uid, gid); blocked != "" {
		fallback, err := fallbackDir(dir, uid, gid, log)
		if err != nil {
			return nil, -1, -1, "", err
		}
		log.Warn("the postgres user cannot reach the data folder, using another one",
			"requested", dir, "blocked_at", blocked, "using", fallback, "recorded_in", dir+fallbackSuffix)
		dir = fallback
	}
	return cred, uid, gid, dir, nil
}

// prepareDataDir creates the cluster folder, private to the user postgres
// runs as (uid -1: the current one).
func prepareDataDir(dir string, uid, gid int) error {
	// A unix socket path is limited to 107 bytes.
	if len(dir)+len("/.s.PGSQL.5432") > 100 {
		return fmt.Errorf("pgserver: data folder path %q is too long for a unix socket (max ~85 characters); choose a shorter --data-dir", dir)
	}
	// Parents we create must be enterable by the postgres user; the cluster folder itself is private.
	if err := os.MkdirAll(filepath.Dir(dir), 0o711); err != nil {
		return fmt.Errorf("pgserver: create data folder: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("pgserver: create data folder: %w", err)
	}
	if uid >= 0 {
		if err := chownTree(dir, uid, gid); err != nil {
			return fmt.Errorf("pgserver: give the data folder to postgres: %w", err)
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("pgserver: chmod data folder: %w", err)
	}
	return nil
}

// firstUntraversable returns the first folder from / down to dir (which may not
// exist yet) that the given user cannot enter, or "" when all can be entered.
func firstUntraversable(dir string, uid, gid int) string {
	parts := strings.Split(strings.Trim(dir, "/"), "/")
	cur := "/"
	for _, p := range append([]string{""}, parts...) {
		cur = filepath.Join(cur, p)
		fi, err := os.Stat(cur)
		if err != nil {
			return "" // missing folders will be created by us, 0700 and chowned below
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return ""
		}
		mode := fi.Mode().Perm()
		switch {
		case int(st.Uid) == uid:
			if mode&0o100 == 0 {
				return cur
			}
		case int(st.Gid) == gid:
			if mode&0o010 == 0 {
				return cur
			}
		default:
			if mode&0o001 == 0 {
				return cur
			}
		}
	}
	return ""
}

func chownTree(dir string, uid, gid int) error {
	return filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
			return nil
		}
		return os.Lchown(path, uid, gid)
	})
}
