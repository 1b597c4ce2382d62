package logscan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diskFullLines are the lines a server whose store filled logged
// (testdata/bundles/diskfull-*, df-2): each must classify to its kind with
// the group, account and stream it names, and the error text it quotes.
var diskFullLines = []struct {
	phrase, kind, group, account, stream, errHas string // phrase: ".*" stands for any text
	bundles                                      string // the fixtures whose df-2 log holds it: "12", "15", "both"
}{
	{"RAFT [zz6yZB4L - S-R3F-.*] Critical write error", "raft-write-error", "S-R3F-", "", "", "no space left on device", "both"},
	{"RAFT [zz6yZB4L - _meta_] Critical write error", "raft-write-error", "_meta_", "", "", "tav.idx.tmp: no space left on device", "15"},
	{"Error writing term and vote file", "raft-write-error", "_meta_", "", "", "no space left on device", "15"},
	{"Not granting vote for", "raft-write-error", "_meta_", "", "", "no space left on device", "15"},
	{"Error storing entry to WAL", "wal-error", "S-R3F-", "", "", "no space left on device", "both"},
	{"Filestore [S-R3F-", "filestore-write-error", "S-R3F-", "", "", "no space left on device", "15"},
	{"Failed to install snapshot for 'APP > FILL'", "snapshot-install-failed", "S-R3F-", "APP", "FILL", "no space left on device", "12"},
	{"JetStream failed to store a msg on stream 'APP > FILL'", "store-failed", "", "APP", "FILL", "expected sequence does not match store", "12"},
	{"JetStream out of resources, will be DISABLED", "out-of-resources", "", "", "", "", "both"},
	{"JetStream initiating meta leader transfer", "meta-leader-transfer", "", "", "", "", "15"},
	{"JetStream timeout waiting for meta leader transfer", "meta-leader-transfer", "", "", "", "", "15"},
	{"Initiating JetStream Shutdown...", "js-shutdown", "", "", "", "", "both"},
	{"[INF] JetStream Shutdown", "js-shutdown-done", "", "", "", "", "both"},
	{`Healthcheck failed: "JetStream not enabled (10076)"`, "healthcheck-failed", "", "", "", "JetStream not enabled (10076)", "both"},
}

// kinds a server logs only when its own writes fail or it gives JetStream
// up: the servers with space must log none of them.
var diskFullKinds = []string{"raft-write-error", "wal-error", "filestore-write-error", "store-failed", "out-of-resources", "meta-leader-transfer", "snapshot-install-failed"}

func TestDiskFullLines(t *testing.T) {
	for _, b := range []string{"diskfull-v2.12.15", "diskfull-v2.15.3"} {
		tag := map[bool]string{true: "12", false: "15"}[strings.Contains(b, "2.12")]
		for _, srv := range []string{"df-0", "df-1", "df-2"} {
			data, err := os.ReadFile(filepath.Join("..", "testdata", "bundles", b, "bundle", srv+".log"))
			if err != nil {
				t.Fatal(err)
			}
			found := make([]bool, len(diskFullLines))
			s := NewScanner(strings.NewReader(string(data)), Options{All: true})
			for s.Next() {
				ev := s.Event()
				if srv != "df-2" {
					for _, k := range diskFullKinds {
						if ev.Kind == k {
							t.Errorf("%s %s line %d: %s on a server with space: %s", b, srv, ev.Line, k, ev.Raw)
						}
					}
					continue
				}
				for i, l := range diskFullLines {
					if !matchPhrase(ev.Raw, l.phrase) {
						continue
					}
					found[i] = true
					if ev.Kind != l.kind || !strings.HasPrefix(ev.Group, l.group) || ev.Account != l.account || ev.Stream != l.stream ||
						(l.errHas != "" && !strings.Contains(ev.Fields["err"], l.errHas)) {
						t.Errorf("%s line %d: kind %q group %q account %q stream %q err %q; want %s %s* %q %q err with %q: %s",
							b, ev.Line, ev.Kind, ev.Group, ev.Account, ev.Stream, ev.Fields["err"], l.kind, l.group, l.account, l.stream, l.errHas, ev.Raw)
					}
				}
			}
			if srv != "df-2" {
				continue
			}
			for i, l := range diskFullLines {
				if (l.bundles == "both" || l.bundles == tag) && !found[i] {
					t.Errorf("%s: no line with %q in %s's log", b, l.phrase, srv)
				}
			}
		}
	}
}

// matchPhrase: raw holds phrase, whose ".*" stands for any text.
func matchPhrase(raw, phrase string) bool {
	for _, part := range strings.Split(phrase, ".*") {
		i := strings.Index(raw, part)
		if i < 0 {
			return false
		}
		raw = raw[i+len(part):]
	}
	return true
}
