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

func init() {
	dumpCommands = append(dumpCommands, newDumpBlkCmd, newDumpIndexCmd, newDumpMetaCmd, newDumpOdatCmd)
}

func (o *storeDumpOptions) flags(c *cobra.Command, keyHelp string) {
	c.Flags().BoolVar(&o.json, "json", false, "print JSON lines instead of text")
	c.Flags().StringVar(&o.key, "key", "", keyHelp)
}

func newDumpBlkCmd(stdout io.Writer) *cobra.Command {
	var o storeDumpOptions
	c := &cobra.Command{
		Use:   "blk FILE",
		Short: "Print every record of a message block (msgs/N.blk)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			key := o.key
			if key == "" {
				k, ok := storeparse.BlockKey(args[0])
				if !ok {
					return fmt.Errorf("cannot derive the checksum key from %q; give --key <stream>-<N>", args[0])
				}
				key = k
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			return storeparse.DumpBlock(stdout, args[0], f, fi.Size(), key, storeparse.DumpOptions{JSON: o.json})
		},
	}
	o.flags(c, `checksum key "<stream or group>-<N>" (default: from the path)`)
	return c
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

func readSmall(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<20))
}

func newDumpIndexCmd(stdout io.Writer) *cobra.Command {
	var o storeDumpOptions
	c := &cobra.Command{
		Use:   "index FILE",
		Short: "Print a stream state file (msgs/index.db)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			data, err := readSmall(args[0])
			if err != nil {
				return err
			}
			key := o.key
			if key == "" {
				key = nameFromPath(args[0], 2)
			}
			return storeparse.DumpIndex(stdout, args[0], data, key, storeparse.DumpOptions{JSON: o.json})
		},
	}
	o.flags(c, "checksum key: the stream name (default: from the path)")
	return c
}

func newDumpMetaCmd(stdout io.Writer) *cobra.Command {
	var o storeDumpOptions
	c := &cobra.Command{
		Use:   "meta FILE",
		Short: "Print a stream or consumer meta.inf and check meta.sum beside it",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			data, err := readSmall(args[0])
			if err != nil {
				return err
			}
			sum, _ := readSmall(filepath.Join(filepath.Dir(args[0]), "meta.sum"))
			key := o.key
			if key == "" {
				key = nameFromPath(args[0], 1)
			}
			return storeparse.DumpMeta(stdout, args[0], data, sum, key, storeparse.DumpOptions{JSON: o.json})
		},
	}
	o.flags(c, `meta.sum key: stream name, or "<stream>/<consumer>" (default: from the path)`)
	return c
}

func newDumpOdatCmd(stdout io.Writer) *cobra.Command {
	var o storeDumpOptions
	c := &cobra.Command{
		Use:   "odat FILE",
		Short: "Print a consumer state file (obs/<consumer>/o.dat)",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			data, err := readSmall(args[0])
			if err != nil {
				return err
			}
			return storeparse.DumpConsumerState(stdout, args[0], data, storeparse.DumpOptions{JSON: o.json})
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON lines instead of text")
	return c
}
