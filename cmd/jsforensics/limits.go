package main

import (
	"github.com/spf13/cobra"

	"github.com/jsforensics/jsforensics/internal/bundle"
)

// addLimitFlags gives the archive limits of internal/bundle as flags; zero
// keeps each default.
func addLimitFlags(c *cobra.Command, l *bundle.Limits) {
	f := c.Flags()
	f.StringVar(&l.TempDir, "tmpdir", "", "temporary folder for archives (default $TMPDIR): the spill file of a .tar.gz read in place, or what is unpacked, whose free space is checked first")
	l.SpillBytes = bundle.DefaultSpillBytes
	f.Var(sizeValue{&l.SpillBytes}, "max-spill", "most temporary space a .tar.gz read in place takes (its small files and checkpoints), whatever its size (256MiB, 1GB or bytes)")
	l.MaxTotalBytes = bundle.DefaultMaxTotalBytes
	f.Var(sizeValue{&l.MaxTotalBytes}, "max-unpacked", "most bytes unpacked from an archive, nested archives included (e.g. 100GiB)")
	l.MaxEntryBytes = bundle.DefaultMaxEntryBytes
	f.Var(sizeValue{&l.MaxEntryBytes}, "max-entry", "most bytes one archive entry may unpack to (e.g. 1GiB)")
	f.IntVar(&l.MaxEntries, "max-entries", bundle.DefaultMaxEntries, "most archive entries (and files walked in a folder)")
	f.Int64Var(&l.MaxRatio, "max-ratio", bundle.DefaultMaxRatio, "refuse an entry expanding more than this many times its compressed size (past --ratio-floor bytes): a decompression bomb")
	l.RatioFloor = bundle.DefaultRatioFloor
	f.Var(sizeValue{&l.RatioFloor}, "ratio-floor", "entry size below which --max-ratio is not checked")
}
