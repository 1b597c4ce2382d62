package capture

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Sniff hands on the answers it decoded, equal to what Decode gives for
// the same file, so a caller that sniffed a capture never decodes it again.
func TestSniffKeepsDecoded(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json*")
	if len(files) == 0 {
		t.Fatal("no capture in testdata")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := Sniff(f, data)
		if !ok {
			t.Fatalf("%s: not sniffed as a capture", f)
		}
		caps, err := Decode(f, bytes.NewReader(data))
		if !reflect.DeepEqual(s.Captures, caps) || (s.Err == nil) != (err == nil) {
			t.Errorf("%s: Sniff kept %d answers (err %v), Decode gives %d (err %v)", f, len(s.Captures), s.Err, len(caps), err)
		}
	}
}

// An audit archive assembled from its entries' sniffed answers (AuditOf)
// is the archive ReadAudit reads, entry for entry, reading again only the
// entries the sniff takes for no capture: the three empty $G /raftz
// answers ({} is no endpoint's answer by content alone; the manifest's
// tag says what it is) and the nine stream infos (no monitoring
// endpoint's answer; the bundle decodes them by their tag, as here).
func TestAuditOfSniffed(t *testing.T) {
	b := auditZip(t)
	want, err := ReadAuditArchive(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	sniffed := map[string]Sniffed{}
	for p, data := range auditEntries(t, b) {
		if s, ok := Sniff(p, data); ok {
			sniffed[p] = s
		}
	}
	m, ok := sniffed[AuditManifest]
	if !ok || m.Manifest == nil {
		t.Fatal("the manifest is not sniffed as one")
	}
	read := 0
	a := AuditOf(zr, "capture", m.Manifest, func(file, kind string) ([]Capture, error, bool) {
		s, ok := sniffed[file]
		if !ok || !s.AnyHint && s.Hint != kind {
			read++
			return nil, nil, false
		}
		return s.Captures, s.Err, true
	})
	if read != 3+9 {
		t.Errorf("%d entries read again, want the 3 empty $G /raftz answers and the 9 stream infos", read)
	}
	if len(want.Streams) != 9 || !reflect.DeepEqual(a.Streams, want.Streams) || !reflect.DeepEqual(a.Clusters, want.Clusters) {
		t.Errorf("stream infos: %d, want 9 and the same from the sniff (%d)", len(want.Streams), len(a.Streams))
	}
	for _, st := range want.Streams {
		// LOGS is near its max_bytes: natscli's JETSTREAM_003 example.
		if st.Stream == "LOGS" && (st.Info.Config == nil || st.Info.Config.MaxBytes != 120000 || st.Info.State.Bytes != 119920 || st.Server != "aud-0") {
			t.Errorf("LOGS stream info on %s: %+v", st.Server, st.Info)
		}
	}
	if !reflect.DeepEqual(a.Servers, want.Servers) || a.Skipped != want.Skipped || len(a.Problems) != len(want.Problems) {
		t.Errorf("AuditOf over the sniffed answers differs from ReadAudit: %d servers, %d skipped, %v", len(a.Servers), a.Skipped, a.Problems)
	}
}
