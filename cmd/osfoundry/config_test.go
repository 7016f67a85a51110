package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/live"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// parseConfig registers the server's flags and parses args, with the
// environment as it is.
func parseConfig(t *testing.T, args ...string) config {
	t.Helper()
	var c config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAllowPrivateTargetsConfig: the flag is off by default, set by the flag
// or by OSFOUNDRY_ALLOW_PRIVATE_TARGETS=true, and printed at start.
func TestAllowPrivateTargetsConfig(t *testing.T) {
	t.Setenv("OSFOUNDRY_ALLOW_PRIVATE_TARGETS", "")
	if parseConfig(t).allowPrivate {
		t.Fatal("private targets allowed by default")
	}
	if !parseConfig(t, "--allow-private-targets").allowPrivate {
		t.Fatal("--allow-private-targets not honoured")
	}
	t.Setenv("OSFOUNDRY_ALLOW_PRIVATE_TARGETS", "true")
	c := parseConfig(t)
	if !c.allowPrivate {
		t.Fatal("OSFOUNDRY_ALLOW_PRIVATE_TARGETS=true not honoured")
	}
	if parseConfig(t, "--allow-private-targets=false").allowPrivate {
		t.Fatal("the flag does not override the environment")
	}
	var out bytes.Buffer
	c.log(slog.New(slog.NewTextHandler(&out, nil)))
	if !strings.Contains(out.String(), "allow_private_targets=true") {
		t.Fatalf("start-up configuration log lacks the setting: %s", out.String())
	}
}

// TestNoFlagForTests: every flag is the operator's. What tests of the whole
// server change is set in-process (config.test), by no flag or variable; the
// deprecated --pprof-addr works but --help leaves it out.
func TestNoFlagForTests(t *testing.T) {
	var c config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	c.register(fs)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.Contains(f.Name, "test") || strings.Contains(f.Usage, "test") {
			t.Errorf("--%s is a flag for tests: %s", f.Name, f.Usage)
		}
	})
	printFlags(fs)
	if strings.Contains(out.String(), "pprof-addr") || !strings.Contains(out.String(), "-allow-private-targets") {
		t.Fatalf("--help lists:\n%s", out.String())
	}
}

// TestStreamLimitsConfig: --stream-limits (or OSFOUNDRY_STREAM_LIMITS) sets
// the live stream limits per sign-in, per owner and per address; the
// default is live.DefaultLimits, and anything but three positive numbers is
// refused.
func TestStreamLimitsConfig(t *testing.T) {
	t.Setenv("OSFOUNDRY_STREAM_LIMITS", "")
	c := parseConfig(t)
	if err := c.finish(); err != nil || c.streamLimits != live.DefaultLimits {
		t.Fatalf("default: %+v %v", c.streamLimits, err)
	}
	c = parseConfig(t, "--stream-limits", "2, 3,4")
	if err := c.finish(); err != nil || c.streamLimits != (live.Limits{PerSignIn: 2, PerOwner: 3, PerAddress: 4}) {
		t.Fatalf("2,3,4: %+v %v", c.streamLimits, err)
	}
	t.Setenv("OSFOUNDRY_STREAM_LIMITS", "5,6,7")
	c = parseConfig(t)
	if err := c.finish(); err != nil || c.streamLimits.PerAddress != 7 {
		t.Fatalf("from the environment: %+v %v", c.streamLimits, err)
	}
	for _, bad := range []string{"1,2", "0,1,2", "a,b,c", "1,2,3,4"} {
		c = parseConfig(t, "--stream-limits", bad)
		if err := c.finish(); err == nil || !strings.Contains(err.Error(), "--stream-limits") {
			t.Errorf("%q: %v, want refused", bad, err)
		}
	}
}

// TestClientMetadataDocumentsConfig: on by default; off by
// --client-metadata-documents=off or OSFOUNDRY_CLIENT_METADATA_DOCUMENTS=off
// (the flag wins); another value stops the start with the variable named.
func TestClientMetadataDocumentsConfig(t *testing.T) {
	t.Setenv("OSFOUNDRY_CLIENT_METADATA_DOCUMENTS", "")
	if !parseConfig(t).metadataDocuments {
		t.Fatal("metadata documents off by default")
	}
	if parseConfig(t, "--client-metadata-documents=off").metadataDocuments {
		t.Fatal("--client-metadata-documents=off not honoured")
	}
	t.Setenv("OSFOUNDRY_CLIENT_METADATA_DOCUMENTS", "off")
	c := parseConfig(t)
	if c.metadataDocuments || c.finish() != nil {
		t.Fatal("OSFOUNDRY_CLIENT_METADATA_DOCUMENTS=off not honoured")
	}
	if !parseConfig(t, "--client-metadata-documents=on").metadataDocuments {
		t.Fatal("the flag does not override the environment")
	}
	var out bytes.Buffer
	c.log(slog.New(slog.NewTextHandler(&out, nil)))
	if !strings.Contains(out.String(), "client_metadata_documents=off") {
		t.Fatalf("start-up configuration log lacks the setting: %s", out.String())
	}
	t.Setenv("OSFOUNDRY_CLIENT_METADATA_DOCUMENTS", "maybe")
	bad := parseConfig(t)
	if err := bad.finish(); err == nil || !strings.Contains(err.Error(), "OSFOUNDRY_CLIENT_METADATA_DOCUMENTS") {
		t.Fatalf("a bad value: %v", err)
	}
}

// TestServerWithoutMetadataDocuments: the server started with
// --client-metadata-documents=off does not advertise them, so clients
// register instead.
func TestServerWithoutMetadataDocuments(t *testing.T) {
	t.Parallel()
	r := startReplica(t, storetest.NewDatabase(t), "", "--client-metadata-documents=off")
	r.waitReady()
	res, err := http.Get(r.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if v, ok := m["client_id_metadata_document_supported"]; !ok || v != false || m["registration_endpoint"] != r.URL+"/register" {
		t.Fatalf("metadata: %v", m)
	}
}
