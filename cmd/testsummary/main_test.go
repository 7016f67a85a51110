package main

import (
	"os"
	"strings"
	"testing"
)

// The testdata streams are `go test -json` of a small module: demo/a passes
// (one subtest skipped), demo/b has a failing subtest, demo/c does not build,
// demo/d has no tests.
func TestSummarize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file   string
		ok     bool
		want   []string
		absent []string
	}{
		{"pass.jsonl", true,
			[]string{"ok  \tdemo/a\t", "?   \tdemo/d\t[no test files]", "demo/a    3 passed, 0 failed, 1 skipped", "\ntotal: 3 passed, 0 failed, 1 skipped\n"},
			[]string{"=== RUN", "--- PASS", "quiet", "demo/d  "}},
		{"mixed.jsonl", false,
			[]string{
				"# demo/c [demo/c.test]\nc/c.go:2:23: cannot use",
				"FAIL\tdemo/c [build failed]",
				"--- FAIL: TestBad (0.00s)\n    b_test.go:4: context line\n    --- FAIL: TestBad/inner (0.00s)\n        b_test.go:4: inner broke\nFAIL\nFAIL\tdemo/b\t",
				"demo/b    1 passed, 2 failed, 0 skipped",
				"\ntotal: 4 passed, 2 failed, 1 skipped\n",
			},
			[]string{"=== RUN", "--- PASS", "quiet"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			in, err := os.Open("testdata/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var out strings.Builder
			ok, err := summarize(in, &out)
			if err != nil || ok != c.ok {
				t.Fatalf("summarize: ok=%v err=%v, want ok=%v", ok, err, c.ok)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, a := range c.absent {
				if strings.Contains(out.String(), a) {
					t.Errorf("output has %q:\n%s", a, out.String())
				}
			}
		})
	}
}
