package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/report"
)

// TestRaftLimitsSameInDumpAndAnalyze: a tav.idx and a commit.idx grown to
// 2 KiB (bytes after what the server wrote, between analyze's old 1 KiB
// limit and raftlog's 4 KiB) are decoded by both dump and analyze, which
// both count the bytes after; grown past raftlog's limit, both refuse them.
// Before, analyze refused the 2 KiB files as too large while dump decoded
// them.
func TestRaftLimitsSameInDumpAndAnalyze(t *testing.T) {
	const meta = "store-n1/$SYS/_js_/_meta_"
	for _, tc := range []struct {
		sub, file string
		limit     int64
		after     string // analyze's words for the bytes after
	}{
		{"tav", "tav.idx", raftlog.MaxTavSize, "bytes after the vote"},
		{"commit", "commit.idx", raftlog.MaxCommitSize, "bytes after the checksum"},
	} {
		for _, size := range []int64{2 << 10, tc.limit + 1} {
			t.Run(fmt.Sprintf("%s-%d", tc.sub, size), func(t *testing.T) {
				dir := copyBundle(t, filepath.Join(bundles, "v2.15.2-flat", "bundle"))
				p := filepath.Join(dir, meta, tc.file)
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				real := len(b)
				b = append(b, make([]byte, size-int64(real))...)
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				var rep report.Report
				if err := json.Unmarshal(runCLI(t, "analyze", "--format", "json", dir), &rep); err != nil {
					t.Fatal(err)
				}
				var said []string
				for _, f := range rep.Findings {
					if f.File == meta+"/"+tc.file {
						said = append(said, f.Message)
					}
				}
				var out, errb bytes.Buffer
				code := run([]string{"dump", tc.sub, "--json", p}, &out, &errb)
				tooLarge := fmt.Sprintf("more than the %d", tc.limit)
				if size <= tc.limit {
					want := fmt.Sprintf("%d %s", size-int64(real), tc.after)
					if len(said) != 1 || !strings.Contains(said[0], want) {
						t.Errorf("analyze: %q, want one finding saying %q", said, want)
					}
					if code != exitOK || !strings.Contains(out.String(), fmt.Sprintf(`"trailing":%d`, size-int64(real))) {
						t.Errorf("dump %s: exit %d, %s%s; want trailing=%d", tc.sub, code, out.String(), errb.String(), size-int64(real))
					}
					return
				}
				if len(said) != 1 || !strings.Contains(said[0], tooLarge) {
					t.Errorf("analyze: %q, want one finding saying %q", said, tooLarge)
				}
				if code == exitOK || !strings.Contains(errb.String(), tooLarge) {
					t.Errorf("dump %s: exit %d, %s%s; want it refused (%q)", tc.sub, code, out.String(), errb.String(), tooLarge)
				}
			})
		}
	}
}
