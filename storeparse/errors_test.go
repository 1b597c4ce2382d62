package storeparse_test

import (
	"errors"
	"testing"

	"github.com/jsforensics/jsforensics/storeparse"
)

// TestErrorsPublic: a library user tells damage apart with this package's
// own names: errors.As to *storeparse.CorruptError, errors.Is with its
// sentinels.
func TestErrorsPublic(t *testing.T) {
	inf := []byte(`{"name":"ORDERS"}`)
	for _, tc := range []struct {
		name string
		err  error
		want error
		file string
	}{
		{"meta.sum mismatch", storeparse.CheckMetaSum("ORDERS/meta.sum", []byte("0000000000000000"), inf, "ORDERS"), storeparse.ErrChecksum, "ORDERS/meta.sum"},
		{"meta.sum not hex", storeparse.CheckMetaSumFormat("ORDERS/meta.sum", []byte("xyz")), storeparse.ErrFormat, "ORDERS/meta.sum"},
		{"index.db cut", func() error { _, err := storeparse.ParseIndex("ORDERS/msgs/index.db", []byte{0x16}, ""); return err }(), storeparse.ErrTruncated, "ORDERS/msgs/index.db"},
	} {
		var ce *storeparse.CorruptError
		if !errors.As(tc.err, &ce) || ce.File != tc.file {
			t.Errorf("%s: %v is no *storeparse.CorruptError on %s", tc.name, tc.err, tc.file)
			continue
		}
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v does not wrap %v", tc.name, tc.err, tc.want)
		}
		if errors.Is(tc.err, storeparse.ErrEncrypted) || errors.Is(tc.err, storeparse.ErrTooLarge) {
			t.Errorf("%s: %v wraps an unrelated sentinel", tc.name, tc.err)
		}
	}
}
