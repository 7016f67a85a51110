package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The physical HTTP round trip: what HTTP alone costs a tool call on this
// machine. A minimal net/http server, in a process of its own as the
// osfoundry server is (this program run again with --serve-http), on
// loopback, reads each request's body and answers a fixed JSON-RPC result of
// a typical tool's size; the load generator sends it the same request a tool
// call is (rpc), on the same client. A tool's composite ceiling is this
// round trip plus its physical statement: 1 / (1/http + 1/statement).

// physicalHTTP names the scenario.
const physicalHTTP = "physical HTTP round trip"

// defaultResultBytes is the size of the fixed result when the tools' own
// answers were not measured.
const defaultResultBytes = 1500

// serveHTTP is the server of the physical round trip, which answers every
// POST to /mcp with a fixed result of size bytes, and of the physical tool
// calls on /call, on the database at dsn, until the process is ended.
func serveHTTP(addr string, size int, dsn string) error {
	body := fixedResult(size)
	pool, err := physicalCallPool(dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache, no-transform")
		_, _ = w.Write(body)
	})
	mux.Handle("/call", physicalCallHandler(pool))
	mux.HandleFunc("/runtime", serveRuntime)
	return (&http.Server{Addr: addr, ReadHeaderTimeout: 10 * time.Second, Handler: mux}).ListenAndServe()
}

// fixedResult is a JSON-RPC tools/call result of size bytes, shaped as a
// tool's: its JSON as text content and as structured content.
func fixedResult(size int) []byte {
	pad := 0
	for {
		data := `{"ok":true,"pad":"` + strings.Repeat("x", pad) + `"}`
		quoted := strconv.Quote(data)
		b := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + quoted + `}],"structuredContent":` + data + `}}`)
		if len(b) >= size {
			return b
		}
		pad += max(1, (size-len(b))/2)
	}
}

// startPhysicalHTTP starts the physical round trip's server process on a
// free loopback port, answering results of size bytes and physical calls on
// the database at dsn, and returns its base URL and how to stop it.
func startPhysicalHTTP(size int, dsn string) (base string, stop func(), err error) {
	addr, err := freeAddr()
	if err != nil {
		return "", nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(self, "--serve-http", addr, "--serve-http-bytes", strconv.Itoa(size))
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	base = "http://" + addr
	for range 200 {
		res, err := http.Post(base+"/mcp", "application/json", strings.NewReader("{}"))
		if err == nil {
			res.Body.Close()
			return base, stop, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	stop()
	return "", nil, fmt.Errorf("the physical HTTP server at %s did not start", addr)
}

// physicalRoundTrip is one call of the physical HTTP round trip: the request
// of a tool call, to the minimal server.
func (fx *fixture) physicalRoundTrip(w int) error {
	_, err := fx.post(fx.physicalURL, fx.agents[w].token, "tools/call", map[string]any{"name": "set_status", "arguments": map[string]any{}})
	return err
}
