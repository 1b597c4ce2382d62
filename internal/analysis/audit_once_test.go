package analysis

import (
	"reflect"
	"testing"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"github.com/jsforensics/jsforensics/internal/bundle"
)

// TestAuditReadFromTheSniff: the real `nats audit gather` archive (v2.15.2)
// assembled from what the sniff decoded, the captures and the entries it
// took for none (each account's empty /raftz {}, decoded as its manifest's
// tag says: Bundle.AuditEntries), equals the archive read entry by entry
// from its files, and opens no file. On old main the empty /raftz entries
// were opened again.
func TestAuditReadFromTheSniff(t *testing.T) {
	b, c, err := bundle.OpenCounted(bundlesDir+"/audit-gather-v2.15.2/bundle.zip", bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if len(b.AuditEntries) == 0 {
		t.Fatal("no audit entry decoded by its tag: the fixture no longer shows it")
	}
	n := 0
	for _, bc := range b.Captures {
		dir, ok := bundle.AuditCaptureDir(bc)
		if !ok || bc.Manifest == nil {
			continue
		}
		n++
		whole := capture.AuditOf(b.FS, dir, bc.Manifest, nil)
		before := c.Opens()
		sniffed := capture.AuditOf(b.FS, dir, bc.Manifest, load.SniffedIn(b))
		if !reflect.DeepEqual(c.Opens(), before) {
			t.Errorf("%s: assembling the archive from the sniff opened files", dir)
		}
		if !reflect.DeepEqual(sniffed, whole) {
			t.Errorf("%s: the archive from the sniff differs from the archive read from its files", dir)
		}
	}
	if n == 0 {
		t.Fatal("no audit manifest")
	}
}
