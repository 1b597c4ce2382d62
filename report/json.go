package report

import (
	"encoding/json"
	"io"
)

// Normalize fills the top-level lists so that the JSON holds [] rather than
// null for an empty section, as the contract shows every section.
func (r *Report) Normalize() {
	if r.Schema == "" {
		r.Schema = Schema
	}
	if r.Servers == nil {
		r.Servers = []Server{}
	}
	if r.Groups == nil {
		r.Groups = []Group{}
	}
	for i := range r.Groups {
		if r.Groups[i].Views == nil {
			r.Groups[i].Views = []GroupView{}
		}
		if r.Groups[i].History == nil {
			r.Groups[i].History = []HistoryEvent{}
		}
		for j := range r.Groups[i].Views {
			if r.Groups[i].Views[j].Peers == nil {
				r.Groups[i].Views[j].Peers = []string{}
			}
		}
	}
	if r.Streams == nil {
		r.Streams = []Stream{}
	}
	if r.Coverage != nil && r.Coverage.ChecksJudged == nil {
		r.Coverage.ChecksJudged = []string{}
	}
	for i := range r.Streams {
		if r.Streams[i].OnDisk == nil {
			r.Streams[i].OnDisk = []OnDisk{}
		}
	}
	if r.Timeline == nil {
		r.Timeline = []TimelineEvent{}
	}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	for i := range r.Findings {
		for j := range r.Findings[i].Views {
			v := &r.Findings[i].Views[j]
			if v.Servers == nil {
				v.Servers = []string{}
			}
			if v.Peers == nil { // a meta view known only from /jsz lists no peers
				v.Peers = []string{}
			}
		}
	}
	for i := range r.Servers {
		if r.Servers[i].Sources == nil {
			r.Servers[i].Sources = []string{}
		}
	}
}

// WriteJSON writes the report as the v1 contract, indented.
func WriteJSON(w io.Writer, r *Report) error {
	r.Normalize()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
