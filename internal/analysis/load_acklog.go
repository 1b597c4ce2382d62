package analysis

import "github.com/jsforensics/jsforensics/acklog"

// ackLogs reads every ack log the bundle holds (found by content).
func (l *loader) ackLogs() {
	for _, p := range l.b.AckLogs {
		f, err := l.b.FS.Open(p)
		if err != nil {
			l.note("ack log %s: %v", p, err)
			continue
		}
		sum, err := acklog.Read(p, f)
		f.Close()
		if err != nil {
			l.note("ack log %s: read up to line %d: %v", p, sum.Lines, err)
		}
		l.m.AckLogs = append(l.m.AckLogs, sum)
	}
}
