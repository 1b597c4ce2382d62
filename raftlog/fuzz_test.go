package raftlog_test

import (
	"encoding/binary"
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/natsfmt"
	"github.com/jsforensics/jsforensics/raftlog"
)

// Fuzz targets, each seeded from the raft files of the generator's bundles. Every error must be
// a *binfmt.CorruptError with an offset inside the input.

func checkErr(t *testing.T, err error, n int) {
	t.Helper()
	if err == nil {
		return
	}
	var ce *binfmt.CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a CorruptError", err)
	}
	if ce.Offset < 0 || ce.Offset > int64(n) {
		t.Fatalf("error offset %d outside the %d input bytes: %v", ce.Offset, n, err)
	}
}

type seeds struct {
	peers, tav, commit, entries, snaps, metaSnaps, streamSnaps, consumerSnaps, ops [][]byte
	// records: whole WAL records (frame, payload, checksum) as stored.
	records [][]byte
}

func collectSeeds(f *testing.F) *seeds {
	s := &seeds{}
	for _, sc := range allServers(f) {
		for _, g := range groupsOf(f, sc) {
			s.peers = append(s.peers, readFS(f, sc.js, path.Join(g, "peers.idx")))
			s.tav = append(s.tav, readFS(f, sc.js, path.Join(g, "tav.idx")))
			if b, err := fsReadFile(sc, path.Join(g, "commit.idx")); err == nil {
				s.commit = append(s.commit, b)
			}
			if file, _, _ := snapshotOf(sc.js, g); file != "" {
				b := readFS(f, sc.js, file)
				s.snaps = append(s.snaps, b)
				if sn, err := raftlog.DecodeSnapshot(file, g, b); err == nil {
					switch {
					case g == "_meta_":
						s.metaSnaps = append(s.metaSnaps, sn.Data)
					case strings.HasPrefix(g, "S-"):
						s.streamSnaps = append(s.streamSnaps, sn.Data)
					default:
						s.consumerSnaps = append(s.consumerSnaps, sn.Data)
					}
				}
			}
			recs, _ := readWAL(f, sc.js, g)
			for _, r := range recs {
				s.entries = append(s.entries, r.rec.Data)
				if r.raw != nil {
					s.records = append(s.records, r.raw)
				}
				if r.ae == nil {
					continue
				}
				for _, e := range r.ae.Entries {
					if e.Type == raftlog.EntryNormal {
						s.ops = append(s.ops, e.Data)
					}
				}
			}
		}
	}
	return s
}

func addAll(f *testing.F, bs [][]byte) {
	if len(bs) == 0 {
		f.Fatal("no seed")
	}
	for _, b := range bs {
		f.Add(b)
	}
}

func FuzzPeerState(f *testing.F) {
	addAll(f, collectSeeds(f).peers)
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := raftlog.DecodePeerState("peers.idx", b)
		checkErr(t, err, len(b))
		if err == nil {
			if 8+8*len(ps.Peers) > len(b) {
				t.Fatalf("%d peers from %d bytes", len(ps.Peers), len(b))
			}
			ps.Check()
		}
	})
}

func FuzzTermVote(f *testing.F) {
	s := collectSeeds(f)
	addAll(f, s.tav)
	addAll(f, s.commit)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := raftlog.DecodeTermVote("tav.idx", b)
		checkErr(t, err, len(b))
		_, err = raftlog.DecodeCommitIndex("commit.idx", "_meta_", b)
		checkErr(t, err, len(b))
	})
}

func FuzzAppendEntry(f *testing.F) {
	addAll(f, collectSeeds(f).entries)
	f.Fuzz(func(t *testing.T, b []byte) {
		ae, err := raftlog.DecodeAppendEntry("1.blk", 0, b)
		checkErr(t, err, len(b))
		if ae == nil {
			return
		}
		for _, e := range ae.Entries {
			if e.DataOffset+int64(len(e.Data)) > int64(len(b)) {
				t.Fatalf("entry data [%d:+%d] beyond %d bytes", e.DataOffset, len(e.Data), len(b))
			}
			switch e.Type {
			case raftlog.EntryNormal:
				_, err := raftlog.DecodeOp("1.blk", e.DataOffset, e.Data)
				checkErr(t, err, len(b))
			case raftlog.EntryPeerState:
				_, err := e.PeerState("1.blk")
				checkErr(t, err, len(b))
			}
		}
	})
}

// FuzzWALRecord frames one record as the block reader does (natsfmt's
// record frame) and hands it to the WAL record reader: the payload lies
// inside the record, between the frame's subject and headers and the
// checksum, and every entry and op offset inside the payload.
func FuzzWALRecord(f *testing.F) {
	addAll(f, collectSeeds(f).records)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < natsfmt.RecordHeaderLen {
			return
		}
		h := natsfmt.ParseRecordHeader(b)
		if !h.Framed() || h.Len > int64(len(b)) {
			return
		}
		rec := b[:h.Len]
		body := rec[natsfmt.RecordHeaderLen+h.SubjectLen : h.Len-natsfmt.ChecksumLen]
		hlen := 0
		if h.HasHeaders {
			hlen = int(binary.LittleEndian.Uint32(body))
			body = body[4:]
			if hlen > len(body) {
				return // the block reader reports it and gives no payload place
			}
			body = body[hlen:]
		}
		const at = 1000 // the record's offset in its block
		fr := raftlog.WALFrame{Offset: at, Len: int(h.Len), Seq: h.Seq, TS: h.TS, SubjectLen: h.SubjectLen,
			HasHeaders: h.HasHeaders, HeaderLen: hlen, Erased: h.Erased, Tombstone: h.Tombstone}
		r := raftlog.DecodeWALRecord("1.blk", fr, body)
		end := int64(at) + h.Len - natsfmt.ChecksumLen
		if r.PayloadOffset < at+natsfmt.RecordHeaderLen || r.PayloadOffset+int64(len(body)) != end {
			t.Fatalf("payload at %d+%d, record [%d, %d) with its checksum at %d", r.PayloadOffset, len(body), at, at+h.Len, end)
		}
		inPayload := func(what string, off int64, n int) {
			if off < r.PayloadOffset || off+int64(n) > end {
				t.Fatalf("%s at %d+%d outside the payload [%d, %d)", what, off, n, r.PayloadOffset, end)
			}
		}
		if r.Err != nil {
			var ce *binfmt.CorruptError
			if !errors.As(r.Err, &ce) {
				t.Fatalf("error %v is not a CorruptError", r.Err)
			}
			inPayload("error", ce.Offset, 0)
		}
		if (h.Tombstone || h.Erased) && (r.Entry != nil || r.Err != nil) {
			t.Fatal("a tombstone or erased record decoded as an append entry")
		}
		if r.Entry == nil {
			if len(r.Ops) > 0 {
				t.Fatal("ops without an append entry")
			}
			return
		}
		for _, e := range r.Entry.Entries {
			inPayload("entry", e.Offset, 5+len(e.Data))
		}
		last := -1
		for _, op := range r.Ops {
			if op.Entry <= last || op.Entry >= len(r.Entry.Entries) || r.Entry.Entries[op.Entry].Type != raftlog.EntryNormal {
				t.Fatalf("op of entry %d (after %d)", op.Entry, last)
			}
			last = op.Entry
			inPayload("op", op.Offset, len(r.Entry.Entries[op.Entry].Data))
			if op.Op == nil && op.Err == nil {
				t.Fatal("an op neither decoded nor failed")
			}
		}
		r.IndexMismatch()
	})
}

func FuzzSnapshot(f *testing.F) {
	addAll(f, collectSeeds(f).snaps)
	f.Fuzz(func(t *testing.T, b []byte) {
		sn, err := raftlog.DecodeSnapshot("snap.1.1", "_meta_", b)
		checkErr(t, err, len(b))
		if sn != nil && sn.DataOffset+int64(len(sn.Data)) > int64(len(b)) {
			t.Fatal("data beyond input")
		}
	})
}

func FuzzOp(f *testing.F) {
	addAll(f, collectSeeds(f).ops)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := raftlog.DecodeOp("1.blk", 0, b)
		checkErr(t, err, len(b))
	})
}

func FuzzMetaSnapshot(f *testing.F) {
	addAll(f, collectSeeds(f).metaSnaps)
	f.Fuzz(func(t *testing.T, b []byte) {
		// A block that truly decodes to hundreds of MiB (a decompression
		// bomb, allowed up to natsfmt.MaxDecompressed) only makes the fuzzer slow;
		// the limit itself is FuzzS2Block's subject.
		if claim, n := binary.Uvarint(b); n > 0 && claim > 1<<20 {
			t.Skip()
		}
		sas, err := raftlog.DecodeMetaSnapshot("snap", 0, b)
		checkErr(t, err, len(b))
		if err == nil {
			raftlog.Replay(sas, nil)
		}
	})
}

func FuzzStreamSnapshot(f *testing.F) {
	addAll(f, collectSeeds(f).streamSnaps)
	f.Fuzz(func(t *testing.T, b []byte) {
		ss, err := raftlog.DecodeStreamSnapshot("snap", 0, b)
		checkErr(t, err, len(b))
		if ss != nil {
			ss.DeletedCount()
			for i := range ss.Deleted {
				if ss.Deleted[i].Kind != "run" {
					ss.Deleted[i].Ranges()
				}
			}
		}
	})
}
