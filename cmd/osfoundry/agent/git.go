package agent

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/osfoundry/osfoundry/store/repo"
)

// checkoutOf returns the folder one agent identity belongs to: the git top level
// of dir, or dir itself (absolute, symlinks resolved) outside git.
func checkoutOf(ctx context.Context, dir string) (string, error) {
	top, _ := gitTopAndBranch(ctx, dir, false)
	if top != "" {
		return top, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// startDir is the folder Claude Code runs in: $CLAUDE_PROJECT_DIR (set for
// hooks and stdio servers), else hint (a hook's cwd), else the process's own.
func startDir(hint string) string {
	if d := os.Getenv("CLAUDE_PROJECT_DIR"); d != "" {
		return d
	}
	if hint != "" {
		return hint
	}
	d, _ := os.Getwd()
	return d
}

// git runs git in dir and returns its trimmed stdout.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// gitTopAndBranch returns the top level of dir's work tree ("" outside git)
// and, when withBranch, the current branch (the short commit when detached,
// "" on an unborn branch) — one git process for both.
func gitTopAndBranch(ctx context.Context, dir string, withBranch bool) (top, branch string) {
	args := []string{"rev-parse", "--show-toplevel"}
	if withBranch {
		args = append(args, "--abbrev-ref", "HEAD")
	}
	out, err := git(ctx, dir, args...)
	lines := strings.Split(out, "\n")
	if lines[0] == "" || (err != nil && !withBranch) {
		return "", ""
	}
	top = filepath.Clean(lines[0])
	if !withBranch {
		return top, ""
	}
	if err != nil || len(lines) < 2 { // unborn branch: HEAD names no commit yet
		b, _ := git(ctx, dir, "symbolic-ref", "--short", "-q", "HEAD")
		return top, b
	}
	branch = lines[1]
	if branch == "HEAD" { // detached
		branch, _ = git(ctx, dir, "rev-parse", "--short", "HEAD")
	}
	return top, branch
}

// repoName names the checkout's repository for set_status: the origin
// remote's URL as the server compares repositories (repo.Normalize: owner/name),
// else the folder name.
func repoName(ctx context.Context, checkout string) string {
	remote, _ := git(ctx, checkout, "config", "--get", "remote.origin.url")
	if name := repo.Normalize(remote); name != "" {
		return name
	}
	return filepath.Base(checkout)
}
