package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// maxDumpRead bounds the small files a dump reads whole (peers.idx, tav.idx,
// index.db, meta.inf, o.dat): far above any real one.
const maxDumpRead = 64 << 20

// fileDump builds `dump <use> FILE`: read FILE whole (bounded) and print it
// with dump. flags adds the subcommand's own flags.
func fileDump(use, short string, flags func(*cobra.Command), dump func(file string, data []byte) error) *cobra.Command {
	c := &cobra.Command{
		Use:   use + " FILE",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			data, err := readSmall(args[0])
			if err != nil {
				return err
			}
			return dump(args[0], data)
		},
	}
	flags(c)
	return c
}

// sizedDump builds `dump <use> FILE` for files read through io.ReaderAt
// (message blocks, WAL blocks, snapshots), so a large one is not loaded
// whole by the command.
func sizedDump(use, short string, flags func(*cobra.Command), dump func(file string, r *os.File, size int64) error) *cobra.Command {
	c := &cobra.Command{
		Use:   use + " FILE",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			return dump(args[0], f, fi.Size())
		},
	}
	flags(c)
	return c
}

// readSmall reads a file whole, refusing one larger than maxDumpRead.
func readSmall(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxDumpRead {
		return nil, fmt.Errorf("%s: %d bytes is more than the %d this dump reads", p, fi.Size(), maxDumpRead)
	}
	return io.ReadAll(io.LimitReader(f, maxDumpRead))
}
