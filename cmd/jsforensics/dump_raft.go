package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jsforensics/jsforensics/internal/analysis/load"
	"github.com/jsforensics/jsforensics/internal/binfmt"
	"github.com/jsforensics/jsforensics/internal/jsonl"
	"github.com/jsforensics/jsforensics/raftlog"
	"github.com/jsforensics/jsforensics/storeparse"
	"github.com/spf13/cobra"
)

// dump peers|tav|commit|snap|wal: print every record raftlog decodes from
// one file of a raft group folder (<store>/<sys account>/_js_/<group>/).
// Works on broken files: problems are printed as lines.

type raftDumpOptions struct {
	json  bool
	group string
}

func (o *raftDumpOptions) flags(c *cobra.Command) {
	c.Flags().BoolVar(&o.json, "json", false, "print JSON lines instead of text")
	c.Flags().StringVar(&o.group, "group", "", "raft group name, the checksum key (default: from the path)")
}

// groupOf returns --group or the group folder found in the path: the
// parent of peers.idx/tav.idx/commit.idx (up=1), of snapshots/ (up=2) or
// of msgs/ (up=2).
func (o *raftDumpOptions) groupOf(p string, up int) (string, error) {
	if o.group != "" {
		return o.group, nil
	}
	dir := filepath.Clean(p)
	for range up {
		dir = filepath.Dir(dir)
	}
	g := filepath.Base(dir)
	if raftlog.GroupKind(g) == "" {
		return "", fmt.Errorf("cannot tell the raft group from %q; give --group", p)
	}
	return g, nil
}

func (o *raftDumpOptions) dumpOpts() raftlog.DumpOptions { return raftlog.DumpOptions{JSON: o.json} }

// limitedDump builds `dump <use> FILE` for a small raft file read whole
// within raftlog's limit for it, the one analyze reads it with: a larger
// file is refused by both, never decoded by one only.
func limitedDump(use, short string, limit int64, flags func(*cobra.Command), dump func(file string, data []byte) error) *cobra.Command {
	return sizedDump(use, short, flags, func(file string, r *os.File, size int64) error {
		b, err := binfmt.ReadFull(file, r, size, limit)
		if err != nil {
			return err
		}
		return dump(file, b)
	})
}

func newDumpPeersCmd(stdout io.Writer) *cobra.Command {
	var o raftDumpOptions
	return limitedDump("peers", "Print a raft peer state file (peers.idx)", raftlog.MaxPeersIdxSize, o.flags,
		func(file string, b []byte) error { return raftlog.DumpPeerState(stdout, file, b, o.dumpOpts()) })
}

func newDumpTavCmd(stdout io.Writer) *cobra.Command {
	var o raftDumpOptions
	return limitedDump("tav", "Print a raft term and vote file (tav.idx)", raftlog.MaxTavSize, o.flags,
		func(file string, b []byte) error { return raftlog.DumpTermVote(stdout, file, b, o.dumpOpts()) })
}

func newDumpCommitCmd(stdout io.Writer) *cobra.Command {
	var o raftDumpOptions
	return limitedDump("commit", "Print a raft commit file (commit.idx, v2.15 _meta_)", raftlog.MaxCommitSize, o.flags,
		func(file string, b []byte) error {
			g, err := o.groupOf(file, 1)
			if err != nil {
				return err
			}
			return raftlog.DumpCommitIndex(stdout, file, g, b, o.dumpOpts())
		})
}

func newDumpSnapCmd(stdout io.Writer) *cobra.Command {
	var o raftDumpOptions
	return sizedDump("snap", "Print a raft snapshot (snapshots/snap.<term>.<index>) and its decoded data", o.flags,
		func(file string, r *os.File, size int64) error {
			g, err := o.groupOf(file, 2)
			if err != nil {
				return err
			}
			b, err := binfmt.ReadFull(file, r, size, raftlog.MaxSnapshotSize)
			if err != nil {
				return err
			}
			return raftlog.DumpSnapshot(stdout, file, filepath.Base(file), g, b, o.dumpOpts())
		})
}

func newDumpWALCmd(stdout io.Writer) *cobra.Command {
	var o raftDumpOptions
	var jsKey keyFlags
	return sizedDump("wal", "Print every append entry of a raft WAL block (_js_/<group>/msgs/N.blk)",
		func(c *cobra.Command) { o.flags(c); jsKey.add(c) },
		func(file string, f *os.File, size int64) error {
			g, err := o.groupOf(file, 2)
			if err != nil {
				return err
			}
			r, done, err := unsealedBlock(file, f, jsKey)
			if err != nil {
				return err
			}
			defer done()
			num, ok := strings.CutSuffix(filepath.Base(file), ".blk")
			if !ok {
				return fmt.Errorf("%q is not a msgs/N.blk file", file)
			}
			return dumpWAL(stdout, file, g, g+"-"+num, r, size, o.dumpOpts())
		})
}

// dumpWAL frames the block with storeparse and hands each record to
// raftlog's WAL record reader (through analysis.DecodeWALRecord, as analyze
// and extract do), which places the payload and decodes it; the framing
// reader's own problems are printed as they come.
func dumpWAL(w io.Writer, file, group, key string, r io.ReaderAt, size int64, o raftlog.DumpOptions) error {
	br, err := storeparse.NewBlockReader(file, r, size, key)
	if err != nil {
		return err
	}
	var jl *jsonl.Writer
	if o.JSON {
		jl = jsonl.New(w, file)
	}
	for {
		rec, err := br.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if jl != nil {
				jl.Error(err)
				err = jl.Err()
			} else {
				_, err = fmt.Fprintln(w, "! "+err.Error())
			}
			if err != nil {
				return err
			}
			if rec.Len == 0 { // framing error: the reader stops here
				return nil
			}
		}
		wr := load.DecodeWALRecord(file, &rec, br.Compressed())
		if err := raftlog.DumpWALRecord(w, group, wr, o); err != nil {
			return err
		}
	}
}
