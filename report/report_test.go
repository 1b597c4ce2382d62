package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

// sampleReport exercises every section and the optional finding fields.
func sampleReport() *Report {
	t0 := time.Date(2025, 1, 24, 10, 18, 45, 329248609, time.UTC)
	return &Report{
		ToolVersion: "test",
		Bundle:      "bundle",
		Servers: []Server{
			{Name: "nats-0", PeerID: "S1Nunr6R", Cluster: "c1", Version: "2.10.22", Sources: []string{"store", "log"}, NameSource: "folder"},
			{Name: "server-2", Sources: []string{"store"}, NameSource: "unknown"},
		},
		Groups: []Group{{Name: "_meta_", Kind: "meta", Views: []GroupView{{Server: "nats-0", ClusterSize: 10, Quorum: 6, Term: 1191202101440508490, VotedFor: "HuYMtjaW", Peers: []string{"S1Nunr6R", `"kCGheKT`}, Source: "peers.idx"}}}},
		Streams: []Stream{
			{Account: "$G", Name: "ORDERS", Replicas: 3, Group: "S-R3F-abc", OnDisk: []OnDisk{{Server: "nats-0", FirstSeq: 1, LastSeq: 10, Messages: 8, Bytes: 800, Deleted: 2}, {Server: "nats-1", Source: SourceSealed}}, AssignedTo: []string{"nats-0"}},
			{Account: "$G", Name: "EMPTY"},
		},
		Timeline: []TimelineEvent{{Time: t0, Server: "nats-0", Source: "log", Kind: "no-meta-leader", Text: "JetStream cluster no metadata leader", File: "nats-0.log", Line: 12},
			{Time: t0.Add(time.Second), Server: "nats-0", Source: "log", Kind: "catchup-error", Text: "catchup error", File: "nats-0.log", Line: 14, Count: 3, Until: Ptr(t0.Add(time.Minute))}},
		Findings: []Finding{
			{Code: "index-mismatch", Severity: Warning, Server: "nats-0", Account: "$G", Stream: "ORDERS", File: "nats-0/msgs/index.db", Message: "index.db says 9 messages, blocks hold 8"},
			{Code: "peer-id-corrupt", Severity: Critical, Group: "_meta_", Peer: `"kCGheKT`, Message: "a corrupt peer id", Evidence: []string{"peers.idx of nats-0"},
				Remedy: "nats req '$JS.API.SERVER.REMOVE' '{\"peer_id\":\"\\\"kCGheKT\"}'", LikelyOrigin: &Origin{Peer: "bkCGheKT", Server: "nats-3", Bits: 1}, TimelineRefs: []int{0, 7}},
			{Code: "store-corrupt", Severity: Critical, Server: "nats-0", File: "nats-0/msgs/1.blk", Offset: Ptr(int64(0)), Seq: 5, Message: "checksum mismatch", Kind: "checksum"},
		},
		Diagnosis: []Cause{{Summary: "a corrupt peer id inflated _meta_", FirstStep: "remove the corrupt id", Severity: Critical, Findings: []int{1, 2}, TimelineRefs: []int{0, 1}}},
		Notes:     []string{"server-2: name not established"},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file; rerun with -update if intended.\n--- got\n%s", name, got)
	}
}

func TestRenderersGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer, *Report) error
	}{
		{"sample.txt", func(b *bytes.Buffer, r *Report) error { return WriteText(b, r) }},
		{"sample.md", func(b *bytes.Buffer, r *Report) error { return WriteMarkdown(b, r) }},
		{"sample.json", func(b *bytes.Buffer, r *Report) error { return WriteJSON(b, r) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b, sampleReport()); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

// TestJSONContractKeys holds the field names the contract promises.
func TestJSONContractKeys(t *testing.T) {
	var b bytes.Buffer
	r := sampleReport()
	r.Findings = append(r.Findings, Finding{Code: "quorum-unreachable", Severity: Critical, ClusterSize: 10, Quorum: 6, Reachable: Ptr(5), Missing: []string{"x"},
		Ranges: []Range{{First: 1, Last: 2}}, Servers: []string{"a"}, Views: []SplitView{{Servers: []string{"a"}, ClusterSize: 4}}, Messages: Ptr(uint64(1)), Bytes: Ptr(uint64(2)),
		Since: &r.Timeline[0].Time, Events: []string{"e"}})
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "tool_version", "bundle", "servers", "groups", "streams", "timeline", "findings"} {
		if _, ok := m[k]; !ok {
			t.Errorf("top-level key %q missing", k)
		}
	}
	if m["schema"] != "jsforensics.report/v1" {
		t.Errorf("schema = %v", m["schema"])
	}
	keysOf := func(v any) map[string]bool {
		out := map[string]bool{}
		for k := range v.(map[string]any) {
			out[k] = true
		}
		return out
	}
	want := map[string][]string{
		"servers":  {"name", "peer_id", "cluster", "version", "sources"},
		"groups":   {"name", "kind", "views", "history"},
		"streams":  {"account", "name", "replicas", "group", "on_disk", "assigned_to"},
		"timeline": {"time", "server", "source", "kind", "text", "file", "line"},
	}
	for sec, keys := range want {
		got := keysOf(m[sec].([]any)[0])
		for _, k := range keys {
			if !got[k] {
				t.Errorf("%s[0] lacks %q", sec, k)
			}
		}
	}
	view := keysOf(m["groups"].([]any)[0].(map[string]any)["views"].([]any)[0])
	for _, k := range []string{"server", "cluster_size", "quorum", "term", "voted_for", "peers", "source"} {
		if !view[k] {
			t.Errorf("group view lacks %q", k)
		}
	}
	fs := m["findings"].([]any)
	last := keysOf(fs[len(fs)-1])
	for _, k := range []string{"code", "severity", "message", "cluster_size", "quorum", "reachable", "missing", "ranges", "servers", "views", "messages", "bytes", "since", "events"} {
		if !last[k] {
			t.Errorf("finding lacks %q", k)
		}
	}
	origin := fs[1].(map[string]any)["likely_origin"].(map[string]any)
	if origin["peer"] != "bkCGheKT" || origin["server"] != "nats-3" || origin["bits"] != float64(1) {
		t.Errorf("likely_origin = %v", origin)
	}
	// Fields that do not apply are left out.
	if _, ok := keysOf(fs[0])["likely_origin"]; ok {
		t.Error("empty likely_origin was written")
	}
	// A big term must survive as an exact integer, not a float.
	if !strings.Contains(b.String(), `"term": 1191202101440508490`) {
		t.Error("term not written exactly")
	}
}

func TestEmptyReportSectionsAreArrays(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, &Report{}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"servers": []`, `"groups": []`, `"streams": []`, `"timeline": []`, `"findings": []`} {
		if !strings.Contains(b.String(), k) {
			t.Errorf("missing %s in %s", k, b.String())
		}
	}
}

func TestSortedFindingsSeverityFirst(t *testing.T) {
	got := SortedFindings(sampleReport().Findings)
	if got[0].Severity != Critical || got[len(got)-1].Severity != Warning {
		t.Errorf("order: %v", got)
	}
}

// TestRenderersShowTheTableColumns: text and Markdown lay out the tables
// built once (Tables, TimelineTable), each with every column in order, and
// every cell of every row appears.
func TestRenderersShowTheTableColumns(t *testing.T) {
	r := sampleReport()
	var txt, md bytes.Buffer
	if err := WriteText(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, tb := range Tables(r) {
		if len(tb.Rows) == 0 {
			t.Fatalf("%s: sample has no rows", tb.Title)
		}
		if want := "│ " + strings.Join(tb.Headers(), " │ "); !containsSpaced(txt.String(), want) {
			t.Errorf("text lacks the %s header %q", tb.Title, want)
		}
		if want := "| " + strings.Join(tb.Headers(), " | ") + " |"; !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks the %s header %q", tb.Title, want)
		}
		for _, row := range tb.Rows {
			cells := make([]string, len(row))
			for i, c := range row {
				cells[i] = mdCell(c) // as the Markdown table escapes it
			}
			if want := "| " + strings.Join(cells, " | ") + " |"; !strings.Contains(md.String(), want) {
				t.Errorf("markdown lacks the %s row %q", tb.Title, want)
			}
			for _, cell := range row {
				if !strings.Contains(txt.String(), cell) {
					t.Errorf("text lacks the %s cell %q", tb.Title, cell)
				}
			}
		}
	}
	if sealed := StreamsTable(r).Rows[1]; sealed[4] != "nats-1" || sealed[5] != "sealed" || sealed[7] != "" {
		t.Errorf("a sealed copy's row reads %q", sealed)
	}
	tl := TimelineTable(r)
	if want := "| " + strings.Join(tl.Headers(), " | ") + " |"; !strings.Contains(md.String(), want) {
		t.Errorf("markdown lacks the timeline header %q", want)
	}
	for _, row := range tl.Rows {
		if want := "| " + strings.Join(row, " | ") + " |"; !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks the timeline row %q", want)
		}
	}
	if run := tl.Rows[1][6]; !strings.HasPrefix(run, "(x3 until 2025-01-24T10:19:45.329Z) catchup error") {
		t.Errorf("a run's row reads %q", run)
	}
}

// containsSpaced reports whether s holds want with runs of spaces (the
// padding of a laid-out table) collapsed to one.
func containsSpaced(s, want string) bool {
	collapse := func(x string) string { return strings.Join(strings.Fields(x), " ") }
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(collapse(line), collapse(want)) {
			return true
		}
	}
	return false
}

// TestTextOnATerminal: colour and the width limit appear only when asked
// for (the CLI asks on a terminal); the plain form has no escape code.
func TestTextOnATerminal(t *testing.T) {
	var plain, term bytes.Buffer
	if err := WriteText(&plain, sampleReport()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("plain text holds an ANSI escape")
	}
	if err := WriteTextWith(&term, sampleReport(), TextOptions{Color: true, Width: 60}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(term.String(), "\x1b[") {
		t.Error("terminal text has no colour")
	}
	for _, line := range strings.Split(stripANSI(term.String()), "\n") {
		if n := len([]rune(line)); n > 60 {
			t.Errorf("line of %d columns on a 60-column terminal: %q", n, line)
		}
	}
	// Too wide for 60 columns, the tables fold or stack: nothing dropped.
	for _, want := range []string{"Servers", "S1Nunr6R", "server-2", "Raft groups (* leader) (1 rows, a block a row)", "1191202101440508490"} {
		if !strings.Contains(stripANSI(term.String()), want) {
			t.Errorf("terminal text at 60 columns lacks %q", want)
		}
	}
	first := func(s string) string { return strings.SplitN(s, "\n", 3)[1] }
	if first(plain.String()) != first(term.String()) {
		t.Errorf("summary line differs on a terminal: %q", first(term.String()))
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestCommandsStayPasteable: a remedy's command too wide for the width
// breaks outside quotes with " \" continuations, and its trailing comment
// goes on comment lines of its own (a backslash does not continue a
// comment: the rest would run as a command).
func TestCommandsStayPasteable(t *testing.T) {
	r := &Report{Findings: []Finding{{Code: "peer-id-corrupt", Severity: Critical, Message: "m",
		Remedy: "Remove it:\n  nats server cluster peer-remove -f cnr4t3eg   # or: nats request '$JS.API.SERVER.REMOVE' '{\"peer_id\":\"cnr4t3eg\"}'"}}}
	var b strings.Builder
	if err := WriteTextWith(&b, r, TextOptions{Width: 50}); err != nil {
		t.Fatal(err)
	}
	var cmd []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "peer-remove") || strings.Contains(l, "cnr4t3eg") || strings.HasPrefix(strings.TrimSpace(l), "#") {
			cmd = append(cmd, strings.TrimSpace(l))
		}
	}
	first := slices.IndexFunc(cmd, func(l string) bool { return strings.HasPrefix(l, "#") })
	if first < 1 || len(cmd) < first+2 {
		t.Fatalf("command lines %q: want the command, then its comment on two lines", cmd)
	}
	for i, l := range cmd[:first] {
		if cont := strings.HasSuffix(l, ` \`); cont != (i < first-1) {
			t.Errorf("command line %q: continuation %v", l, cont)
		}
	}
	for _, l := range cmd[first:] {
		if !strings.HasPrefix(l, "#") || strings.HasSuffix(l, `\`) {
			t.Errorf("comment line %q: not a comment of its own", l)
		}
	}
	if got := strings.Join(cmd, " "); !strings.Contains(got, `'{"peer_id":"cnr4t3eg"}'`) {
		t.Errorf("the quoted argument was broken: %q", got)
	}
}

// encoderJSON is what WriteJSON wrote before it streamed: one json.Encoder
// over the whole report.
func encoderJSON(t *testing.T, r *Report) []byte {
	t.Helper()
	r.Normalize()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWriteJSONAsEncoder: the streamed report is byte for byte what one
// json.Encoder writes, whichever top-level fields are set, empty or absent.
func TestWriteJSONAsEncoder(t *testing.T) {
	full := sampleReport()
	full.Bundle = `<a&b> "quoted" ünï`
	full.Diagnosis = []Cause{{Summary: "s <x>", Severity: Critical, Findings: []int{0}}}
	full.Checks = []CheckOutcome{{}}
	full.Coverage = &Coverage{Stores: 3, Unread: []UnreadFile{{Path: "p", Reason: "r"}}}
	full.Histories = []ClientHistory{{File: "h.edn"}}
	full.Notes = []string{"one", "two\nlines"}
	emptyLists := sampleReport()
	emptyLists.Diagnosis, emptyLists.Notes, emptyLists.Coverage = []Cause{}, []string{}, &Coverage{}
	for name, r := range map[string]*Report{"sample": sampleReport(), "empty": {}, "full": full, "empty lists": emptyLists} {
		t.Run(name, func(t *testing.T) {
			want := encoderJSON(t, r)
			var got bytes.Buffer
			if err := WriteJSON(&got, r); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("WriteJSON differs from json.Encoder:\n%s\nwant:\n%s", got.Bytes(), want)
			}
		})
	}
}

// TestWriteJSONFieldsAsEncoder: every top-level field of Report is one
// WriteJSON writes (exported, tagged, not embedded), so a field added later
// is written as encoding/json would.
func TestWriteJSONFieldsAsEncoder(t *testing.T) {
	rt := reflect.TypeFor[Report]()
	if len(reportFields) != rt.NumField() {
		t.Fatalf("WriteJSON writes %d of Report's %d fields", len(reportFields), rt.NumField())
	}
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		if f.Anonymous || f.Tag.Get("json") == "" {
			t.Errorf("Report.%s: an embedded or untagged field, which WriteJSON does not write as encoding/json does", f.Name)
		}
	}
}
