package main

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jsforensics/jsforensics/internal/bundle"
	"github.com/jsforensics/jsforensics/report"
)

// Every --stream (analyze, render, extract) is read by
// report.ParseStreamName: ACCOUNT/NAME, 'ACCOUNT > NAME', or a bare NAME
// when one account of the bundle has it (report.ResolveStream).

// checkStreamFlags refuses a --stream that is no stream name, before any
// work.
func checkStreamFlags(names []string) error {
	for _, n := range names {
		if _, err := report.ParseStreamName(n); err != nil {
			return fmt.Errorf("--stream: %w", err)
		}
	}
	return nil
}

// resolveStreamFlags gives each --stream of analyze or render as the
// report names it ("ACCOUNT > NAME"), a bare name with the one account of
// rep that has it (among accounts, when --account narrows them). A bare
// name two accounts have is an error; a name no stream has is kept as
// given, for the report to say it matched nothing and list the streams
// (report.Selection).
func resolveStreamFlags(rep *report.Report, names, accounts []string) ([]string, error) {
	known := rep.KnownStreams()
	if len(accounts) > 0 {
		var in []report.StreamRef
		for _, k := range known {
			for _, a := range accounts {
				if k.Account == a {
					in = append(in, k)
				}
			}
		}
		known = in
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		ref, err := report.ParseStreamName(n)
		if err != nil {
			return nil, fmt.Errorf("--stream: %w", err)
		}
		got, err := report.ResolveStream(ref, known)
		switch {
		case errors.Is(err, report.ErrNoSuchStream):
			out = append(out, n)
		case err != nil:
			return nil, fmt.Errorf("--stream %s: %w", n, err)
		default:
			out = append(out, got.String())
		}
	}
	return out, nil
}

// extractStream resolves extract's --stream: a bare name against the
// streams the bundle's stores hold a folder of (its inventory, nothing
// decoded).
func extractStream(path string, lim bundle.Limits, name string) (report.StreamRef, error) {
	ref, err := report.ParseStreamName(name)
	if err != nil {
		return report.StreamRef{}, fmt.Errorf("--stream: %w", err)
	}
	if ref.Account != "" {
		return ref, nil
	}
	known, err := storedStreams(path, lim)
	if err != nil {
		return report.StreamRef{}, err
	}
	got, err := report.ResolveStream(ref, known)
	if errors.Is(err, report.ErrNoSuchStream) {
		// extract also reads a stream whose folders are gone, named in full.
		return report.StreamRef{}, fmt.Errorf("--stream %s: %w (for a stream no store holds a folder of any more, give ACCOUNT/NAME, and --group when nothing names its raft group)", name, err)
	}
	if err != nil {
		return report.StreamRef{}, fmt.Errorf("--stream %s: %w", name, err)
	}
	return got, nil
}

// noStreamAnswer adds to extract's "no stream … in the bundle" the streams
// the stores hold; other errors pass as they are.
func noStreamAnswer(err error, path string, lim bundle.Limits) error {
	if err == nil || !strings.HasPrefix(err.Error(), "no stream ") {
		return err
	}
	known, lerr := storedStreams(path, lim)
	if lerr != nil || len(known) == 0 {
		return err
	}
	return fmt.Errorf("%w; the stores hold: %s", err, report.StreamList(known))
}

// storedStreams are the streams the bundle's stores hold a folder of,
// sorted and once each (a folder being deleted, ".NAME", left out).
func storedStreams(path string, lim bundle.Limits) ([]report.StreamRef, error) {
	b, err := bundle.Open(path, lim)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	seen := map[report.StreamRef]bool{}
	var out []report.StreamRef
	for _, st := range b.Stores {
		for _, a := range st.Accounts {
			for _, s := range a.Streams {
				ref := report.StreamRef{Account: a.Name, Name: s}
				if strings.HasPrefix(s, ".") || seen[ref] {
					continue
				}
				seen[ref] = true
				out = append(out, ref)
			}
		}
	}
	slices.SortFunc(out, func(a, b report.StreamRef) int {
		return cmp.Or(strings.Compare(a.Account, b.Account), strings.Compare(a.Name, b.Name))
	})
	return out, nil
}
