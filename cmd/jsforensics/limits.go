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
	f.Int64Var(&l.SpillBytes, "max-spill", bundle.DefaultSpillBytes, "most temporary space a .tar.gz read in place takes (its small files and checkpoints), whatever its size")
	f.Int64Var(&l.MaxTotalBytes, "max-unpacked", bundle.DefaultMaxTotalBytes, "most bytes unpacked from an archive, nested archives included")
	f.Int64Var(&l.MaxEntryBytes, "max-entry", bundle.DefaultMaxEntryBytes, "most bytes one archive entry may unpack to")
	f.IntVar(&l.MaxEntries, "max-entries", bundle.DefaultMaxEntries, "most archive entries (and files walked in a folder)")
	f.Int64Var(&l.MaxRatio, "max-ratio", bundle.DefaultMaxRatio, "refuse an entry expanding more than this many times its compressed size (past --ratio-floor bytes): a decompression bomb")
	f.Int64Var(&l.RatioFloor, "ratio-floor", bundle.DefaultRatioFloor, "entry size below which --max-ratio is not checked")
}
