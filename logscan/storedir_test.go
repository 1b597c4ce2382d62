package logscan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Store Directory line of the JetStream banner, as real servers
// printed it (lines copied from the committed fixtures' logs): the
// store-dir event carries the path the server saw, and the banner keeps
// it, so a store can be paired with the server whose log printed its path.
func TestStoreDirLines(t *testing.T) {
	for _, tc := range []struct{ fixture, line, dir string }{
		{"v2.10.22-per-server/bundle/nats-0.log",
			`[27027] 2026/11/30 01:24:44.920751 [INF]   Store Directory: "/tmp/jsf-gen-v2.10.22-per-server-2132011063/nats-0/store/jetstream"`,
			"/tmp/jsf-gen-v2.10.22-per-server-2132011063/nats-0/store/jetstream"},
		{"v2.12.4-incident-phantom-peers/bundle/nats-3.log",
			`[23382] 2026/12/01 15:03:27.608373 [INF]   Store Directory: "/tmp/jsf-gen-v2.12.4-incident-phantom-peers-1066922317/nats-3/store/jetstream"`,
			"/tmp/jsf-gen-v2.12.4-incident-phantom-peers-1066922317/nats-3/store/jetstream"},
		{"diskfull-v2.12.15/bundle/df-2.log",
			`[9669] 2026/12/01 21:20:18.751643 [INF]   Store Directory: "/tmp/jsf-gen-diskfull-v2.12.15-457731319/df-2/vol/store/jetstream"`,
			"/tmp/jsf-gen-diskfull-v2.12.15-457731319/df-2/vol/store/jetstream"},
		{"membership-v2.12.1/bundle/n3.log",
			`[23028] 2026/11/30 02:09:28.911538 [INF]   Store Directory: "/tmp/jsf-gen-membership-v2.12.1-2021299394/attempt-2/n3/store/jetstream"`,
			"/tmp/jsf-gen-membership-v2.12.1-2021299394/attempt-2/n3/store/jetstream"},
		{"diskfull-v2.15.3/bundle/df-0.log",
			`[12933] 2026/12/01 21:23:45.111085 [INF]   Store Directory: "/tmp/jsf-gen-diskfull-v2.15.3-3198490817/df-0/store/jetstream"`,
			"/tmp/jsf-gen-diskfull-v2.15.3-3198490817/df-0/store/jetstream"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			log, err := os.ReadFile(filepath.Join("..", "testdata", "bundles", tc.fixture))
			if err != nil || !strings.Contains(string(log), tc.line+"\n") {
				t.Fatalf("%s does not hold the line (%v)", tc.fixture, err)
			}
			boot := "[1] 2026/11/30 01:24:44.920000 [INF] Starting nats-server\n"
			s := NewScanner(strings.NewReader(boot+tc.line+"\n"), Options{File: tc.fixture})
			var got []Event
			for s.Next() {
				got = append(got, s.Event())
			}
			if len(got) != 2 || got[1].Kind != "store-dir" || got[1].Fields["dir"] != tc.dir {
				t.Fatalf("events %+v, want store-dir %q", got, tc.dir)
			}
			if bn := s.Banner(); bn.StoreDir != tc.dir {
				t.Errorf("banner store dir %q, want %q", bn.StoreDir, tc.dir)
			}
		})
	}
}
