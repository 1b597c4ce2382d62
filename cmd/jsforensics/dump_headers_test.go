package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDumpNamesNewerHeaders: on the kinds-* bundles (real 2.11, 2.12, 2.14,
// 2.15 servers), `dump blk` names every header of each message the stream
// leader served (want.json expect.stored: TTLs, delete markers, counters,
// an atomic batch, schedules, sources, KV per-key TTLs) with its stored
// value, and the record kinds they make it. 2.11 has no counters, atomic
// batches or schedules (its stream.go StreamConfig), so its bundle has no
// such stream.
func TestDumpNamesNewerHeaders(t *testing.T) {
	wantKinds := map[string][]string{ // stream -> kinds some record must show
		"TTL":      {"ttl"},
		"MARKERS":  {"ttl", "delete-marker", "rollup"},
		"COUNTER":  {"counter"},
		"ATOMIC":   {"batch"},
		"SCHED":    {"schedule", "scheduled"},
		"SOURCED":  {"sourced"},
		"KV_kvttl": {"ttl", "delete-marker", "kv-op"},
	}
	only212 := map[string]bool{"COUNTER": true, "ATOMIC": true, "SCHED": true}
	for _, v := range []string{"v2.11.17", "v2.12.15", "v2.14.10", "v2.15.3"} {
		dir := filepath.Join(bundles, "kinds-"+v)
		b, err := os.ReadFile(filepath.Join(dir, "want.json"))
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Servers []struct {
				Name  string `json:"name"`
				Store string `json:"store_dir"`
			} `json:"servers"`
			Expect struct {
				Stored map[string][]struct {
					Seq     uint64              `json:"seq"`
					Subject string              `json:"subject"`
					Headers map[string][]string `json:"headers"`
					Data    string              `json:"data"`
				} `json:"stored"`
			} `json:"expect"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		for stream, kinds := range wantKinds {
			if v == "v2.11.17" && only212[stream] {
				if _, ok := w.Expect.Stored[stream]; ok {
					t.Errorf("%s: want.json has a %s stream", v, stream)
				}
				continue
			}
			stored := w.Expect.Stored[stream]
			if len(stored) == 0 {
				t.Fatalf("%s: want.json has no stored messages of %s", v, stream)
			}
			// The sourced stream is R1: find the server holding it.
			var blk string
			for _, s := range w.Servers {
				p := filepath.Join(dir, "bundle", s.Store, "$G/streams", stream, "msgs/1.blk")
				if _, err := os.Stat(p); err == nil {
					blk = p
					break
				}
			}
			if blk == "" {
				t.Fatalf("%s: no server holds %s", v, stream)
			}
			t.Run(v+"/"+stream, func(t *testing.T) {
				var out, errb bytes.Buffer
				if code := run([]string{"dump", "blk", "--json", blk}, &out, &errb); code != exitOK {
					t.Fatalf("exit %d: %s", code, errb.String())
				}
				bySeq := map[uint64]map[string]any{}
				seen := map[string]bool{}
				for _, l := range checkDumpLines(t, blk, out.Bytes()) {
					if l["record"] != "record" || l["tombstone"] == true {
						continue
					}
					bySeq[uint64(l["seq"].(float64))] = l
					ks, _ := l["kinds"].([]any)
					for _, k := range ks {
						seen[k.(string)] = true
					}
				}
				for _, m := range stored {
					l := bySeq[m.Seq]
					if l == nil {
						t.Errorf("seq %d (%s) not in the dump", m.Seq, m.Subject)
						continue
					}
					got := map[string][]string{}
					pairs, _ := l["nats_headers"].([]any)
					for _, p := range pairs {
						p := p.(map[string]any)
						got[p["name"].(string)] = append(got[p["name"].(string)], p["value"].(string))
					}
					if len(m.Headers) != len(got) {
						t.Errorf("seq %d: dump headers %v, the server served %v", m.Seq, got, m.Headers)
					}
					for k, vs := range m.Headers {
						if !slices.Equal(got[k], vs) {
							t.Errorf("seq %d: %s = %v in the dump, the server served %v", m.Seq, k, got[k], vs)
						}
					}
					if stream == "COUNTER" {
						var c struct {
							Val string `json:"val"`
						}
						if json.Unmarshal([]byte(m.Data), &c); l["counter_value"] != c.Val {
							t.Errorf("seq %d: counter_value %v, the server served %q", m.Seq, l["counter_value"], m.Data)
						}
					}
				}
				for _, k := range kinds {
					if !seen[k] {
						t.Errorf("no record of kind %q; seen %v", k, seen)
					}
				}
				out.Reset()
				if code := run([]string{"dump", "blk", blk}, &out, &errb); code != exitOK {
					t.Fatalf("text: exit %d: %s", code, errb.String())
				}
				for _, m := range stored {
					for k, vs := range m.Headers {
						if want := k + "=" + strconv.Quote(vs[0]); !strings.Contains(out.String(), want) {
							t.Errorf("text output lacks %s:\n%s", want, out.String())
						}
					}
				}
			})
		}
	}
}

func TestDescribeHeaders(t *testing.T) {
	f, text := describeHeaders([]byte("NATS/1.0\r\nNats-Incr: +5\r\n\r\n"), []byte(`{"val":"6"}`))
	if f["counter_value"] != "6" || !strings.Contains(text, `Nats-Incr="+5" (counter) counter=6`) {
		t.Errorf("counter: %v %q", f, text)
	}
}
