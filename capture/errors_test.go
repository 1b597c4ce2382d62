package capture_test

import (
	"errors"
	"testing"

	"github.com/jsforensics/jsforensics/capture"
)

// TestErrorsPublic: a library user tells damage apart with this package's
// own names: errors.As to *capture.CorruptError, errors.Is with its
// sentinels.
func TestErrorsPublic(t *testing.T) {
	_, err := capture.DecodeJsz("n1/jsz.json", []byte(`{"server_id": `))
	var ce *capture.CorruptError
	if !errors.As(err, &ce) || ce.File != "n1/jsz.json" {
		t.Fatalf("%v is no *capture.CorruptError on n1/jsz.json", err)
	}
	if !errors.Is(err, capture.ErrTruncated) && !errors.Is(err, capture.ErrFormat) {
		t.Errorf("%v wraps neither ErrTruncated nor ErrFormat", err)
	}
	if errors.Is(err, capture.ErrChecksum) || errors.Is(err, capture.ErrTooLarge) {
		t.Errorf("%v wraps an unrelated sentinel", err)
	}
}
