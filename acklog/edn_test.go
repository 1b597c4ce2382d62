package acklog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

// publicReport is the history excerpt of the public Jepsen report
// (shared/incidents/002), lines 2022-2038, and its final read shortened.
const publicReport = `{:index 2022, :time 16109960074, :type :ok, :process 4, :f :publish, :value "4-63"}
{:index 2023, :time 16112167773, :type :invoke, :process 5, :f :publish, :value "5-63"}
{:index 2024, :time 16114235936, :type :info, :process :nemesis, :f :start-partition, :value [:isolated {"n1" #{"n2" "n5" "n4" "n3"}, "n2" #{"n1"}, "n5" #{"n1"}, "n4" #{"n1"}, "n3" #{"n1"}}]}
{:index 2025, :time 16114263329, :type :info, :process :nemesis, :f :kill, :value :majority}
{:index 2026, :time 16122492214, :type :invoke, :process 7, :f :publish, :value "7-63"}
{:index 2027, :time 16123329080, :type :ok, :process 7, :f :publish, :value "7-63"}
{:index 2037, :time 16179824530, :type :info, :process :nemesis, :f :kill, :value {"n1" :killed, "n3" :killed, "n2" :killed}}
{:index 2038, :time 16179871864, :type :info, :process :nemesis, :f :leave, :value "n4"}
{:index 15568, :time 319383763266, :type :invoke, :process 362, :f :fetch, :value nil}
{:index 15569, :time 319384992110, :type :ok, :process 362, :f :fetch, :value ["1-58" "4-63" "158-5" "158-6"]}
`

func readOps(t *testing.T, in string) ([]Op, []*LineError) {
	t.Helper()
	r := NewHistoryReader("history.edn", strings.NewReader(in))
	var ops []Op
	var bad []*LineError
	for {
		op, err := r.Next()
		if err == io.EOF {
			return ops, bad
		}
		var le *LineError
		if !errors.As(err, &le) {
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			ops = append(ops, op)
			continue
		}
		bad = append(bad, le)
	}
}

// TestHistoryReaderPublicReport: the report's own lines decode to their
// fields, nemesis values keep their text, the read its values.
func TestHistoryReaderPublicReport(t *testing.T) {
	ops, bad := readOps(t, publicReport)
	if len(bad) != 0 || len(ops) != 10 {
		t.Fatalf("%d ops, errors %v", len(ops), bad)
	}
	o := ops[5]
	if o.Index != 2027 || o.Time != 16123329080 || o.Type != "ok" || o.Process != "7" || o.F != "publish" || o.Value != "7-63" || o.ValueText || o.Line != 6 {
		t.Errorf("op 2027: %+v", o)
	}
	if p := ops[2]; p.Process != "nemesis" || p.F != "start-partition" || !p.ValueText || !strings.HasPrefix(p.Value, `[:isolated {"n1" #{"n2"`) || len(p.Values) != 0 {
		t.Errorf("partition: %+v", p)
	}
	if k := ops[6]; k.Value != `{"n1" :killed, "n3" :killed, "n2" :killed}` || len(k.Values) != 0 {
		t.Errorf("kill: %+v", k)
	}
	if f := ops[9]; f.F != "fetch" || !reflect.DeepEqual(f.Values, []string{"1-58", "4-63", "158-5", "158-6"}) {
		t.Errorf("fetch: %+v", f)
	}
	if ops[8].Value != "nil" || !ops[8].ValueText {
		t.Errorf("fetch invoke value %q", ops[8].Value)
	}
}

// TestHistoryReaderCases: syntax the decoder takes, and errors that name
// the line and offset and let reading go on.
func TestHistoryReaderCases(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		ops     int
		errs    []error // sentinels, in order
		errLine []int64
		check   func(t *testing.T, ops []Op)
	}{
		{name: "seq and error", in: `{:index 1, :time 5, :type :ok, :process 0, :f :publish, :value "0-1", :seq 17}` + "\n" +
			`{:index 2, :type :fail, :process 1, :f :publish, :value "1-1", :error [:api-error 10071 "wrong last sequence: 3"]}`,
			ops: 2, check: func(t *testing.T, ops []Op) {
				if !ops[0].HasSeq || ops[0].Seq != 17 || ops[1].Time != -1 || ops[1].Error != `[:api-error 10071 "wrong last sequence: 3"]` {
					t.Errorf("%+v", ops)
				}
			}},
		{name: "comments, discard, tags, escapes, N suffix", in: "; a comment\n" +
			`{:index 3N, #_ :ignored #_ 1 :type :ok, :process 2, :f :read, :value #{"a\"b" "\u00e9" 7 :k}, :when #inst "2026-01-01"}`,
			ops: 1, check: func(t *testing.T, ops []Op) {
				if ops[0].Index != 3 || !reflect.DeepEqual(ops[0].Values, []string{`a"b`, "é", "7"}) {
					t.Errorf("%+v", ops[0])
				}
			}},
		{name: "multi-line map", in: "{:index 1,\n :type :ok,\n :process 0, :f :publish, :value \"x\"}\n", ops: 1},
		{name: "not a map, then a good op", in: "[1 2]\n{:type :ok, :f :publish, :process 0, :value \"a\"}\n", ops: 1,
			errs: []error{binfmt.ErrFormat}, errLine: []int64{1}},
		{name: "string key", in: `{"type" :ok}` + "\n" + `{:type :ok, :f :publish, :process 0, :value "a"}`, ops: 1,
			errs: []error{binfmt.ErrFormat}, errLine: []int64{1}},
		{name: "bad integer", in: `{:index 1.5, :type :ok}` + "\n", errs: []error{binfmt.ErrFormat}, errLine: []int64{1}},
		{name: "seq 0", in: `{:seq 0}` + "\n", errs: []error{binfmt.ErrFormat}, errLine: []int64{1}},
		{name: "unbalanced", in: `{:value [1 2}` + "\n" + `{:type :ok}`, ops: 1, errs: []error{binfmt.ErrFormat}, errLine: []int64{1}},
		{name: "bad escape", in: `{:value "\q"}`, errs: []error{binfmt.ErrFormat}, errLine: []int64{1}},
		{name: "torn last op", in: `{:type :ok}` + "\n" + `{:index 9, :type :ok, :f :pub`, ops: 1,
			errs: []error{binfmt.ErrTruncated}, errLine: []int64{2}},
		{name: "too deep", in: "{:value " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "}\n{:type :ok}", ops: 1,
			errs: []error{binfmt.ErrFormat}, errLine: []int64{1}},
		{name: "string too long, next line read", in: `{:value "` + strings.Repeat("x", MaxToken+10) + `"}` + "\n{:type :ok}\n", ops: 1,
			errs: []error{binfmt.ErrTooLarge}, errLine: []int64{1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops, bad := readOps(t, c.in)
			if len(ops) != c.ops || len(bad) != len(c.errs) {
				t.Fatalf("%d ops, errors %v; want %d ops, %d errors", len(ops), bad, c.ops, len(c.errs))
			}
			for i, le := range bad {
				if !errors.Is(le, c.errs[i]) || le.Line != c.errLine[i] || le.File != "history.edn" || le.Offset < 0 || le.Offset > int64(len(c.in)) {
					t.Errorf("error %d: %v (line %d); want %v at line %d", i, le, le.Line, c.errs[i], c.errLine[i])
				}
			}
			if c.check != nil {
				c.check(t, ops)
			}
		})
	}
}

// TestHistoryReaderLongRead: a read returning more values than a line of
// the ack-log reader may hold (MaxLine) is decoded whole, streaming.
func TestHistoryReaderLongRead(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{:index 0, :type :ok, :process 0, :f :fetch, :value [`)
	for i := range 50000 {
		fmt.Fprintf(&b, `"%d-%d" `, i%5, i)
	}
	b.WriteString("]}\n")
	if b.Len() <= MaxLine {
		t.Fatalf("line of %d bytes", b.Len())
	}
	ops, bad := readOps(t, b.String())
	if len(bad) != 0 || len(ops) != 1 || len(ops[0].Values) != 50000 || ops[0].Values[49999] != "4-49999" {
		t.Fatalf("%d ops, errors %v", len(ops), bad)
	}
}

// TestReadHistory: publishes pair their :invoke with their completion by
// process; :ok, :fail, :info keep their outcome; reads mark the values
// they returned; nemesis ops are kept in order; the summary counts.
func TestReadHistory(t *testing.T) {
	in := `{:index 0, :time 10, :type :invoke, :process 0, :f :publish, :value "0-1"}
{:index 1, :time 11, :type :invoke, :process 1, :f :publish, :value "1-1"}
{:index 2, :time 12, :type :ok, :process 0, :f :publish, :value "0-1", :seq 1}
{:index 3, :time 13, :type :info, :process :nemesis, :f :kill, :value :all}
{:index 4, :time 14, :type :info, :process 1, :f :publish, :value "1-1", :error :timeout}
{:index 5, :time 15, :type :invoke, :process 0, :f :publish, :value "0-2"}
{:index 6, :time 16, :type :fail, :process 0, :f :publish, :value "0-2", :error :refused}
{:index 7, :time 17, :type :invoke, :process 2, :f :fetch, :value nil}
{:index 8, :time 18, :type :ok, :process 2, :f :fetch, :value ["0-1" "zz"]}
{:index 9, :time 19, :type :invoke, :process 3, :f :publish, :value "3-1"}
not edn
`
	s, err := Read("h.edn", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	h := s.History
	if s.Format != FormatEDN || h == nil || s.EDNPublishes != 1 || s.Bad != 1 || h.Ops != 10 || s.Lines != 11 {
		t.Fatalf("format %q history %v publishes %d bad %d lines %d", s.Format, h != nil, s.EDNPublishes, s.Bad, s.Lines)
	}
	want := map[string]Pub{
		"0-1": {Value: "0-1", Process: "0", Outcome: "ok", Invoke: 0, Done: 2, InvokeTime: 10, DoneTime: 12, Line: 3, Seq: 1, HasSeq: true, ReadBy: 7, ReadTime: 18},
		"1-1": {Value: "1-1", Process: "1", Outcome: "info", Invoke: 1, Done: 4, InvokeTime: 11, DoneTime: 14, Line: 5, ReadBy: -1, ReadTime: -1},
		"0-2": {Value: "0-2", Process: "0", Outcome: "fail", Invoke: 5, Done: 6, InvokeTime: 15, DoneTime: 16, Line: 7, ReadBy: -1, ReadTime: -1},
		"3-1": {Value: "3-1", Process: "3", Invoke: 9, Done: -1, InvokeTime: 19, DoneTime: -1, ReadBy: -1, ReadTime: -1},
	}
	if len(h.Pubs) != len(want) {
		t.Fatalf("%d pubs", len(h.Pubs))
	}
	for v, w := range want {
		if got := h.Pub(v); got == nil || *got != w {
			t.Errorf("%s: %+v, want %+v", v, got, w)
		}
	}
	if h.Reads != 1 || h.ReadValues != 2 || h.ReadUnknown != 1 || h.SeqOps != 1 || len(h.Nemesis) != 1 || h.LastNemesis() != 3 || h.FirstTime != 10 || h.LastTime != 19 {
		t.Errorf("%+v", h)
	}
}
