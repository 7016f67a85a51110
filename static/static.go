// Package static holds the browser assets (htmx, its SSE extension, CSS,
// icons), embedded in the binary and served under a content-hashed path so
// they can be cached forever. htmx.min.js and sse.js are the npm packages'
// dist files unchanged (sse.js: `make vendor-js`, from the htmx-ext-sse
// version pinned in package.json).
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed *.js *.css *.svg *.png
var files embed.FS

var hashes = func() map[string]string {
	m := map[string]string{}
	entries, _ := fs.ReadDir(files, ".")
	for _, e := range entries {
		b, _ := fs.ReadFile(files, e.Name())
		sum := sha256.Sum256(b)
		m[e.Name()] = hex.EncodeToString(sum[:])[:12]
	}
	return m
}()

// URL returns the cache-busting path of an asset, like /static/3f2a…/app.css.
func URL(name string) string {
	return "/static/" + hashes[name] + "/" + name
}

// Handler serves /static/<hash>/<name>. A current hash is cached for a year;
// a stale or missing hash still gets the file but must be revalidated.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.Path, "/static/")
		hash, name, ok := strings.Cut(rest, "/")
		if !ok || strings.Contains(name, "/") || name == "" {
			http.NotFound(w, r)
			return
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if hashes[name] == hash {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(b) //nolint:errcheck
	})
}

// Read returns an embedded asset's bytes.
func Read(name string) ([]byte, error) { return fs.ReadFile(files, name) }
