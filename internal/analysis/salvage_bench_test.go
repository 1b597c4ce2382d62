package analysis

import (
	"os"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/bundle"
)

// BenchmarkExtract salvages the stream $JSF_EXTRACT_STREAM (ACCOUNT/NAME,
// default $G/BIG) of the bundle $JSF_EXTRACT_BUNDLE, e.g. the store `go run
// . big -out DIR -size 1GiB` writes (testdata/gen): its peak RSS must not
// grow with the stream, since extract holds one message per source.
func BenchmarkExtract(b *testing.B) {
	dir := os.Getenv("JSF_EXTRACT_BUNDLE")
	if dir == "" {
		b.Skip("JSF_EXTRACT_BUNDLE not set")
	}
	acc, name, _ := strings.Cut(os.Getenv("JSF_EXTRACT_STREAM"), "/")
	if acc == "" {
		acc, name = "$G", "BIG"
	}
	report := usage(b)
	var msgs, bytes int64
	for b.Loop() {
		msgs, bytes = 0, 0
		_, err := Extract(dir, bundle.Limits{}, nil, SalvageOptions{Account: acc, Stream: name}, func(m *SalvagedMsg) error {
			msgs++
			bytes += int64(len(m.Data) + len(m.Header) + len(m.Subject))
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	report()
	b.SetBytes(bytes)
	b.ReportMetric(float64(msgs), "msgs")
}
