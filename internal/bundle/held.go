package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
)

// A server log or ack log is told by its head (sniffFile) and then read
// whole by its loader. So that it is opened once, the sniff keeps the file
// open, with the head it read, until the loader takes it (OpenLog): a log is
// too large to hold, its open file is not. At most maxHeldLogs are kept
// open (a bundle holds a few logs per server); a log past the bound is
// opened again by its loader, which says so.

// maxHeldLogs bounds the files the sniff keeps open for OpenLog.
const maxHeldLogs = 64

// heldLogs are the logs the sniff left open, by path.
type heldLogs struct {
	mu    sync.Mutex
	files map[string]heldLog
	over  map[string]bool // logs not kept for want of room
}

type heldLog struct {
	f    fs.File
	head []byte // what the sniff read of f: f is positioned after it
}

// hold keeps f, of which head was read, for OpenLog; false when the bound is
// reached (the caller closes f).
func (h *heldLogs) hold(p string, f fs.File, head []byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.files) >= maxHeldLogs {
		if h.over == nil {
			h.over = map[string]bool{}
		}
		h.over[p] = true
		return false
	}
	if h.files == nil {
		h.files = map[string]heldLog{}
	}
	h.files[p] = heldLog{f: f, head: head}
	return true
}

// take hands over the held file of p, if any.
func (h *heldLogs) take(p string) (heldLog, bool, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hl, ok := h.files[p]
	delete(h.files, p)
	return hl, ok, h.over[p]
}

func (h *heldLogs) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for p, hl := range h.files {
		errs = append(errs, hl.f.Close())
		delete(h.files, p)
	}
	return errors.Join(errs...)
}

// LogFile is a log's whole content as OpenLog gives it.
type LogFile struct {
	io.Reader
	close func() error
	// Reopened says why the log was opened again rather than taken from
	// the sniff ("" when it was not, or was taken by an earlier reader).
	Reopened string
}

// Close closes the file.
func (l *LogFile) Close() error { return l.close() }

// OpenLog opens the server log or ack log p (one of Logs or AckLogs) for
// reading from its start: the file its sniff opened, the head it read
// first, when the sniff still holds it (the log is then opened once per
// analysis); else it is opened again through FS.
func (b *Bundle) OpenLog(p string) (*LogFile, error) {
	hl, ok, over := b.held.take(p)
	if ok {
		return &LogFile{Reader: io.MultiReader(bytes.NewReader(hl.head), hl.f), close: hl.f.Close}, nil
	}
	f, err := b.FS.Open(p)
	if err != nil {
		return nil, err
	}
	lf := &LogFile{Reader: f, close: f.Close}
	if over {
		lf.Reopened = fmt.Sprintf("opened a second time: the bundle holds more than the %d logs its inventory keeps open", maxHeldLogs)
	}
	return lf, nil
}
