package bundle

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// realLog returns the first server log of the first committed bundle, with
// the banner its want file implies.
func realLog(t *testing.T) (data []byte, name, node string) {
	t.Helper()
	for _, fx := range fixtures(t) {
		for _, s := range fx.want.Servers {
			if s.Log == "" {
				continue
			}
			b, err := Open(fx.sources[0], Limits{})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			data, err := os.ReadFile(filepath.Join(b.Root, filepath.FromSlash(s.Log)))
			if err != nil {
				t.Fatal(err)
			}
			return data, s.Name, s.PeerID
		}
	}
	t.Skip("no real log")
	return nil, "", ""
}

var realPrefixRE = regexp.MustCompile(`^\[(\d+)\] (\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6}) `)

// rewrap rewrites every line of a real log through f.
func rewrap(data []byte, f func(i int, line string) string) []byte {
	var out strings.Builder
	for i, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		out.WriteString(f(i, l))
		out.WriteByte('\n')
	}
	return []byte(out.String())
}

func TestLogEnvelopes(t *testing.T) {
	data, name, node := realLog(t)
	ts := func(i int) string { return fmt.Sprintf("2026-11-30T01:02:%02d.%09dZ ", i%60, i) }
	tests := []struct {
		env    string
		format string
		pod    string
		f      func(i int, l string) string
	}{
		{"as written", "nats", "", func(i int, l string) string { return l }},
		{"no pid", "nats", "", func(i int, l string) string { return realPrefixRE.ReplaceAllString(l, "$2 ") }},
		{"no pid no time", "nats", "", func(i int, l string) string { return realPrefixRE.ReplaceAllString(l, "") }},
		{"colours", "nats", "", func(i int, l string) string {
			return strings.Replace(l, "[INF]", "[\x1b[32mINF\x1b[0m]", 1)
		}},
		{"kubectl --timestamps", "kubectl", "", func(i int, l string) string { return ts(i) + l }},
		{"kubectl --prefix", "kubectl", "nats-0", func(i int, l string) string { return "[pod/nats-0/nats] " + l }},
		{"kubectl --prefix --timestamps", "kubectl", "nats-0", func(i int, l string) string {
			return "[pod/nats-0/nats] " + ts(i) + l
		}},
		{"docker json-file", "docker", "", func(i int, l string) string {
			b, _ := json.Marshal(map[string]string{"log": l + "\n", "stream": "stderr", "time": ts(i)[:30]})
			return string(b)
		}},
		{"syslog", "syslog", "", func(i int, l string) string {
			return "Nov 30 01:02:03 host1 nats-server[42]: " + realPrefixRE.ReplaceAllString(l, "")
		}},
		{"crlf", "nats", "", func(i int, l string) string { return l + "\r" }},
	}
	for _, tc := range tests {
		t.Run(tc.env, func(t *testing.T) {
			lg, ok := sniffLog(rewrap(data, tc.f), true)
			if !ok {
				t.Fatal("not taken for a log")
			}
			if lg.Format != tc.format || lg.Name != name || lg.Node != node || lg.Pod != tc.pod {
				t.Errorf("got format %q name %q node %q pod %q, want %q %q %q %q", lg.Format, lg.Name, lg.Node, lg.Pod, tc.format, name, node, tc.pod)
			}
		})
	}
	// RFC 5424 syslog ("<pri>1 ts host app procid msgid sd msg") is not a
	// shape logscan reads (logscan/FORMAT.md 1), so it is not taken for a
	// log: the sniffer follows the scanner.
	if lg, ok := sniffLog(rewrap(data, func(i int, l string) string {
		return "<134>1 2026-11-30T01:02:03Z host1 nats-server 42 - - " + realPrefixRE.ReplaceAllString(l, "")
	}), true); ok {
		t.Errorf("RFC 5424 lines taken for a log the scanner cannot read: %+v", lg)
	}
	// A cut prefix still sniffs; other text does not.
	if _, ok := sniffLog(data[:len(data)/2], false); !ok {
		t.Error("half a log not taken for a log")
	}
	for _, notLog := range [][]byte{
		[]byte("hello\nworld\n"),
		rewrap(data, func(i int, l string) string { return strings.Replace(l, "[INF]", "[INFO]", 1) }),
		rewrap(data, func(i int, l string) string {
			return "Nov 30 01:02:03 host1 kernel: " + realPrefixRE.ReplaceAllString(l, "")
		}),
	} {
		if lg, ok := sniffLog(notLog, true); ok && strings.Count(string(notLog), "[INF]") == 0 {
			t.Errorf("taken for a log (%+v): %.80q", lg, notLog)
		}
	}
}

func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"nats-0.log": "nats-0",
		"nats-0.log.2026.11.30.01.02.03.123456789":    "nats-0",
		"nats-0.log.2026.11.30.01.02.03.123456789.gz": "nats-0",
		"n1.log.1":           "n1",
		"n1.log-20261130.gz": "n1",
		"n1-jsz.json":        "n1-jsz",
		"js-a.tar.gz":        "js-a",
		"js-a.unpacked":      "js-a",
		".log":               ".log",
	} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNameCandidates(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"nats-0/data/jetstream", []string{"nats-0"}},
		{"store-n1", []string{"n1", "store-n1"}},
		{"n1-jsz.json", []string{"n1", "n1-jsz", "n1-jsz.json"}},
		{"support-bundle-20261130/servers/js-a/jetstream", []string{"js-a", "support-bundle-20261130", "a"}},
		{"support-bundle-20261130/logs/js-a.log", []string{"js-a", "js-a.log", "support-bundle-20261130", "a"}},
		{"captures/nats-0/jsz.json", []string{"nats-0"}},
		{"capture/clusters/C1/n1/jetstream_info/0001.json", []string{"n1", "C1"}},
		{"capture/accounts/$G/servers/C1__n1/account_jetstream_info/0001.json", []string{"C1__n1", "$G", "C1", "n1"}},
		{"nats-2.log.2026.11.30.01.02.03.123456789.gz", []string{"nats-2", "nats-2.log.2026.11.30.01.02.03.123456789.gz"}},
		{"captures/nats-0/raftz-acc-_G.json", []string{"nats-0"}},
		{"monitoring/raftz_group-_meta_.json", nil},
		{".", nil},
		{"jetstream", nil},
	} {
		var c candidates
		c.fromPath(tc.path)
		if d := fmt.Sprint(c.list); d != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.path, c.list, tc.want)
		}
	}
}

func TestHead(t *testing.T) {
	for in, want := range map[string]string{
		"s1-raftz-app": "s1", "n1-jsz": "n1", "nats-0": "", "js-a": "", "nats-0-logs": "nats-0",
		"support-bundle-1": "", "a.b.jsz.c": "a.b", "x--jsz": "x",
	} {
		if got := head(in); got != want {
			t.Errorf("head(%q) = %q, want %q", in, got, want)
		}
	}
}
