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

// checkoutOf is dir's git top level, or dir itself outside git.
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

// startDir is $CLAUDE_PROJECT_DIR, else hint (a hook's cwd), else the working folder.
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

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// gitTopAndBranch starts one git process for both.
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

// repoName is the origin remote's URL as repo.Normalize compares it, else the
// folder name.
func repoName(ctx context.Context, checkout string) string {
	remote, _ := git(ctx, checkout, "config", "--get", "remote.origin.url")
	if name := repo.Normalize(remote); name != "" {
		return name
	}
	return filepath.Base(checkout)
}
