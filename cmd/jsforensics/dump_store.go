package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

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

func newDumpBlkCmd(stdout io.Writer) *cobra.Command {
	var o storeDumpOptions
	var jsKey keyFlags
	return sizedDump("blk", "Print every record of a message block (msgs/N.blk)",
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
					return fmt.Errorf("cannot derive the checksum key from %q; give --checksum-key <stream>-<N>", file)
				}
				key = k
			}
			return storeparse.DumpBlock(stdout, file, r, size, key, o.dumpOpts())
		})
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
