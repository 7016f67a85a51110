package pgserver

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The fallback of a data folder the postgres user cannot reach: a folder
// under fallbackRoot with an unpredictable name, created fresh, 0700 and
// owned by the postgres user, its path recorded beside the requested folder
// (<requested>.fallback, root's, 0600) so that the next start finds the same
// cluster. Nothing a local user could have created there beforehand is used:
// every component of a recorded path is checked on every start (no
// symlinks; root's, or the postgres user's where it is ours; writable by no
// one else, save a sticky folder such as /var/tmp itself), and a start is
// refused when one fails.
var fallbackRoot = "/var/tmp"

const fallbackSuffix = ".fallback"

// fallbackDir returns the fallback cluster folder of requested: the recorded
// one, checked; an earlier version's predictable one (legacyFallbackDir)
// when it passes the same checks, recorded from now on; else a fresh one.
func fallbackDir(requested string, uid, gid int, log *slog.Logger) (string, error) {
	record := requested + fallbackSuffix
	if err := os.MkdirAll(filepath.Dir(record), 0o700); err != nil {
		return "", fmt.Errorf("pgserver: create data folder: %w", err)
	}
	switch b, err := readRecord(record); {
	case err == nil:
		dir := strings.TrimSpace(string(b))
		if err := checkFallback(dir, filepath.Base(requested), uid); err != nil {
			return "", fmt.Errorf("pgserver: refusing the data folder recorded in %s: %w; if you trust it, fix its owner and mode, else remove %s to start a new, empty cluster", record, err, record)
		}
		return dir, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("pgserver: %w", err)
	}
	if legacy := legacyFallbackDir(requested); exists(legacy) {
		err := checkFallback(legacy, filepath.Base(requested), uid)
		if err == nil {
			log.Info("using the data folder an earlier version chose", "dir", legacy)
			return legacy, writeRecord(record, legacy)
		}
		log.Warn("not using a data folder at the place an earlier version chose: it is not safe; creating a new one", "dir", legacy, "err", err)
	}
	parent, err := os.MkdirTemp(fallbackRoot, "osfoundry-")
	if err != nil {
		return "", fmt.Errorf("pgserver: create a data folder in %s: %w", fallbackRoot, err)
	}
	dir := filepath.Join(parent, filepath.Base(requested))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("pgserver: create data folder: %w", err)
	}
	for _, d := range []string{dir, parent} {
		if err := os.Lchown(d, uid, gid); err != nil {
			return "", fmt.Errorf("pgserver: give the data folder to postgres: %w", err)
		}
	}
	return dir, writeRecord(record, dir)
}

// checkFallback checks every component of dir, a fallback cluster folder
// named base: the folders down to fallbackRoot are root's and writable by no
// one else (unless sticky); the one holding the cluster is root's or the
// postgres user's and writable by no one else; the cluster folder is the
// postgres user's and private. None is a symlink.
func checkFallback(dir, base string, uid int) error {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || filepath.Base(dir) != base ||
		filepath.Dir(filepath.Dir(dir)) != filepath.Clean(fallbackRoot) || !strings.HasPrefix(filepath.Base(filepath.Dir(dir)), "osfoundry-") {
		return fmt.Errorf("%q is not a folder osfoundry creates (%s/osfoundry-…/%s)", dir, fallbackRoot, base)
	}
	parent := filepath.Dir(dir)
	cur := "/"
	for _, p := range append([]string{""}, strings.Split(strings.Trim(dir, "/"), "/")...) {
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode()
		switch {
		case !ok:
			return fmt.Errorf("%s: cannot read its owner", cur)
		case mode&os.ModeSymlink != 0:
			return fmt.Errorf("%s is a symlink", cur)
		case !mode.IsDir():
			return fmt.Errorf("%s is not a folder", cur)
		case cur == dir:
			if int(st.Uid) != uid || mode.Perm()&0o077 != 0 {
				return fmt.Errorf("%s must be the postgres user's and private (0700), is uid %d mode %v", cur, st.Uid, mode.Perm())
			}
		case cur == parent:
			if (st.Uid != 0 && int(st.Uid) != uid) || mode.Perm()&0o022 != 0 {
				return fmt.Errorf("%s must be root's or the postgres user's and writable by no one else, is uid %d mode %v", cur, st.Uid, mode.Perm())
			}
		default:
			if st.Uid != 0 || (mode.Perm()&0o022 != 0 && mode&os.ModeSticky == 0) {
				return fmt.Errorf("%s must be root's and writable by no one else (or sticky), is uid %d mode %v", cur, st.Uid, mode)
			}
		}
	}
	return nil
}

// readRecord reads the record of a fallback folder, a regular file of
// root's that no one else may write.
func readRecord(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink", path)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || !fi.Mode().IsRegular() || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%s must be a file of the user osfoundry runs as, writable by no one else", path)
	}
	b := make([]byte, 4096)
	n, err := f.Read(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b[:n], nil
}

// writeRecord records dir as the fallback folder, atomically.
func writeRecord(path, dir string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("pgserver: record the data folder: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(dir + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("pgserver: record the data folder: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("pgserver: record the data folder: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("pgserver: record the data folder: %w", err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// legacyFallbackDir is where earlier versions put the fallback: a name
// derived from the requested folder, which anyone could predict.
func legacyFallbackDir(requested string) string {
	h := uint32(2166136261)
	for i := 0; i < len(requested); i++ {
		h = (h ^ uint32(requested[i])) * 16777619
	}
	return filepath.Join(fallbackRoot, fmt.Sprintf("osfoundry-%08x", h), filepath.Base(requested))
}
