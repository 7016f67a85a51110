package repo

import "testing"

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		// The four ways of writing one repository.
		"https://github.com/Acme/Shop.git": "acme/shop",
		"git@github.com:acme/shop":         "acme/shop",
		"github.com/acme/shop":             "acme/shop",
		"acme/shop":                        "acme/shop",
		// And the others remotes and people write.
		" Acme/Shop ":                               "acme/shop",
		"git@github.com:acme/widgets.git":           "acme/widgets",
		"https://github.com/acme/widgets.git":       "acme/widgets",
		"https://user@gitlab.example.com/g/sub/app": "sub/app",
		"ssh://git@host:2222/acme/widgets.git/":     "acme/widgets",
		"https://github.com/acme/shop/":             "acme/shop",
		"https://github.com/acme/shop?tab=readme":   "acme/shop",
		"/srv/git/widgets.git":                      "git/widgets",
		`C:\src\acme\shop`:                          "acme/shop",
		"widgets":                                   "widgets",
		"https://github.com":                        "",
		"":                                          "",
		"   ":                                       "",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
