package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
)

func TestLines(t *testing.T) {
	var b bytes.Buffer
	w := New(&b, "a/1.blk")
	w.Record("record", 22, map[string]any{"seq": 5, "offset": 99, "file": "other", "record": "x"})
	w.Record("peer_state", NoOffset, struct {
		Size   int   `json:"cluster_size"`
		Offset int64 `json:"offset"`
	}{3, 7})
	w.Record("count", NoOffset, 12)
	ce := &binfmt.CorruptError{File: "a/1.blk", Offset: 40, Seq: 9, Structure: "block record", Err: binfmt.ErrChecksum}
	w.Error(fmt.Errorf("reading: %w", ce))
	w.Error(errors.New("no offset here"))
	w.ErrorAt(8, "name says term 2")
	w.Error(nil)
	if w.Err() != nil {
		t.Fatal(w.Err())
	}
	want := []string{
		`{"file":"a/1.blk","offset":22,"record":"record","seq":5}`,
		`{"file":"a/1.blk","offset":7,"record":"peer_state","cluster_size":3}`,
		`{"file":"a/1.blk","record":"count","value":12}`,
		`{"file":"a/1.blk","offset":40,"record":"error","seq":9,"structure":"block record","error":"reading: ` + ce.Error() + `"}`,
		`{"file":"a/1.blk","record":"error","error":"no offset here"}`,
		`{"file":"a/1.blk","offset":8,"record":"error","error":"name says term 2"}`,
	}
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), b.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, got[i], want[i])
		}
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestFirstWriteErrorKept(t *testing.T) {
	w := New(failWriter{}, "f")
	w.Record("a", 0, nil)
	w.Record("b", 0, nil)
	if w.Err() == nil || w.Err().Error() != "disk full" {
		t.Fatalf("err %v", w.Err())
	}
	w = New(&bytes.Buffer{}, "f")
	w.Record("bad", 0, map[string]any{"c": make(chan int)})
	if w.Err() == nil {
		t.Fatal("an unmarshalable field passed")
	}
}
