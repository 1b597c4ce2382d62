package html

import (
	"html/template"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/jsforensics/jsforensics/report"
)

var rehearsalPage = template.Must(template.New("rehearsal.tmpl").Funcs(template.FuncMap{
	"deref": func(h *bool) bool { return h != nil && *h },
	"held": func(h *bool) string {
		switch {
		case h == nil:
			return "not observable"
		case *h:
			return "held"
		}
		return "did not hold"
	},
}).ParseFS(files, "rehearsal.tmpl"))

// rehearsalView is a rehearsal laid out for its page: the servers' log
// lines on one time axis, a lane per server.
type rehearsalView struct {
	R      *report.Rehearsal
	Lanes  []rehearsalLane
	Events []rehearsalEvent
	Width  float64
	Height float64
	Start  string
	End    string
}

type rehearsalLane struct {
	Server string
	Y      float64
	Odd    bool
	State  string
}

type rehearsalEvent struct {
	Server string
	Level  string
	Text   string
	Time   string
	X, Y   float64
}

// logLine is a server log line with its time: "[pid] 2006/01/02 15:04:05.000000 [WRN] text".
var logLine = regexp.MustCompile(`^\[\d+\] (\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d+) \[(WRN|ERR|FTL|INF|DBG)\] (.*)$`)

// WriteRehearsal renders a rehearsal as one self-contained page: the
// servers, a timeline of their warning, error and fatal lines (a lane a
// server), the streams served, what was deleted and the statements held.
// DOM hooks: svg#rehearsal-timeline g.lane[data-server=NAME] circle[data-level=LEVEL].
func WriteRehearsal(w io.Writer, r *report.Rehearsal) error {
	v := rehearsalView{R: r, Width: 1000}
	const laneH, top, left = 28.0, 24.0, 180.0
	var lo, hi time.Time
	type ev struct {
		server, level, text string
		t                   time.Time
	}
	var evs []ev
	for _, s := range r.Servers {
		for _, l := range s.Lines {
			m := logLine.FindStringSubmatch(strings.TrimSpace(l))
			if m == nil {
				continue
			}
			t, err := time.Parse("2006/01/02 15:04:05.000000", m[1])
			if err != nil {
				continue
			}
			evs = append(evs, ev{s.Name, m[2], m[3], t})
			if lo.IsZero() || t.Before(lo) {
				lo = t
			}
			if t.After(hi) {
				hi = t
			}
		}
	}
	span := hi.Sub(lo).Seconds()
	if span <= 0 {
		span = 1
	}
	for i, s := range r.Servers {
		state := "running"
		if !s.Started {
			state = "not running"
		}
		v.Lanes = append(v.Lanes, rehearsalLane{Server: s.Name, Y: top + float64(i)*laneH, Odd: i%2 == 1, State: state})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].t.Before(evs[j].t) })
	lane := map[string]float64{}
	for _, l := range v.Lanes {
		lane[l.Server] = l.Y
	}
	for _, e := range evs {
		x := left + (v.Width-left-20)*e.t.Sub(lo).Seconds()/span
		v.Events = append(v.Events, rehearsalEvent{Server: e.server, Level: e.level, Text: e.text, Time: e.t.Format("15:04:05.000"), X: x, Y: lane[e.server] + laneH/2})
	}
	v.Height = top + float64(len(v.Lanes))*laneH + 24
	if !lo.IsZero() {
		v.Start, v.End = lo.Format("15:04:05"), hi.Format("15:04:05")
	}
	return rehearsalPage.Execute(w, v)
}
