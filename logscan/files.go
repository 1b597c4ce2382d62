package logscan

import (
	"bufio"
	"compress/gzip"
	"errors"
	"io"
	"path"
	"sort"
	"strings"
	"time"
)

// Decompress returns a reader of r's content, decompressing it when it
// starts with the gzip magic (0x1f 0x8b); otherwise it returns the bytes of r
// unchanged. Concatenated gzip members (as `cat a.gz b.gz` makes) are read
// in sequence. A truncated or corrupt gzip stream surfaces as a read error,
// which Scanner.Err reports as a *CorruptError after the lines that
// could be read.
func Decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	magic, err := br.Peek(2)
	if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, nil // short or not gzip: plain text
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, err
	}
	return zr, nil
}

func isChecksumErr(err error) bool {
	return errors.Is(err, gzip.ErrChecksum)
}

// rotationLayout is the suffix nats-server appends to a rotated log file
// (logger/log.go: "<file>.YYYY.MM.DD.HH.MM.SS.<9-digit ns>").
const rotationLayout = "2006.01.02.15.04.05.000000000"

// ParseRotatedName splits a rotated log file name into the name of the live
// file and the rotation time (local wall clock of the server, returned in
// UTC with the same digits). A trailing ".gz" is allowed. ok is false for a
// name without a rotation suffix.
func ParseRotatedName(name string) (base string, at time.Time, ok bool) {
	name = strings.TrimSuffix(name, ".gz")
	if len(name) < len(rotationLayout)+2 {
		return "", time.Time{}, false
	}
	cut := len(name) - len(rotationLayout)
	if name[cut-1] != '.' {
		return "", time.Time{}, false
	}
	t, err := time.Parse(rotationLayout, name[cut:])
	if err != nil {
		return "", time.Time{}, false
	}
	return name[:cut-1], t, true
}

// logrotateNumber splits logrotate's numbered backup name ("<file>.N",
// "<file>.N.gz"; .1 the newest) into the live file's name and N.
func logrotateNumber(name string) (base string, n int, ok bool) {
	name = strings.TrimSuffix(name, ".gz")
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 || dot == len(name)-1 || len(name)-dot > 5 {
		return "", 0, false
	}
	for _, c := range name[dot+1:] {
		if c < '0' || c > '9' {
			return "", 0, false
		}
		n = n*10 + int(c-'0')
	}
	return name[:dot], n, n > 0
}

// RotationBase is the live log file a file name belongs to: name without a
// rotation suffix (nats-server's or logrotate's numbered one, and ".gz").
func RotationBase(name string) string {
	if b, _, ok := ParseRotatedName(name); ok {
		return b
	}
	if b, _, ok := logrotateNumber(name); ok {
		return b
	}
	return strings.TrimSuffix(name, ".gz")
}

// RotationOrder returns names ordered for reading one server's log from the
// oldest line to the newest: the files of each live log name, rotated
// backups first (logrotate's numbered ones, highest number first, then
// nats-server's by rotation time), then the live file. Names are compared by
// their base name (path.Base) so a bundle's directory layout does not
// matter; different live names are kept apart and ordered by name.
func RotationOrder(names []string) []string {
	type item struct {
		name   string
		base   string
		at     time.Time
		number int // logrotate's .N
		backup bool
	}
	items := make([]item, 0, len(names))
	for _, n := range names {
		it := item{name: n, base: strings.TrimSuffix(path.Base(n), ".gz")}
		if b, at, ok := ParseRotatedName(path.Base(n)); ok {
			it.base, it.at, it.backup = b, at, true
		} else if b, num, ok := logrotateNumber(path.Base(n)); ok {
			it.base, it.number, it.backup = b, num, true
		}
		items = append(items, it)
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.base != b.base {
			return a.base < b.base
		}
		if a.backup != b.backup {
			return a.backup // backups before the live file
		}
		if a.number != b.number {
			return a.number > b.number // .2 is older than .1
		}
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		return a.name < b.name
	})
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.name
	}
	return out
}
