package logscan_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/logscan"
)

// TestErrorsPublic: a library user tells a damaged compressed log apart
// with this package's own names: errors.As to *logscan.CorruptError,
// errors.Is with its sentinels.
func TestErrorsPublic(t *testing.T) {
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	_, _ = zw.Write([]byte(strings.Repeat("[1] 2026/11/30 01:29:04.112233 [INF] Starting nats-server\n", 200)))
	_ = zw.Close()
	z := zb.Bytes()
	r, err := logscan.Decompress(bytes.NewReader(z[:len(z)-6]))
	if err != nil {
		t.Fatal(err)
	}
	s := logscan.NewScanner(r, logscan.Options{File: "n1.log.gz"})
	for s.Next() {
	}
	var ce *logscan.CorruptError
	if !errors.As(s.Err(), &ce) || ce.File != "n1.log.gz" {
		t.Fatalf("%v is no *logscan.CorruptError on n1.log.gz", s.Err())
	}
	if !errors.Is(s.Err(), logscan.ErrTruncated) || errors.Is(s.Err(), logscan.ErrChecksum) {
		t.Errorf("%v, want ErrTruncated", s.Err())
	}
}
