package report

// MaxHistoryBuckets bounds the buckets of one history's plot, and
// MaxBucketValues the lost values one bucket names: a history of any length
// gives a report of at most MaxHistoryBuckets*MaxBucketValues values.
const (
	MaxHistoryBuckets = 200
	MaxBucketValues   = 12
	// MaxNemesisWindows bounds the nemesis windows of one history; the rest
	// are counted in NemesisOmitted.
	MaxNemesisWindows = 500
)

// ClientHistory is one client history of the bundle (a Jepsen EDN history)
// as the public Jepsen report plots it: the publishes' outcomes over the
// test's time, and the nemesis windows. Added type.
type ClientHistory struct {
	// File is the history, relative to the bundle.
	File string `json:"file"`
	// Account and Stream are the stream its acknowledged publishes were
	// compared with; absent when none was.
	Account string `json:"account,omitempty"`
	Stream  string `json:"stream,omitempty"`
	// Judged says whether the acknowledged publishes were compared with the
	// stores (as the acked-lost check compares them); when false, Reason
	// says why, and every acknowledged publish counts as ok, none as lost.
	Judged bool   `json:"judged"`
	Reason string `json:"reason,omitempty"`
	// StartNs is the start of the first bucket and BucketNs each bucket's
	// width, in nanoseconds of the history's :time (since the test began).
	StartNs  int64 `json:"start_ns"`
	BucketNs int64 `json:"bucket_ns"`
	// Buckets are consecutive, the first at StartNs; a publish counts in
	// the bucket of its completion's :time (its invoke's when it never
	// completed).
	Buckets []HistoryBucket `json:"buckets"`
	// Totals are the counts over all buckets, plus Untimed.
	Totals HistoryCounts `json:"totals"`
	// Untimed are publishes with no :time, in Totals but in no bucket.
	Untimed int `json:"untimed,omitempty"`
	// Capped: the history published more values than were kept
	// (acklog.MaxHistoryPubs); those past the bound are in no count.
	Capped bool `json:"capped,omitempty"`
	// Nemesis are the nemesis operations as windows, oldest first.
	Nemesis []NemesisWindow `json:"nemesis,omitempty"`
	// NemesisOmitted counts the nemesis operations not shown as windows
	// (past MaxNemesisWindows, or past what the history decoder keeps).
	NemesisOmitted int64 `json:"nemesis_omitted,omitempty"`
}

// HistoryCounts are publishes by outcome.
type HistoryCounts struct {
	// OK: acknowledged (:ok) and held (or not judged).
	OK int `json:"ok"`
	// Lost: acknowledged (:ok) and held by no copy: the acked-lost finding's values.
	Lost int `json:"lost"`
	// Unknown: :info or never completed; never counted lost.
	Unknown int `json:"unknown"`
	// Fail: :fail, not applied, never expected.
	Fail int `json:"fail"`
}

// HistoryBucket is one slice of a history's time.
type HistoryBucket struct {
	HistoryCounts
	// LostValues name the bucket's lost values (with their sequence when
	// known), at most MaxBucketValues; LostOmitted counts the rest.
	LostValues  []string `json:"lost_values,omitempty"`
	LostOmitted int      `json:"lost_omitted,omitempty"`
}

// NemesisWindow is one nemesis fault from the operation that began it to
// the one that healed it (a partition, a kill until its start, a member
// leaving until it joins), or one operation that is no fault with an end
// (an instant).
type NemesisWindow struct {
	// Kind is window (a fault and its heal), open (a fault the history
	// never heals: it lasts to the history's end) or instant.
	Kind string `json:"kind" jsonschema:"enum=window,enum=open,enum=instant"`
	// F is the fault's :f (kill, start-partition, leave); Value its value,
	// the completion's when it has one (EDN text, bounded).
	F     string `json:"f"`
	Value string `json:"value,omitempty"`
	// StartIndex and StartNs are the fault's first operation's :index and
	// :time (-1 when absent).
	StartIndex int64 `json:"start_index"`
	StartNs    int64 `json:"start_ns"`
	// StopF, StopValue, StopIndex and StopNs are the healing operation's
	// (its last op: the heal's completion) in a window; absent otherwise.
	StopF     string `json:"stop_f,omitempty"`
	StopValue string `json:"stop_value,omitempty"`
	StopIndex *int64 `json:"stop_index,omitempty"`
	StopNs    *int64 `json:"stop_ns,omitempty"`
}
