package analysis

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/seqset"
)

// seqSource is a salvageSource giving the messages of seqs in that order,
// with content data(i) for the i-th.
func seqSource(server string, seqs []uint64, data func(seq uint64) string) salvageSource {
	return func(send func(SalvagedMsg) error) error {
		for _, s := range seqs {
			if err := send(SalvagedMsg{Seq: s, Subject: "s", Data: []byte(data(s)), Server: server}); err != nil {
				return err
			}
		}
		return nil
	}
}

func same(seq uint64) string { return fmt.Sprint(seq) }

// TestMergeSourcesOrder: sources are merged by sequence, ties in source
// order, each source's own order kept.
func TestMergeSourcesOrder(t *testing.T) {
	var got []string
	err := mergeSources([]salvageSource{
		seqSource("a", []uint64{1, 3, 5, 5}, same),
		seqSource("b", []uint64{2, 3, 4}, same),
		seqSource("c", nil, same),
	}, func(m *SalvagedMsg) error {
		got = append(got, fmt.Sprintf("%d%s", m.Seq, m.Server))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(got, " "); s != "1a 2b 3a 3b 4b 5a 5a" {
		t.Errorf("merged %s", s)
	}
}

// TestMergeSourcesStops: an error of emit or of a source stops every
// source (none left blocked) and is returned.
func TestMergeSourcesStops(t *testing.T) {
	long := make([]uint64, 10000)
	for i := range long {
		long[i] = uint64(i + 1)
	}
	stopErr := errors.New("disk full")
	for name, tc := range map[string]struct {
		sources []salvageSource
		emit    func(*SalvagedMsg) error
		want    error
	}{
		"emit": {
			sources: []salvageSource{seqSource("a", long, same), seqSource("b", long, same)},
			emit: func(m *SalvagedMsg) error {
				if m.Seq == 100 {
					return stopErr
				}
				return nil
			},
			want: stopErr,
		},
		"source": {
			sources: []salvageSource{seqSource("a", long, same), func(send func(SalvagedMsg) error) error {
				if err := send(SalvagedMsg{Seq: 7}); err != nil {
					return err
				}
				return stopErr
			}},
			emit: func(*SalvagedMsg) error { return nil },
			want: stopErr,
		},
	} {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- mergeSources(tc.sources, tc.emit) }()
			select {
			case err := <-done:
				if !errors.Is(err, tc.want) {
					t.Errorf("got %v, want %v", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("merge did not stop")
			}
		})
	}
}

// TestRecentDigests: a sequence's copies with the same content count once,
// with other content each count and are a conflict; sequences beyond the
// window are forgotten.
func TestRecentDigests(t *testing.T) {
	r := newRecentDigests(2)
	steps := []struct {
		seq, d          uint64
		fresh, conflict bool
	}{
		{1, 10, true, false},
		{1, 10, false, false},
		{1, 11, true, true},
		{2, 20, true, false},
		{3, 30, true, false}, // forgets 1
		{1, 10, true, false},
		{3, 30, false, false},
	}
	for i, s := range steps {
		fresh, conflict := r.add(s.seq, s.d)
		if fresh != s.fresh || conflict != s.conflict {
			t.Errorf("step %d (%d,%d): fresh %v conflict %v, want %v %v", i, s.seq, s.d, fresh, conflict, s.fresh, s.conflict)
		}
	}
}

// TestWALSeqsEqualReplay: on every committed bundle, the WAL sequences the
// raft loader's one pass keeps per stream and server equal what replaying
// that WAL in order gives (walMessages, extract's reading), deletes and
// purges applied.
func TestWALSeqsEqualReplay(t *testing.T) {
	n := 0
	for _, fx := range fixtures(t) {
		b, err := bundle.Open(fx.forms[0], bundle.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		m := LoadWith(b, Options{})
		for _, st := range m.Streams {
			if st.Group == "" {
				continue
			}
			for _, srv := range m.Servers {
				dir := groupDir(b, srv, st.Group)
				if dir == "" {
					continue
				}
				var seqs seqset.Set
				if err := load.WALMessages(b.FS, dir, st.Group, nil, func(_ string, _ int64, _, _ uint64, sm *raftlog.StreamMsg) error {
					seqs.Add(sm.Seq())
					return nil
				}); err != nil {
					continue
				}
				n++
				if got, want := seqset.Format(st.WALSeqs[srv.ID], 0), seqs.String(); got != want {
					t.Errorf("%s: %s > %s on %s: one pass %s, replay %s", fx.name, st.Account, st.Name, srv.Name, got, want)
				}
			}
		}
		b.Close()
	}
	if n == 0 {
		t.Fatal("no stream group WAL in the bundles")
	}
}
