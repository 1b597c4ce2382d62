package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jsforensics/jsforensics/storeparse"
	"github.com/spf13/cobra"
)

// dump blk|index|meta|odat: print every record storeparse decodes from one
// filestore file. Works on broken files: problems are printed as lines.

type storeDumpOptions struct {
	json bool
	key  string
}

func (o *storeDumpOptions) flags(c *cobra.Command, keyHelp string) {
	c.Flags().BoolVar(&o.json, "json", false, "print JSON lines instead of text")
	c.Flags().StringVar(&o.key, "checksum-key", "", keyHelp)
}

// blkExitCodes says dump blk's exit codes in its help.
const blkExitCodes = `Exit codes: 0 every record reads whole; 1 a torn tail (the last record cut short, or
zero bytes after the last record, as a crash leaves a block: the records before it are
whole); 2 damage inside the block (a record failing its checksum, or bytes that do not
parse with more after them); 3 could not judge (the first record does not parse: encrypted
at rest without --key, or not a message block) or the tool failed. What was decoded is
printed in every case.`

func newDumpBlkCmd(stdout, stderr io.Writer) *cobra.Command {
	var o storeDumpOptions
	var jsKey keyFlags
	c := sizedDump("blk", "Print every record of a message block (msgs/N.blk)",
		func(c *cobra.Command) {
			o.flags(c, `checksum key "<stream or group>-<N>" (default: from the path)`)
			jsKey.add(c)
		},
		func(file string, f *os.File, size int64) error {
			r, done, err := unsealedBlock(file, f, jsKey)
			if err != nil {
				return err
			}
			defer done()
			key := o.key
			if key == "" {
				k, ok := storeparse.BlockKey(absPath(file))
				if !ok {
					if why := notABlock(file, r, size); why != "" {
						return errors.New(why)
					}
					return fmt.Errorf("cannot derive the checksum key from %q (the path is not <stream>/msgs/N.blk); give --checksum-key <stream>-<N>", file)
				}
				key = k
			}
			if err := storeparse.DumpBlock(stdout, file, r, size, key, o.dumpOpts()); err != nil {
				return err
			}
			return judgeBlock(stderr, file, r, size, key)
		})
	c.Long = "Print every record of a message block, with its offset, and go on past damage.\n\n" + blkExitCodes
	return c
}

// judgeBlock reads the block again for its verdict: the exit code of what
// the dump printed (blkExitCodes), said on stderr when not 0. A torn tail
// is told apart from damage inside, as the frame reader tells them.
func judgeBlock(stderr io.Writer, file string, r io.ReaderAt, size int64, key string) error {
	br, err := storeparse.NewBlockReader(file, r, size, key)
	if err != nil {
		fmt.Fprintf(stderr, "jsforensics: %s: could not judge: %v\n", file, err)
		return exitError{code: exitUnknown}
	}
	bad := 0
	var framing error
	for {
		rec, err := br.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && rec.Len == 0 {
			framing = err
			break
		}
		if err != nil {
			bad++
		}
	}
	switch {
	case framing != nil && br.PossiblyEncrypted():
		fmt.Fprintf(stderr, "jsforensics: %s: could not judge: the first record does not parse (encrypted at rest without --key, or not a message block)\n", file)
		return exitError{code: exitUnknown}
	case bad > 0 || framing != nil && !br.Torn():
		what := fmt.Sprintf("%d record(s) fail their checksum or do not parse", bad)
		if framing != nil && !br.Torn() {
			what += fmt.Sprintf("; unreadable from offset %d on", br.GoodEnd())
		}
		fmt.Fprintf(stderr, "jsforensics: %s: damaged inside: %s\n", file, what)
		return exitError{code: exitCritical}
	case framing != nil:
		fmt.Fprintf(stderr, "jsforensics: %s: a torn tail at offset %d: the last record is cut short, as a crash leaves a block; the %d bytes before it read whole\n",
			file, br.GoodEnd(), br.GoodEnd())
		return exitError{code: exitWarning}
	}
	return nil
}

// notABlock says why a file is not a message block when its first bytes
// cannot start one, with what they look like; "" when they can (or the
// file is empty, as a new block is).
func notABlock(file string, r io.ReaderAt, size int64) string {
	if size == 0 {
		return ""
	}
	br, err := storeparse.NewBlockReader(file, r, size, "")
	if err == nil {
		if rec, err := br.Next(); err == nil || rec.Len > 0 {
			return ""
		}
	}
	head := make([]byte, min(size, 512))
	n, _ := r.ReadAt(head, 0)
	return fmt.Sprintf("%s is not a message block: its first bytes are no record (%s)", file, looksLike(head[:n]))
}

// looksLike names what the first bytes of a file look like, cheaply: text
// (with its first line), a known archive or compression, or the bytes in
// hex.
func looksLike(head []byte) string {
	switch {
	case len(head) == 0:
		return "no bytes could be read"
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "it looks like gzip"
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return "it looks like a zip archive"
	case bytes.HasPrefix(head, []byte("\xff\x06\x00\x00sNaPpY")):
		return "it looks like an S2 or Snappy stream"
	case validText(head) && !bytes.ContainsFunc(head, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' }):
		line, _, _ := bytes.Cut(head, []byte("\n"))
		line = bytes.TrimSpace(line)
		if len(line) > 60 {
			line = append(line[:60:60], "…"...)
		}
		if bytes.HasPrefix(bytes.TrimSpace(head), []byte("{")) {
			return fmt.Sprintf("it looks like JSON: %q", line)
		}
		return fmt.Sprintf("it looks like text: %q", line)
	}
	return fmt.Sprintf("first bytes % x", head[:min(len(head), 16)])
}

// validText says whether head is UTF-8 but for a rune cut at its end.
func validText(head []byte) bool {
	for range utf8.UTFMax {
		if utf8.Valid(head) {
			return true
		}
		head = head[:max(len(head)-1, 0)]
	}
	return false
}

// nameFromPath finds the stream (or group) folder name above a file in
// <name>/msgs/index.db or <name>/meta.inf, and "<stream>/<consumer>" for
// <stream>/obs/<consumer>/meta.inf.
func nameFromPath(p string, depth int) string {
	parts := strings.FieldsFunc(filepath.ToSlash(p), func(r rune) bool { return r == '/' })
	if len(parts) < depth+1 {
		return ""
	}
	if depth == 1 && len(parts) >= 4 && parts[len(parts)-3] == "obs" {
		return parts[len(parts)-4] + "/" + parts[len(parts)-2]
	}
	return parts[len(parts)-1-depth]
}

func (o *storeDumpOptions) dumpOpts() storeparse.DumpOptions {
	return storeparse.DumpOptions{JSON: o.json, Headers: describeHeaders}
}

// keyOr is --key, or the name found depth folders above the file.
func (o *storeDumpOptions) keyOr(file string, depth int) string {
	if o.key != "" {
		return o.key
	}
	return nameFromPath(absPath(file), depth)
}

// absPath makes a relative path absolute, so the folders above a file given
// from inside its stream folder (dump blk 1.blk) can name its key.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func newDumpIndexCmd(stdout io.Writer) *cobra.Command {
	var o storeDumpOptions
	return fileDump("index", "Print a stream state file (msgs/index.db)",
		func(c *cobra.Command) { o.flags(c, "checksum key: the stream name (default: from the path)") },
		func(file string, data []byte) error {
			return storeparse.DumpIndex(stdout, file, data, o.keyOr(file, 2), o.dumpOpts())
		})
}

func newDumpMetaCmd(stdout io.Writer) *cobra.Command {
	var o storeDumpOptions
	return fileDump("meta", "Print a stream or consumer meta.inf and check meta.sum beside it",
		func(c *cobra.Command) {
			o.flags(c, `meta.sum key: stream name, or "<stream>/<consumer>" (default: from the path)`)
		},
		func(file string, data []byte) error {
			sum, _ := readSmall(filepath.Join(filepath.Dir(file), "meta.sum"))
			return storeparse.DumpMeta(stdout, file, data, sum, o.keyOr(file, 1), o.dumpOpts())
		})
}

func newDumpOdatCmd(stdout io.Writer) *cobra.Command {
	var o storeDumpOptions
	return fileDump("odat", "Print a consumer state file (obs/<consumer>/o.dat)",
		func(c *cobra.Command) { c.Flags().BoolVar(&o.json, "json", false, "print JSON lines instead of text") },
		func(file string, data []byte) error {
			return storeparse.DumpConsumerState(stdout, file, data, o.dumpOpts())
		})
}
