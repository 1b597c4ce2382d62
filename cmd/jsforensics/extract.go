package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/internal/analysis"
	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
	"github.com/jsforensics/jsforensics/seqset"
)

type extractOptions struct {
	stream string // as report.ParseStreamName reads it
	server string
	group  string
	output string
	force  bool
	limits bundle.Limits
	keys   keyFlags // jetstream keys (crypt.go); never printed
}

func newExtractCmd(stdout, stderr io.Writer) *cobra.Command {
	var o extractOptions
	c := &cobra.Command{
		Use:   "extract BUNDLE --stream STREAM -o FILE",
		Short: "Write every message of a stream the bundle still holds as JSON lines, ready to republish",
		Long: `Extract reads a stream's messages from every copy's blocks (records past a damaged
one included) and from the stream group's raft WAL, and writes them as JSON lines sorted
by sequence: seq, subject, header (the NATS header block as stored) and headers (parsed),
data (base64), time, and source (the server whose copy or WAL it came from, file, offset,
from "blocks" or "raft-wal", raft term and index). It writes what the servers would serve:
a sequence that any copy's tombstones or index.db, the stream's raft snapshot or its
group's raft WAL on any server records deleted or purged is left out (with --server too:
a copy that lost its tombstones holds deleted messages as live ones), and a raft-wal
message past what the group's servers agreed on is marked "uncommitted": true. The
summary on stderr counts what was left out and why. A sequence whose copies hold
different content is written once per content. The bundle is never written to.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(args[0], stdout, stderr)
		},
	}
	c.Flags().StringVar(&o.stream, "stream", "", "the stream: ACCOUNT/NAME ('$G/ORDERS'), 'ACCOUNT > NAME', or NAME when one account has it")
	c.Flags().StringVar(&o.server, "server", "", "read only this server's copy and WAL (what any copy or WAL records deleted is still left out)")
	c.Flags().StringVar(&o.group, "group", "", "the stream's raft group (S-…) when nothing in the bundle names it")
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the messages to this file, - for stdout (required; never inside the bundle)")
	c.Flags().BoolVar(&o.force, "force", false, "replace the output file if it exists")
	o.keys.add(c)
	addLimitFlags(c, &o.limits)
	_ = c.MarkFlagRequired("stream")
	_ = c.MarkFlagRequired("output")
	return c
}

// extractedMsg is one output line.
type extractedMsg struct {
	Seq     uint64              `json:"seq"`
	Subject string              `json:"subject"`
	Header  string              `json:"header,omitempty"`
	Headers map[string][]string `json:"headers,omitempty"`
	Data    []byte              `json:"data"` // base64
	Time    time.Time           `json:"time"`
	// Uncommitted: a raft-wal message past what the group agreed on.
	Uncommitted bool            `json:"uncommitted,omitempty"`
	Source      extractedSource `json:"source"`
}

type extractedSource struct {
	Server string `json:"server"`
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	From   string `json:"from"`
	Term   uint64 `json:"term,omitempty"`
	Index  uint64 `json:"index,omitempty"`
}

func (o *extractOptions) run(path string, stdout, stderr io.Writer) error {
	if _, err := report.ParseStreamName(o.stream); err != nil {
		return fmt.Errorf("--stream: %w", err)
	}
	guard, err := newInputGuard(path)
	if err != nil {
		return err
	}
	if err := guard.refuse("-o", o.output); err != nil {
		return err
	}
	if err := guard.refuseDir("--tmpdir", o.limits.TempDir); err != nil {
		return err
	}
	if err := checkOutput("-o", o.output, o.force); err != nil {
		return err
	}
	keys, err := o.keys.resolve()
	if err != nil {
		return err
	}
	ref, err := extractStream(path, o.limits, o.stream)
	if err != nil {
		return err
	}
	acc, name := ref.Account, ref.Name
	f, err := createOutput(o.output)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f.writerOr(stdout))
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	counts := map[string]int{}
	// Each message is written as the merge gives it: nothing is held.
	s, err := analysis.Extract(path, o.limits, keys, analysis.SalvageOptions{Account: acc, Stream: name, Server: o.server, Group: o.group},
		func(m *analysis.SalvagedMsg) error {
			counts[m.From]++
			line := extractedMsg{Seq: m.Seq, Subject: m.Subject, Header: string(m.Header), Headers: headersByName(parseHeaders(m.Header)),
				Data: m.Data, Time: time.Unix(0, m.TS).UTC(), Uncommitted: m.Uncommitted,
				Source: extractedSource{Server: m.Server, File: m.File, Offset: m.Offset, From: m.From, Term: m.Term, Index: m.Index}}
			if line.Data == nil {
				line.Data = []byte{}
			}
			return enc.Encode(line)
		})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if f != nil {
		// No half-written file left to be taken for the whole stream.
		err = f.finish(err)
	}
	if err != nil {
		return noStreamAnswer(err, path, o.limits)
	}
	fmt.Fprintf(stderr, "wrote %d message(s) of %s > %s to %s: %d from blocks, %d from a raft WAL only",
		s.Written, acc, name, o.output, counts[analysis.FromBlocks], counts[analysis.FromRaftWAL])
	if s.Conflicts > 0 {
		fmt.Fprintf(stderr, "; %d sequence(s) with different content on different copies, each written", s.Conflicts)
	}
	if s.Unreadable > 0 {
		fmt.Fprintf(stderr, "; %d record(s) failing their checksum left out", s.Unreadable)
	}
	if n := s.LeftOutCount(); n > 0 {
		fmt.Fprintf(stderr, "; %d sequence(s) the servers would not serve left out", n)
	}
	if s.Uncommitted > 0 {
		fmt.Fprintf(stderr, "; %d message(s) past what the servers agreed on, marked uncommitted", s.Uncommitted)
	}
	fmt.Fprintln(stderr)
	for _, l := range s.LeftOut {
		fmt.Fprintf(stderr, "left out: %d sequence(s), %s: %s\n", l.Seqs.Count(), l.Why, seqset.Format(l.Seqs, 20))
	}
	switch {
	case s.Sealed > 0:
		fmt.Fprintf(stderr, "%d copy(ies) encrypted at rest could not be read: give the servers' jetstream key (--key or $%s)\n", s.Sealed, keyEnv)
	case s.Written == 0:
		fmt.Fprintf(stderr, "nothing of %s > %s is left in the bundle: no copy's blocks hold a message and no raft WAL of its group does\n", acc, name)
	}
	for _, n := range s.Notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	return nil
}
