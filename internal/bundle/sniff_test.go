package bundle

import (
	"bytes"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/capture"
	"github.com/jsforensics/jsforensics/logscan"
)

// Every file of every committed bundle is given to the sniffers and to the
// decoders they stand for; they must agree. A file taken for a capture is one
// capture.Decode reads an answer of that kind from, and a file Decode reads a
// known answer from is taken for a capture; a file taken for a log is one the
// log scanner classifies lines of, in the dialect and with the banner the
// sniffer said, and a file not taken for one holds no line the scanner
// classifies.
func TestSniffersAgreeWithDecoders(t *testing.T) {
	for _, fx := range fixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			b, err := Open(fx.sources[0], Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			inStore := func(p string) bool {
				for _, st := range b.Stores {
					if st.Dir == "." || strings.HasPrefix(p, st.Dir+"/") {
						return true
					}
				}
				return false
			}
			caps, logs := map[string]Capture{}, map[string]Log{}
			for _, c := range b.Captures {
				caps[c.Path] = c
			}
			for _, l := range b.Logs {
				logs[l.Path] = l
			}
			var nCaps, nLogs, nOther int
			err = fs.WalkDir(b.FS, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() || inStore(p) {
					return err
				}
				data, err := fs.ReadFile(b.FS, p)
				if err != nil {
					t.Fatal(err)
				}
				text := data
				if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
					r, err := logscan.Decompress(bytes.NewReader(data))
					if err != nil {
						return nil // a nested archive, not a log
					}
					text, _ = io.ReadAll(r)
				}
				lg, isLog := logs[p]
				c, isCap := caps[p]
				switch {
				case isLog:
					nLogs++
				case isCap:
					nCaps++
				default:
					nOther++
				}
				checkLogAgrees(t, p, text, lg, isLog)
				if !isLog {
					checkCaptureAgrees(t, p, data, c, isCap)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d logs, %d captures, %d other files checked", nLogs, nCaps, nOther)
		})
	}
}

func checkLogAgrees(t *testing.T, p string, text []byte, lg Log, isLog bool) {
	t.Helper()
	sc := logscan.NewScanner(bytes.NewReader(text), logscan.Options{File: p})
	var first *logscan.Event
	for sc.Next() {
		if first == nil {
			ev := sc.Event()
			first = &ev
		}
	}
	st := sc.Stats()
	if !isLog {
		if st.Classified > 0 {
			t.Errorf("%s: not taken for a log, but the scanner classifies %d of its %d lines (%v)", p, st.Classified, st.Lines, st.ByKind)
		}
		return
	}
	if st.Classified == 0 {
		t.Errorf("%s: taken for a %s log, but the scanner classifies none of its %d lines", p, lg.Format, st.Lines)
		return
	}
	if _, ok := st.ByDialect[lg.Format]; !ok {
		t.Errorf("%s: taken for a %s log, scanner read dialects %v", p, lg.Format, st.ByDialect)
	}
	if boots := sc.Boots(); len(boots) > 0 && boots[0].Line < 200 {
		bn := boots[0]
		if bn.Name != lg.Name || bn.Node != lg.Node || bn.Version != lg.Version || bn.Cluster != lg.Cluster {
			t.Errorf("%s: sniffed banner %s/%s/%s/%s, scanner's first boot %s/%s/%s/%s", p,
				lg.Name, lg.Node, lg.Version, lg.Cluster, bn.Name, bn.Node, bn.Version, bn.Cluster)
		}
	}
}

func checkCaptureAgrees(t *testing.T, p string, data []byte, c Capture, isCap bool) {
	t.Helper()
	decoded, _ := capture.Decode(p, bytes.NewReader(data))
	kind := ""
	for _, d := range decoded {
		if d.Kind != capture.KindUnknown {
			kind = d.Kind
			break
		}
	}
	if kind == "" {
		if _, err := capture.DecodeAuditManifest(p, data); err == nil {
			kind = KindAuditManifest
		}
	}
	switch {
	case isCap && kind != c.Kind:
		t.Errorf("%s: taken for a %s capture, the decoder reads %q (%d values)", p, c.Kind, kind, len(decoded))
	case !isCap && kind != "":
		t.Errorf("%s: not taken for a capture, the decoder reads a %s answer from it", p, kind)
	}
}
