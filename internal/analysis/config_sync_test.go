package analysis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/report"
)

// helmConfig is the config the NATS Helm chart renders (one map in braces,
// the name from the pod's environment), with the sync setting given;
// nats-server v2.15.3 `-t` accepts it with SERVER_NAME set.
func helmConfig(jetstreamExtra string) string {
	return `{
  "http_port": 8222,
  "jetstream": {
    "max_file_store": 10Gi,
    "store_dir": "/data/jetstream"` + jetstreamExtra + `
  },
  "port": 4222,
  "server_name": $SERVER_NAME
}
`
}

// TestConfigSyncFromHelmChart: v2.15.2-leader-kill-debug's dbg-1 stopped
// uncleanly (its log shows it); without the captures that give its sync
// setting, what its config says decides durability-exposure. A Helm
// config names the server only from the environment: it is taken for the
// server whose store lies in its folder, or for every server when all
// configs agree; a value the bundle cannot tell (an include it lacks, a
// variable from the environment) is unknown, never the default.
func TestConfigSyncFromHelmChart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string
		warning bool   // durability-exposure on dbg-1
		source  string // in the warning's message
	}{
		{name: "no config: the default", warning: true, source: "the default; no capture or config in the bundle says otherwise"},
		{name: "helm config in the server's folder says always", files: map[string]string{
			"node-1/nats.conf": helmConfig(`,
    "sync_interval": "always"`)}},
		{name: "one helm config for all says always", files: map[string]string{
			"conf/nats.conf": helmConfig(`,
    "sync_interval": always`)}},
		{name: "helm configs that differ", warning: true, files: map[string]string{
			"conf/a/nats.conf": helmConfig(`,
    "sync_interval": always`),
			"conf/b/nats.conf": helmConfig(`,
    "sync_interval": "10s"`)}, source: "set sync differently: which is this server's cannot be told"},
		{name: "sync from the environment", warning: true, files: map[string]string{
			"node-1/nats.conf": helmConfig(`,
    "sync_interval": $SYNC`)}, source: "unknown: node-1/nats.conf sets jetstream sync_interval from $SYNC"},
		{name: "include not in the bundle", warning: true, files: map[string]string{
			"node-1/nats.conf": helmConfig(`,
    include 'js.conf'`)}, source: "unknown: node-1/nats.conf includes node-1/js.conf, which the bundle does not hold"},
		{name: "include in the bundle says always", files: map[string]string{
			"node-1/nats.conf": helmConfig(`,
    include 'js.conf'`),
			"node-1/js.conf": "sync: always\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTree(t, filepath.Join(bundlesDir, "v2.15.2-leader-kill-debug", "bundle"))
			// The captures carry the running servers' sync setting, which
			// outranks any config: take them out.
			for _, pat := range []string{"*-varz.json", "*-jsz*.json"} {
				m, _ := filepath.Glob(filepath.Join(dir, pat))
				for _, p := range m {
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
				}
			}
			// Each server's folder holds its store and its config, as a
			// copy of a pod's volume and config map does.
			if err := os.MkdirAll(filepath.Join(dir, "node-1"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, "store-dbg-1"), filepath.Join(dir, "node-1", "store-dbg-1")); err != nil {
				t.Fatal(err)
			}
			for p, body := range tc.files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := Run(dir, Options{Only: []string{"durability-exposure"}})
			if err != nil {
				t.Fatal(err)
			}
			var got *report.Finding
			for i, f := range rep.Findings {
				if f.Code == "durability-exposure" && f.Server == "dbg-1" {
					got = &rep.Findings[i]
				}
			}
			if (got != nil) != tc.warning {
				t.Fatalf("durability-exposure on dbg-1: %v, want %v (findings %+v, notes %q)", got != nil, tc.warning, rep.Findings, rep.Notes)
			}
			if got != nil && !strings.Contains(got.Message, tc.source) {
				t.Errorf("message %q does not hold %q", got.Message, tc.source)
			}
		})
	}
}
