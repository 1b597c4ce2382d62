package main

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// barProgress draws the analysis' progress on a terminal: one bar per
// stage, with the stage's name, files done of its files, bytes done of its
// bytes, the rate and the time left (progressbar computes both).
type barProgress struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	name  string
	files int
	bytes bool // the bar counts bytes, else files
}

// newProgress gives a progress display on stderr when it is a terminal and
// quiet is not set; otherwise nil: nothing is drawn.
func newProgress(stderr io.Writer, quiet bool) *barProgress {
	if quiet || !terminalOf(stderr).is {
		return nil
	}
	return &barProgress{w: stderr}
}

func (p *barProgress) Stage(name string, files int, bytes int64) {
	p.close()
	p.name, p.files, p.bytes = name, files, bytes > 0
	total := bytes
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(p.describe(0)),
		progressbar.OptionSetWidth(24),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionClearOnFinish(),
	}
	if p.bytes {
		opts = append(opts, progressbar.OptionShowBytes(true), progressbar.OptionShowCount())
	} else {
		total = int64(max(files, 1))
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("items"))
	}
	p.bar = progressbar.NewOptions64(total, opts...)
}

func (p *barProgress) describe(files int) string {
	if p.files > 0 && p.bytes {
		return fmt.Sprintf("%s %d/%d files", p.name, files, p.files)
	}
	return p.name
}

func (p *barProgress) Advance(files int, bytes int64) {
	if p.bar == nil {
		return
	}
	if p.files > 0 && p.bytes {
		p.bar.Describe(p.describe(files))
	}
	if p.bytes {
		_ = p.bar.Set64(bytes)
	} else {
		_ = p.bar.Set(files)
	}
}

// close clears the current stage's bar from the terminal.
func (p *barProgress) close() {
	if p != nil && p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
		p.bar = nil
	}
}
