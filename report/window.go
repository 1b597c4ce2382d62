package report

import (
	"fmt"
	"time"
)

// Window is --since and --until as given: each empty, a time (RFC 3339),
// or a duration before the report's last timeline event.
type Window struct {
	since, until windowBound
}

type windowBound struct {
	flag string
	at   time.Time     // an RFC 3339 time, or
	back time.Duration // a duration before the last event
	set  bool
}

// ParseWindow checks --since and --until before any work: each is an RFC
// 3339 time or a positive duration, and since is not after until when
// both are times.
func ParseWindow(since, until string) (Window, error) {
	var w Window
	var err error
	if w.since, err = parseBound("--since", since); err != nil {
		return Window{}, err
	}
	if w.until, err = parseBound("--until", until); err != nil {
		return Window{}, err
	}
	if w.since.set && w.until.set {
		if !w.since.at.IsZero() && !w.until.at.IsZero() && w.since.at.After(w.until.at) {
			return Window{}, fmt.Errorf("--since %s is after --until %s", since, until)
		}
		if w.since.at.IsZero() && w.until.at.IsZero() && w.since.back < w.until.back {
			return Window{}, fmt.Errorf("--since %s is after --until %s (both before the last event)", since, until)
		}
	}
	return w, nil
}

func parseBound(flag, s string) (windowBound, error) {
	if s == "" {
		return windowBound{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return windowBound{flag: flag, at: t, set: true}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return windowBound{}, fmt.Errorf("%s %q: give an RFC 3339 time (2026-11-30T01:40:00Z) or a duration before the bundle's last event (90s, 10m, 2h)", flag, s)
	}
	if d < 0 {
		return windowBound{}, fmt.Errorf("%s %s: a duration before the last event is not negative", flag, s)
	}
	return windowBound{flag: flag, back: d, set: true}, nil
}

// IsZero says the window keeps every time.
func (w Window) IsZero() bool { return !w.since.set && !w.until.set }

// Resolve turns the window into times for r: a duration counts back from
// r's last timeline event (a run's last). Nil means no bound.
func (w Window) Resolve(r *Report) (since, until *time.Time, err error) {
	if w.IsZero() {
		return nil, nil, nil
	}
	var last time.Time
	for _, e := range r.Timeline {
		t := e.Time
		if e.Until != nil {
			t = *e.Until
		}
		if t.After(last) {
			last = t
		}
	}
	resolve := func(b windowBound) (*time.Time, error) {
		switch {
		case !b.set:
			return nil, nil
		case !b.at.IsZero():
			return &b.at, nil
		case last.IsZero():
			return nil, fmt.Errorf("%s %s: the report has no dated event to count back from; give an RFC 3339 time", b.flag, b.back)
		}
		t := last.Add(-b.back)
		return &t, nil
	}
	if since, err = resolve(w.since); err != nil {
		return nil, nil, err
	}
	if until, err = resolve(w.until); err != nil {
		return nil, nil, err
	}
	if since != nil && until != nil && since.After(*until) {
		return nil, nil, fmt.Errorf("--since %s is after --until %s", since.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))
	}
	return since, until, nil
}

// inWindow says whether an event from t to end (a run's last, or t) lies
// at least partly in the selection's window.
func (s Selection) inWindow(t time.Time, end *time.Time) bool {
	if end == nil {
		end = &t
	}
	return (s.Since == nil || !end.Before(*s.Since)) && (s.Until == nil || !t.After(*s.Until))
}

// windowString names the window for the narrowing note.
func (s Selection) windowString() string {
	out := ""
	if s.Since != nil {
		out += " --since " + s.Since.UTC().Format(time.RFC3339Nano)
	}
	if s.Until != nil {
		out += " --until " + s.Until.UTC().Format(time.RFC3339Nano)
	}
	return out
}
