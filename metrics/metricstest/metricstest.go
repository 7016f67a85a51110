// Package metricstest reads a /metrics page the way a test checks it: by
// series name and labels.
package metricstest

import (
	"io"
	"net/http"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one read of a /metrics page, by series name.
type Scrape map[string]*dto.MetricFamily

// Get scrapes url, failing the test unless it answers 200 in the text format.
func Get(t testing.TB, url string) Scrape {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d", url, res.StatusCode)
	}
	return Parse(t, res.Body)
}

// Parse reads a page in Prometheus' text format.
func Parse(t testing.TB, r io.Reader) Scrape {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("not in the Prometheus text format: %v", err)
	}
	return fams
}

// Value is the value of the first series of that name whose labels include
// the given name, value pairs (a histogram's count), or -1 when there is none.
func (s Scrape) Value(name string, labels ...string) float64 {
	f := s[name]
	if f == nil {
		return -1
	}
	for _, m := range f.Metric {
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			if !slices.ContainsFunc(m.Label, func(l *dto.LabelPair) bool { return l.GetName() == labels[i] && l.GetValue() == labels[i+1] }) {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		}
	}
	return -1
}
