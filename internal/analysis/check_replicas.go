package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/jsforensics/jsforensics/report"
)

// maxRangesShown bounds the ranges listed in one finding's message; the
// finding's ranges field holds them all.
const maxRangesShown = 6

var checkReplicaDivergence = Check{
	Code:        "replica-divergence",
	Severity:    report.Critical,
	Description: "replicas hold different content under the same sequence",
	Skip:        noReplicas,
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, st := range m.Streams {
			copies := withDigests(st)
			if len(copies) < 2 {
				continue
			}
			// For every sequence held by two copies or more, the groups of
			// servers that agree on its content.
			seqs := map[uint64]bool{}
			for _, c := range copies {
				for s := range c.Digests {
					seqs[s] = true
				}
			}
			var diverged []uint64
			patterns := map[string][]uint64{} // "n1,n3 | n2,n4" -> seqs
			for s := range seqs {
				by := map[uint64][]string{}
				for _, c := range copies {
					if d, ok := c.Digests[s]; ok {
						by[d] = append(by[d], c.Server)
					}
				}
				if len(by) < 2 {
					continue
				}
				diverged = append(diverged, s)
				var sides []string
				for _, srv := range by {
					sort.Strings(srv)
					sides = append(sides, strings.Join(srv, ","))
				}
				sort.Strings(sides)
				k := strings.Join(sides, " | ")
				patterns[k] = append(patterns[k], s)
			}
			if len(diverged) == 0 {
				continue
			}
			sort.Slice(diverged, func(i, j int) bool { return diverged[i] < diverged[j] })
			ranges := toRanges(diverged)
			var servers []string
			for _, c := range copies {
				servers = append(servers, c.Server)
			}
			f := report.Finding{
				Account: st.Account, Stream: st.Name, Seq: diverged[0], Ranges: ranges, Servers: servers,
				Message: fmt.Sprintf("replicas of %s > %s hold different messages under the same %d sequence(s) (%s): acknowledged writes were lost or overwritten without an error",
					st.Account, st.Name, len(diverged), rangesText(ranges)),
				Remedy: divergenceRemedy(st),
			}
			for _, k := range sortedKeys(patterns) {
				f.Evidence = append(f.Evidence, fmt.Sprintf("sequences %s: content differs between %s", rangesText(toRanges(sortedSeqs(patterns[k]))), k))
			}
			if len(st.AssignedTo) > 0 {
				f.Evidence = append(f.Evidence, fmt.Sprintf("the meta state assigns the stream to %s; copies elsewhere are from earlier replicas", strings.Join(st.AssignedTo, ", ")))
			}
			out = append(out, f)
		}
		return out
	},
}

var checkReplicaGap = Check{
	Code:        "replica-gap",
	Severity:    report.Critical,
	Description: "a replica lacks sequences that another replica of the same stream holds and no deletion explains",
	Skip:        noReplicas,
	Run: func(p *Pass) []report.Finding {
		m := p.Model
		var out []report.Finding
		for _, st := range m.Streams {
			var copies []*StreamCopy
			for _, c := range withDigests(st) {
				// Only current replicas must hold everything; a removed
				// server's copy stops where it left.
				if len(st.AssignedTo) == 0 || slices.Contains(st.AssignedTo, c.Server) {
					copies = append(copies, c)
				}
			}
			if len(copies) < 2 {
				continue
			}
			for _, c := range copies {
				var lacks []uint64
				holders := map[string]bool{}
				for _, o := range copies {
					if o == c {
						continue
					}
					for s := range o.Digests {
						if s < c.FirstSeq || s > c.LastSeq {
							continue // outside what this copy covers: a lag, not a gap
						}
						if _, ok := c.Digests[s]; !ok {
							lacks = append(lacks, s)
							holders[o.Server] = true
						}
					}
				}
				if len(lacks) == 0 {
					continue
				}
				lacks = sortedSeqs(dedupe(lacks))
				ranges := toRanges(lacks)
				out = append(out, report.Finding{
					Account: st.Account, Stream: st.Name, Server: c.Server, Ranges: ranges, Seq: lacks[0],
					Servers: sortedKeys(holders),
					Message: fmt.Sprintf("%s's replica of %s > %s lacks %d sequence(s) (%s) that %s hold(s), inside its own first..last range, with no deletion recorded",
						c.Server, st.Account, st.Name, len(lacks), rangesText(ranges), strings.Join(sortedKeys(holders), ", ")),
					Remedy: fmt.Sprintf("peer-remove deletes %s's copy and rebuilds it from the leader: first copy %s's stream folder out and read the missing messages from the other replicas (jsforensics dump blk FILE --json on their blocks) before any of them is removed; then let %s's replica be rebuilt (nats stream cluster peer-remove %s %s)", c.Server, c.Server, c.Server, st.Name, c.Server),
				})
			}
		}
		return out
	},
}

func withDigests(st *Stream) []*StreamCopy {
	var out []*StreamCopy
	for _, c := range st.Copies {
		if c.Digests != nil {
			out = append(out, c)
		}
	}
	return out
}

func divergenceRemedy(st *Stream) string {
	return fmt.Sprintf("Stop writes to %s and keep every copy (copy each server's stream folder out) before any restart or peer-remove: the replica elected next overwrites the others. Decide which copy is authoritative from the publishers' acknowledgements, read the differing messages from each copy with `jsforensics dump blk`, then rebuild the other replicas from it (scale to R1 on the chosen server and back up).", st.Name)
}

func toRanges(seqs []uint64) []report.Range {
	var out []report.Range
	for _, s := range seqs {
		if n := len(out); n > 0 && out[n-1].Last+1 == s {
			out[n-1].Last = s
			continue
		}
		out = append(out, report.Range{First: s, Last: s})
	}
	return out
}

func rangesText(rs []report.Range) string {
	var parts []string
	for i, r := range rs {
		if i == maxRangesShown {
			parts = append(parts, fmt.Sprintf("and %d more ranges", len(rs)-i))
			break
		}
		if r.First == r.Last {
			parts = append(parts, fmt.Sprint(r.First))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", r.First, r.Last))
		}
	}
	return strings.Join(parts, ", ")
}

func sortedSeqs(in []uint64) []uint64 {
	out := append([]uint64(nil), in...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func dedupe(in []uint64) []uint64 {
	seen := map[uint64]bool{}
	var out []uint64
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// noReplicas skips the replica checks where no stream has two copies.
func noReplicas(p *Pass) string {
	for _, st := range p.Model.Streams {
		if len(st.Copies) > 1 {
			return ""
		}
	}
	return "no stream has copies on two servers in the bundle"
}
