package releases

// UndecodableConsumer is what nats-server v does at start with a clustered
// consumer whose config holds a value it cannot decode at all (ack policy
// flow_control, API level 4, made on 2.14.10): "exits" (2.11.17: a nil
// pointer panic in processClusterCreateConsumer on every server, seen in
// the run downgrade-consumer-v2.14.10-to-v2.11.17) or "meta-stops"
// (2.12.15: "Error applying JetStream cluster entries: can not unmarshal",
// the meta layer applies nothing more and no meta leader is elected; every
// stream answers 10008 "JetStream system temporarily unavailable", run
// downgrade-consumer-v2.14.10-to-v2.12.15). known is false for every other
// release: no run on it.
func UndecodableConsumer(v string) (outcome string, known bool) {
	mi, pa, ok := SourceRead(v)
	if !ok {
		return "", false
	}
	switch {
	case mi == 11 && pa == 17:
		return "exits", true
	case mi == 12 && pa == 15:
		return "meta-stops", true
	}
	return "", false
}

// UndecodableConsumerValues are consumer config values a release below the
// level cannot decode (an enum value, not a field: decodeConfig's lenient
// decode fails too), with that level (setStaticConsumerMetadata, 2.14.10).
var UndecodableConsumerValues = map[string]map[string]int{
	"ack_policy": {"flow_control": 4},
}
